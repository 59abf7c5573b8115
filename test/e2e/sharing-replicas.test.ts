/**
 * A team library in shared mode (issue 50): two replicas on PostgreSQL 15 and Ceph RGW behind haproxy, the built
 * binary, HTTP and the operator commands only. Alice shares a project with a group; Bob, in the group, finds its
 * document through the REST API, the CLI, the web and MCP, each on a replica other than the one Alice used; Alice
 * unshares, and Bob's very next search on the other replica no longer finds it. Offboarding: `users disable` makes
 * Bob's key, OAuth token and web session fail at their next request on every replica; `users delete
 * --transfer-to` keeps every document.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addClient, getCode, pkce, post } from '../auth/oauth-flow.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { type Replica, startTopology, type Topology, topologyUnavailable } from '../helpers/topology.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { httpClient } from '../mcp/mcp-client.js';
import { WebClient } from '../server/web-client.js';

const SKIP = topologyUnavailable();
const MINUTE = 60_000;
const REDIRECT = 'http://127.0.0.1:9/callback';
const QUERY = 'which lighthouse keeps the quartzite ledger';
const TEXT = 'The harbour office keeps the quartzite ledger of the northern lighthouse, updated every Tuesday.\n';

/** `api()` and the OAuth helpers take a daemon; any base URL will do. */
const at = (url: string) => ({ url }) as Daemon;

describe.skipIf(SKIP !== null)(`a team library on two replicas behind haproxy${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let topo: Topology;
  let alice: TestUser;
  let bob: TestUser;
  const r = (i: number) => topo.replicas[i]!;
  const operator = async (...args: string[]) => {
    const res = await runCli(args, { env: topo.env });
    expect(res.code, res.stderr).toBe(0);
    return res;
  };
  const finds = async (replica: Replica, token: string, documentId: string): Promise<boolean> => {
    const res = await api(at(replica.url), '/api/v1/search', { token, body: { query: QUERY, limit: 10 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results.some((x: { document: { id: string } }) => x.document.id === documentId);
  };

  beforeAll(async () => {
    topo = await startTopology({ replicas: 2 });
    const daemon = { ...r(0).daemon, env: topo.env };
    await addUser(daemon); // the first account: the admin
    alice = await addUser(daemon);
    bob = await addUser(daemon);
  }, 10 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const replica of topo.replicas) process.stderr.write(`--- replica ${replica.index}, last log lines:\n${replica.logs().split('\n').slice(-40).join('\n')}\n`);
  });
  afterAll(async () => {
    await topo?.stop();
  }, 5 * MINUTE);

  it("shares with a group: Bob finds it through REST, the CLI, the web and MCP; unshared, his next search on the other replica doesn't", async () => {
    await operator('groups', 'create', 'harbour');
    await operator('groups', 'add', 'harbour', bob.email);
    const project = await api(at(r(0).url), '/api/v1/projects', { token: alice.apiKey, body: { name: 'Harbour handbook' } });
    expect(project.status).toBe(201);
    const up = await uploadFiles(at(r(0).url), alice.apiKey, [{ name: 'ledger.txt', bytes: Buffer.from(TEXT) }], { projectId: project.body.id, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0].id as string;
    expect(await finds(r(1), bob.apiKey, doc)).toBe(false);

    const shared = await api(at(r(0).url), `/api/v1/projects/${project.body.id}/members`, { token: alice.apiKey, body: { group: 'harbour', role: 'viewer' } });
    expect(shared.status).toBe(201);
    expect(shared.body).toMatchObject({ kind: 'group', group: 'harbour', role: 'viewer' });

    // REST, on the other replica.
    expect(await finds(r(1), bob.apiKey, doc)).toBe(true);
    const listed = await api(at(r(1).url), '/api/v1/projects', { token: bob.apiKey });
    expect(listed.body.projects.find((p: { id: string }) => p.id === project.body.id)).toMatchObject({ role: 'viewer', owner: alice.email });
    // The CLI, through haproxy.
    const cli = await runCli(['search', QUERY, '--json'], { env: cliEnv(at(topo.lb.url), { DOCSEARCH_TOKEN: bob.apiKey }) });
    expect(cli.code, cli.stderr).toBe(0);
    expect((JSON.parse(cli.stdout) as { results: { document: { id: string } }[] }).results.some((x) => x.document.id === doc)).toBe(true);
    // The web: signed in on one replica, searching on the other.
    const web = new WebClient(r(0).daemon);
    expect((await web.login(bob.email, bob.password)).status).toBe(302);
    const page = await web.get(`${r(1).url}/search?q=${encodeURIComponent(QUERY)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`/documents/${doc}`);
    expect((await web.get(`${r(1).url}/projects`)).text).toContain('Shared with me');
    // MCP, on the other replica.
    const mcp = await httpClient(`${r(1).url}/mcp`, bob.apiKey);
    try {
      const res = await mcp.callTool({ name: 'search', arguments: { query: QUERY } });
      expect(res.isError).toBeFalsy();
      expect(JSON.stringify(res.structuredContent)).toContain(doc);
      const projects = await mcp.callTool({ name: 'list_projects', arguments: {} });
      expect((projects.structuredContent as { projects: { id: string; role: string }[] }).projects.find((p) => p.id === project.body.id)?.role).toBe('viewer');
    } finally {
      await mcp.close();
    }
    // A viewer reads, and changes nothing: the document is still there, as it was, on the other replica too.
    expect((await api(at(r(1).url), `/api/v1/documents/${doc}`, { method: 'DELETE', token: bob.apiKey })).status).toBe(403);
    const still = await api(at(r(0).url), `/api/v1/documents/${doc}`, { token: alice.apiKey });
    expect(still.status).toBe(200);
    expect(still.body.trashed_at ?? null).toBeNull();

    // Unshared on replica 0: the next request on replica 1 already sees it (nothing about access is cached).
    const members = await api(at(r(0).url), `/api/v1/projects/${project.body.id}/members`, { token: alice.apiKey });
    const group = members.body.members.find((m: { kind: string }) => m.kind === 'group');
    expect((await api(at(r(0).url), `/api/v1/projects/${project.body.id}/members/${group.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    // Every surface of the other replica, each at its next request (no time bound: the very next one must not find it).
    expect(await finds(r(1), bob.apiKey, doc)).toBe(false);
    expect((await api(at(r(1).url), `/api/v1/documents/${doc}`, { token: bob.apiKey })).status).toBe(404);
    const after = await web.get(`${r(1).url}/search?q=${encodeURIComponent(QUERY)}`);
    expect(after.status).toBe(200);
    expect(after.text).not.toContain(`/documents/${doc}`);
    const mcpAfter = await httpClient(`${r(1).url}/mcp`, bob.apiKey);
    try {
      const res = await mcpAfter.callTool({ name: 'search', arguments: { query: QUERY } });
      expect(res.isError).toBeFalsy();
      expect(JSON.stringify(res.structuredContent)).not.toContain(doc);
    } finally {
      await mcpAfter.close();
    }
  }, 5 * MINUTE);

  it("disabling Bob fails his key, OAuth token and web session at their next request on every replica; deleting an account keeps every document", async () => {
    const app = await addClient({ ...r(0).daemon, env: topo.env }, { name: 'Offboarding', redirectUris: [REDIRECT] });
    const web = new WebClient(r(0).daemon);
    expect((await web.login(bob.email, bob.password)).status).toBe(302);
    const { verifier, challenge } = pkce();
    const code = await getCode(web, { client_id: app.clientId, redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await post(at(r(1).url), '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret!, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(token.status).toBe(200);
    const credentials = [bob.apiKey, token.body.access_token as string];
    for (const replica of topo.replicas) {
      for (const credential of credentials) expect((await api(at(replica.url), '/api/v1/projects', { token: credential })).status).toBe(200);
      expect((await web.get(`${replica.url}/projects`)).status).toBe(200);
    }

    const disabled = await operator('users', 'disable', bob.email, '--yes');
    expect(disabled.stderr).toMatch(/disabled/);
    for (const replica of topo.replicas) {
      for (const credential of credentials) expect((await api(at(replica.url), '/api/v1/projects', { token: credential })).status).toBe(401);
      const page = await web.get(`${replica.url}/projects`);
      expect(page.status).toBe(302);
      expect(page.location).toMatch(/^\/login/);
    }
    expect((await post(at(r(0).url), '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: token.body.refresh_token, client_id: app.clientId, client_secret: app.clientSecret! })).status).toBe(400);
    const login = await new WebClient(r(1).daemon).login(bob.email, bob.password);
    expect(login.status).toBe(403); // the right password, a disabled account: told so, not signed in

    // Carol leaves: her own project goes to Alice with its documents; what she uploaded into Alice's stays.
    const carol = await addUser({ ...r(0).daemon, env: topo.env });
    const hers = await api(at(topo.lb.url), '/api/v1/projects', { token: carol.apiKey, body: { name: 'Carol notes' } });
    const mine = await api(at(topo.lb.url), '/api/v1/projects', { token: alice.apiKey, body: { name: 'Shared drafts' } });
    expect((await api(at(topo.lb.url), `/api/v1/projects/${mine.body.id}/members`, { token: alice.apiKey, body: { email: carol.email, role: 'editor' } })).status).toBe(201);
    const own = await uploadFiles(at(topo.lb.url), carol.apiKey, [{ name: 'own.txt', bytes: Buffer.from('Carol keeps her own notes here.\n') }], { projectId: hers.body.id, query: '?wait=true' });
    const into = await uploadFiles(at(topo.lb.url), carol.apiKey, [{ name: 'draft.txt', bytes: Buffer.from('A draft Carol wrote for the shared folder.\n') }], { projectId: mine.body.id, query: '?wait=true' });
    expect((await runCli(['users', 'delete', carol.email, '--yes'], { env: topo.env })).code).not.toBe(0); // she owns documents: refused
    await operator('users', 'delete', carol.email, '--transfer-to', alice.email, '--yes');
    expect((await api(at(r(1).url), '/api/v1/projects', { token: carol.apiKey })).status).toBe(401);
    const moved = await api(at(r(1).url), `/api/v1/projects/${hers.body.id}`, { token: alice.apiKey });
    expect(moved.body).toMatchObject({ owner: alice.email, role: 'owner', document_count: 1 });
    for (const id of [own.body.documents[0].id, into.body.documents[0].id]) {
      const got = await api(at(r(1).url), `/api/v1/documents/${id}`, { token: alice.apiKey });
      expect(got.status).toBe(200);
      expect(got.body.uploaded_by).toBeNull(); // the uploader's account is gone; the document stays
    }
  }, 5 * MINUTE);
});
