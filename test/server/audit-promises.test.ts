/**
 * What docs/operations.md#audit-log promises that test/server/audit-log.test.ts and audit-actions.test.ts do not
 * hold, through the built daemon: the client address behind two proxies (`--proxy-hops`), the same in the event and
 * the access log, and the event's `request_id` the access log's `req_id`; an operator's event (no actor, the command,
 * system user and host) in the database only; the filters — `by`, `actor` by the e-mail as it was then, `target` by
 * a name as it was then, `since`/`until` as dates and times, `limit` (1–200, 50 by default) — and the JSON Lines
 * export of every matching event past one page; retention (`--audit-retention-days`, 365 by default, 0 for ever) at
 * start; and, without `--trust-proxy`, the proxy's own address.
 */
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, REPO, startDaemon, type TestUser } from '../helpers/daemon.js';
import { sleep, waitFor } from '../helpers/eventually.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { sourceFiles } from '../helpers/source-files.js';
import { addClient, getCode, pkce, post } from '../auth/oauth-flow.js';
import { loggedIn } from './web-client.js';

const DAY = 24 * 3600_000;

interface WireEvent {
  id: string;
  at: string;
  type: string;
  actor: { id: string | null; email: string | null } | null;
  via: string;
  by: string;
  target: { type: string; id: string; label: string | null } | null;
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  credential_id: string | null;
}

describe('the audit log as docs/operations.md promises', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  const dataDir = () => d.dataDir;
  beforeAll(async () => {
    d = await startDaemon({ args: ['--trust-proxy', '--proxy-hops', '2', '--sources-allow-private'] });
    admin = await addUser(d); // the first account: the admin
    alice = await addUser(d);
    bob = await addUser(d);
  });
  afterAll(async () => {
    if (!d) return;
    await d.stop();
    removeDir(d.dataDir);
  });

  const list = async (query: string) => {
    const res = await api(d, `/api/v1/audit-events${query}`, { token: admin.apiKey });
    expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body as { events: WireEvent[]; next_cursor: string | null };
  };
  const events = async (query: string) => (await list(query)).events;
  const newKey = async (name: string, headers: Record<string, string> = {}) => {
    const res = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name }, headers });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.id as string, requestId: res.headers.get('x-request-id')! };
  };

  it('behind two proxies: the address the first saw, in the event, its log line and the access log, with the request id', async () => {
    const key = await newKey('through two proxies', { 'x-forwarded-for': '198.51.100.66, 203.0.113.50, 10.0.0.1', 'user-agent': 'TwoHops/1.0' });
    const [event] = await events(`?type=api_key.created&target=${key.id}`);
    expect(event).toMatchObject({ client_ip: '203.0.113.50', user_agent: 'TwoHops/1.0', request_id: key.requestId, by: 'user', via: 'api_key' });
    const request = JSON.parse(await d.logLine((l) => l.includes(`"req_id":"${key.requestId}"`) && l.includes('"msg":"request"')));
    expect(request).toMatchObject({ client_ip: '203.0.113.50', path: '/api/v1/keys', status: 201 });
    expect(JSON.parse(await d.logLine(`"audit_id":"${event!.id}"`))).toMatchObject({ event: 'audit.api_key.created', req_id: key.requestId, client_ip: '203.0.113.50' });
  });

  it('through an OAuth access token: via oauth, the grant as the credential, the same grant after a refresh', async () => {
    const redirect = 'https://app.example.org/cb';
    const client = await addClient(d, { name: 'Audited app', redirectUris: [redirect], public: true });
    const { verifier, challenge } = pkce();
    const code = await getCode(await loggedIn(d, alice), { client_id: client.clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', scope: 'read:documents write:documents' });
    const tokens = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: client.clientId, redirect_uri: redirect, code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const refreshed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: client.clientId });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    // A project shared by the application, with each access token.
    const made = [];
    for (const [i, token] of [tokens.body.access_token, refreshed.body.access_token].entries()) {
      const project = await api(d, '/api/v1/projects', { token, body: { name: `Shared by an application ${i}` } });
      expect(project.status, JSON.stringify(project.body)).toBe(201);
      expect((await api(d, `/api/v1/projects/${project.body.id}/members`, { token, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
      made.push((await events(`?type=project.shared&target=${project.body.id}`))[0]!);
    }
    const aliceId = (await api(d, '/api/v1/me', { token: alice.apiKey })).body.id;
    for (const e of made) expect(e).toMatchObject({ via: 'oauth', by: 'user', actor: { id: aliceId } });
    expect(made[0]!.credential_id).toEqual(expect.any(String));
    expect(made[1]!.credential_id).toBe(made[0]!.credential_id);
    const viaKey = (await events('?type=api_key.created&limit=200')).find((e) => e.via === 'api_key')!;
    expect(viaKey.credential_id).toEqual(expect.any(String));
    expect(viaKey.credential_id).not.toBe(made[0]!.credential_id);
  });

  it("an operator's event: no actor, the command with the system user and host, by operator; in the database only", async () => {
    const [made] = await events(`?type=account.created&target=${encodeURIComponent(bob.email)}`);
    expect(made).toMatchObject({ actor: null, via: 'operator', by: 'operator', user_agent: `docsearch users add (${userInfo().username}@${hostname()})` });
    const byOperator = await events('?by=operator&limit=200');
    expect(byOperator.map((e) => e.id)).toContain(made!.id);
    expect(new Set(byOperator.map((e) => e.by))).toEqual(new Set(['operator']));
    expect(new Set((await events('?by=user&limit=200')).map((e) => e.by))).toEqual(new Set(['user']));
    expect((await api(d, '/api/v1/audit-events?by=robot', { token: admin.apiKey })).status).toBe(400);
    // The command's output is its report: no audit line reached the daemon's log for it.
    expect(d.stdout()).not.toContain(`"audit_id":"${made!.id}"`);
  });

  it('actor: the e-mail as it was then; target: a name as it was then (a project, a source URL), or the id', async () => {
    const before = await newKey('before the new address');
    const web = await loggedIn(d, alice);
    await web.get('/settings/account');
    const renamed = `renamed-${alice.email}`;
    expect((await web.post('/settings/account/email', { _csrf: web.csrf, email: renamed, password: alice.password })).status).toBe(303);
    const after = await newKey('after the new address');
    const [old] = await events(`?type=api_key.created&target=${before.id}`);
    expect(old!.actor!.email).toBe(alice.email);
    const byOld = (await events(`?type=api_key.created&actor=${encodeURIComponent(alice.email)}&limit=200`)).map((e) => e.id);
    expect(byOld).toContain(old!.id);
    expect(byOld).not.toContain((await events(`?target=${after.id}`))[0]!.id);
    expect((await events(`?type=api_key.created&actor=${encodeURIComponent(renamed)}`)).map((e) => e.target!.id)).toEqual([after.id]);

    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Ledger 2025' } })).body.id as string;
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
    expect((await api(d, `/api/v1/projects/${project}`, { method: 'PATCH', token: alice.apiKey, body: { name: 'Ledger 2026' } })).status).toBe(200);
    expect((await api(d, `/api/v1/projects/${project}/members/${(await api(d, '/api/v1/me', { token: bob.apiKey })).body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    expect((await events('?target=ledger%202025')).map((e) => e.type)).toEqual(['project.shared']);
    expect((await events('?target=Ledger%202026')).map((e) => e.type)).toEqual(['project.unshared']);
    expect((await events(`?target=${project}`)).map((e) => e.type)).toEqual(['project.unshared', 'project.shared']);

    const url = 'https://127.0.0.1:9/team/ledger.git';
    const source = await api(d, `/api/v1/projects/${project}/sources`, { token: alice.apiKey, body: { url, every: '1h' } });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    expect((await events(`?type=source.created&target=${encodeURIComponent(url)}`)).map((e) => e.target!.id)).toEqual([source.body.id]);

    // Events outlive what they name: a deleted account's are all still there, its own deletion added.
    const bobs = (await events(`?target=${encodeURIComponent(bob.email)}`)).map((e) => e.id);
    expect(bobs.length).toBeGreaterThan(0);
    expect((await api(d, `/api/v1/admin/users/${encodeURIComponent(bob.email)}`, { method: 'DELETE', token: admin.apiKey })).status).toBe(200);
    const left = await events(`?target=${encodeURIComponent(bob.email)}`);
    expect(left.map((e) => e.type)[0]).toBe('account.deleted');
    expect(left.slice(1).map((e) => e.id)).toEqual(bobs);
  });

  it('nothing in the code updates an event, and only the retention deletes one', () => {
    const code = sourceFiles().filter(([path]) => !path.startsWith('src/store/sql/migrations/'));
    const touching = code.flatMap(([path, text]) => [...text.matchAll(/(updateTable|deleteFrom)\('audit_events'\)|(update|delete from) audit_events/gi)].map((m) => `${path}: ${m[0]}`));
    expect(touching).toEqual(["src/store/sql/audit-events.ts: deleteFrom('audit_events')"]);
    expect(readFileSync(join(REPO, 'src/store/sql/audit-events.ts'), 'utf8')).toMatch(/async purgeBefore\(cutoff: number\)[^}]*deleteFrom\('audit_events'\)\.where\('at', '<', cutoff\)/);
  });

  it('since and until as dates or times (from, inclusive; before, exclusive); limit 1–200, 50 by default; JSON Lines exports every match', { timeout: 120_000 }, async () => {
    // More events of one type than the largest page.
    for (let i = 0; i < 21; i++) await Promise.all(Array.from({ length: 10 }, (_, j) => newKey(`bulk ${i * 10 + j}`)));
    const [latest] = await events('?type=api_key.created&limit=1');
    const day = latest!.at.slice(0, 10);
    const nextDay = new Date(Date.parse(day) + DAY).toISOString().slice(0, 10);
    const ids = async (query: string) => (await events(`?type=api_key.created&limit=200${query}`)).map((e) => e.id);
    expect(await ids(`&since=${day}`)).toContain(latest!.id);
    expect(await ids(`&until=${day}`)).not.toContain(latest!.id);
    expect(await ids(`&until=${nextDay}`)).toContain(latest!.id);
    expect(await ids(`&since=${encodeURIComponent(latest!.at)}`)).toContain(latest!.id);
    expect(await ids(`&until=${encodeURIComponent(latest!.at)}`)).not.toContain(latest!.id);
    expect((await api(d, '/api/v1/audit-events?since=yesterday-ish', { token: admin.apiKey })).status).toBe(400);

    const first = await list('?type=api_key.created');
    expect(first.events).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect((await list('?type=api_key.created&limit=200')).events).toHaveLength(200);
    expect((await list('?type=api_key.created&limit=1')).events).toHaveLength(1);
    for (const limit of ['0', '201']) expect((await api(d, `/api/v1/audit-events?limit=${limit}`, { token: admin.apiKey })).status, `limit=${limit}`).toBe(400);

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { events: WireEvent[]; next_cursor: string | null } = await list(`?type=api_key.created&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.events.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged.length).toBeGreaterThan(210);
    const res = await fetch(`${d.url}/api/v1/audit-events?format=jsonl&type=api_key.created`, { headers: { authorization: `Bearer ${admin.apiKey}` } });
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect((await res.text()).trimEnd().split('\n').map((l) => (JSON.parse(l) as WireEvent).id)).toEqual(paged);
  });

  it('retention: events older than --audit-retention-days (365 by default) are removed at start, 0 keeps them; without --trust-proxy, the proxy is the client', { timeout: 120_000 }, async () => {
    const [model] = await events('?type=api_key.created&limit=1');
    expect(await d.stop()).toBe(0);
    /** A copy of that event, `days` old, labelled so the target filter finds it. */
    const backdate = (label: string, days: number) =>
      withLibraryDb(dataDir(), (db) =>
        db
          .prepare(`insert into audit_events (id, at, type, actor_id, actor_email, via, "by", credential_id, target_type, target_id, target_label, client_ip, user_agent, request_id, details)
            select ?, ?, type, actor_id, actor_email, via, "by", credential_id, target_type, target_id, ?, client_ip, user_agent, request_id, details from audit_events where id = ?`)
          .run(`aud_0${label}`, Date.now() - days * DAY, label, model!.id),
      );
    backdate('older-than-a-year', 366);
    backdate('younger-than-a-year', 364);

    d = await startDaemon({ dataDir: dataDir() });
    await waitFor(async () => (await events('?target=older-than-a-year')).length === 0, 10_000, 'the event older than 365 days removed at start');
    expect(await events('?target=younger-than-a-year')).toHaveLength(1);
    // Without --trust-proxy, X-Forwarded-For is anyone's to write: the address is the peer's.
    const key = await newKey('behind an untrusted proxy', { 'x-forwarded-for': '203.0.113.50' });
    expect((await events(`?target=${key.id}`))[0]!.client_ip).toBe('127.0.0.1');
    expect(await d.stop()).toBe(0);

    backdate('kept-for-ever', 4000);
    d = await startDaemon({ dataDir: dataDir(), args: ['--audit-retention-days', '0'] });
    await sleep(1000);
    expect(await events('?target=kept-for-ever')).toHaveLength(1);
  });
});
