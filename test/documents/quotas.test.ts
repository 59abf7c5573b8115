/**
 * Quotas through every surface of one daemon started with `--quota-default 24KiB`: past an account's quota (or a
 * project's, set by an admin) an upload is refused with a 507 `quota_exceeded` that names the quota, through REST,
 * the CLI, the web's upload form, MCP's add_document and a folder source (which pauses with the reason); nothing
 * accepted before is lost, and an admin's higher quota lets the same upload in.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from '../server/web-client.js';

const KIB = 1024;
/** A text file of about `kib` KiB whose words differ from every other one's (no duplicate bytes). */
const text = (tag: string, kib: number) => Buffer.from(`${`Notes on ${tag}: the quarterly figures, the orchard and the lighthouse. `.repeat(Math.ceil((kib * KIB) / 40))}`.slice(0, kib * KIB));

describe('quotas', () => {
  const dirs = tempDirs('docsearch-quotas');
  let root: string;
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--quota-default', '24KiB', '--source-roots', root, '--sources-min-interval', '1'] });
    admin = await addUser(d, { email: 'admin@example.com' });
    alice = await addUser(d, { email: 'alice@example.com' });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  const NAMED = /over the quota of alice@example\.com \(24 KiB: 16 KiB used, this upload 16 KiB\)/;

  it('refuses an upload past the account quota on every surface, naming it, and loses nothing accepted', async () => {
    const first = await uploadFiles(d, alice.apiKey, [{ name: 'first.txt', bytes: text('first', 16) }], { query: '?wait=true' });
    expect(first.body.documents.map((x: { status: string }) => x.status)).toEqual(['ready']);

    // REST: 507, the quota named, with its figures.
    const rest = await uploadFiles(d, alice.apiKey, [{ name: 'second.txt', bytes: text('second', 16) }]);
    expect(rest.status).toBe(507);
    expect(rest.body.error.code).toBe('quota_exceeded');
    expect(rest.body.error.message).toMatch(NAMED);
    expect(rest.body.error.details.quota).toEqual({ scope: 'user', limit_bytes: 24 * KIB, used_bytes: 16 * KIB, upload_bytes: 16 * KIB });

    // CLI: exits non-zero, saying why.
    const file = join(dirs.make('cli'), 'third.txt');
    writeFileSync(file, text('third', 16));
    const cli = await runCli(['upload', file], { env: cliEnv(d, { DOCSEARCH_TOKEN: alice.apiKey }), timeoutMs: 120_000 });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(NAMED);

    // The web's upload form (no script): the project page says so.
    const web = await loggedIn(d, alice);
    const projects = await api(d, '/api/v1/projects', { token: alice.apiKey });
    const project = projects.body.projects.find((p: { is_default: boolean }) => p.is_default).id as string;
    await web.get(`/projects/${project}`);
    const form = new FormData();
    form.append('_csrf', web.csrf);
    form.append('file', new Blob([text('fourth', 16)], { type: 'text/plain' }), 'fourth.txt');
    const page = await web.request('POST', `/projects/${project}/upload`, form);
    expect(page.status).toBe(303);
    const shown = (await web.get(page.location!)).text;
    expect(shown).toMatch(/Nothing was uploaded: Over the quota of alice@example\.com \(24 KiB: 16 KiB used, this upload 16 KiB\)/);

    // MCP's add_document: a tool error naming the quota.
    const mcp = await httpClient(d, alice.apiKey);
    try {
      expect(await callError(mcp, 'add_document', { filename: 'fifth', text: text('fifth', 16).toString() })).toMatch(/over the quota of alice@example\.com/);
    } finally {
      await mcp.close();
    }

    // Nothing accepted was lost, and nothing refused was kept.
    const docs = await api(d, '/api/v1/documents?limit=50', { token: alice.apiKey });
    expect(docs.body.documents.map((x: { filename: string; status: string }) => [x.filename, x.status])).toEqual([['first.txt', 'ready']]);

    // Admin → Users and the admin API show the usage against the quota; an admin's higher quota lets it in.
    const wire = await api(d, '/api/v1/admin/users/alice@example.com', { token: admin.apiKey });
    expect(wire.body).toMatchObject({ usage: { documents: 1, bytes: 16 * KIB }, quota: { limit_bytes: 24 * KIB, own: false } });
    expect(wire.body.usage.chunks).toBeGreaterThan(0);
    expect((await (await loggedIn(d, admin)).get('/admin/users')).text).toContain('1 document <span class="muted">· 16 KiB of 24 KiB</span>');
    const listed = await runCli(['admin', 'users', 'list'], { env: cliEnv(d, { DOCSEARCH_TOKEN: admin.apiKey }) });
    expect(listed.stdout).toMatch(/^alice@example\.com\t.*\t1\t16384\t24576\tno$/m);
    const raised = await runCli(['admin', 'users', 'set-quota', 'alice@example.com', '1MiB'], { env: cliEnv(d, { DOCSEARCH_TOKEN: admin.apiKey }) });
    expect(raised.stderr).toContain('alice@example.com has a quota of 1.0 MiB; its uploads hold 16 KiB');
    expect((await api(d, '/api/v1/admin/users/alice@example.com', { token: admin.apiKey })).body.quota).toEqual({ limit_bytes: 1024 * KIB, own: true });
    const fits = await uploadFiles(d, alice.apiKey, [{ name: 'second.txt', bytes: text('second', 16) }]);
    expect(fits.status).toBe(202);
    const audit = await api(d, '/api/v1/audit-events?type=account.quota_set', { token: admin.apiKey });
    expect(audit.body.events.map((e: { details: unknown }) => e.details)).toEqual([{ quota_bytes: 1024 * KIB }]);
    // Not for anyone else to set.
    expect((await api(d, '/api/v1/admin/users/alice@example.com', { token: alice.apiKey, method: 'PATCH', body: { quota_bytes: null } })).status).toBe(403);
  });

  it("a project's quota refuses uploads into it, and pauses its folder source with the reason; nothing is lost", async () => {
    const client = new SourceClient(d, alice.apiKey);
    const project = await client.project('capped');
    const set = await api(d, `/api/v1/admin/projects/${project}`, { token: admin.apiKey, method: 'PATCH', body: { quota_bytes: 20 * KIB } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ name: 'capped', quota_bytes: 20 * KIB, usage: { documents: 0, bytes: 0 } });
    expect((await api(d, '/api/v1/admin/projects/prj_nope', { token: admin.apiKey, method: 'PATCH', body: { quota_bytes: 1 } })).status).toBe(404);

    const dir = join(root, 'capped');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), text('source a', 12));
    writeFileSync(join(dir, 'b.txt'), text('source b', 12));
    const source = await client.add(project, { url: `file://${dir}` });
    const paused = await client.passAfter(project, source.id, 0);
    expect(paused.status).toBe('paused');
    expect(paused.paused_reason).toMatch(/^over the quota of the project capped \(20 KiB: 12 KiB used, this upload 12 KiB\)/);
    // The only source here: its quota pause is the pass /metrics counts as paused (docs/operations.md).
    await expect.poll(async () => (await fetch(`${d.url}/metrics`)).text(), { timeout: 5000 }).toMatch(/^docsearch_source_passes_total\{kind="folder",outcome="paused"\} 1$/m);
    const kept = await client.documents(project, source.id);
    expect(kept.size).toBe(1);

    const rest = await uploadFiles(d, alice.apiKey, [{ name: 'c.txt', bytes: text('rest c', 12) }], { projectId: project });
    expect(rest.status).toBe(507);
    expect(rest.body.error.message).toMatch(/over the quota of the project capped/);

    // Raised, the source's confirmed pass takes the file it could not before.
    await api(d, `/api/v1/admin/projects/${project}`, { token: admin.apiKey, method: 'PATCH', body: { quota_bytes: null } });
    const resumed = await client.sync(project, source.id, { confirm: true });
    expect(resumed.status).toBe('active');
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['a.txt', 'b.txt']);
  });
});
