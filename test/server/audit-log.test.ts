/**
 * The audit log (issue 52) through the real interfaces: a failed sign-in recorded with the client's real address
 * behind --trust-proxy, a lockout, a key creation and a document delete, each in the database (`GET
 * /api/v1/audit-events`, admins only, with filters and a cursor; the Admin page) and as an `audit.*` JSON log line;
 * the access log's client address; and the events surviving `docsearch backup` → `docsearch restore`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, WebClient } from './web-client.js';

const CLIENT = '203.0.113.9';
const BROWSER = 'AuditTest/1.0 (X11; Linux x86_64)';

interface WireEvent {
  id: string;
  at: string;
  type: string;
  actor: { id: string | null; email: string | null } | null;
  via: string;
  credential_id: string | null;
  target: { type: string; id: string; label: string | null } | null;
  client_ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
}

async function events(d: Daemon, token: string, query = ''): Promise<WireEvent[]> {
  const res = await api(d, `/api/v1/audit-events${query}`, { token });
  if (res.status !== 200) throw new Error(`audit-events${query}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.events as WireEvent[];
}

describe('the audit log', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let aliceId: string;
  /** Whose password is guessed (locked out afterwards). */
  let carol: TestUser;
  let carolId: string;
  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d); // the first account: the admin
      alice = await addUser(d);
      aliceId = (await api(d, '/api/v1/me', { token: alice.apiKey })).body.id;
      carol = await addUser(d);
      carolId = (await api(d, '/api/v1/me', { token: carol.apiKey })).body.id;
    },
    { args: ['--trust-proxy'] },
  );

  it('records a failed sign-in with the real client address and browser, and the lockout the fifth one begins', async () => {
    const web = new WebClient(d);
    Object.assign(web.headers, { 'x-forwarded-for': `10.9.9.9, ${CLIENT}`, 'user-agent': BROWSER });
    await web.get('/login');
    for (let i = 0; i < 5; i++) expect((await web.post('/login', { _csrf: web.csrf, email: carol.email, password: `wrong ${i}` })).status).toBe(401);
    const failed = await events(d, admin.apiKey, `?type=sign_in.failed&actor=${carolId}`);
    expect(failed).toHaveLength(5);
    expect(failed[0]).toMatchObject({ actor: { id: carolId, email: carol.email }, via: 'anonymous', client_ip: CLIENT, user_agent: BROWSER, details: { step: 'password', reason: 'invalid', email: carol.email } });
    const locked = await events(d, admin.apiKey, `?type=sign_in.locked_out&client_ip=${CLIENT}`);
    expect(locked).toHaveLength(1);
    expect(locked[0]!.details).toMatchObject({ locked: ['email', 'ip'] });
    // An address nobody has an account for is recorded too, without an actor.
    const stranger = new WebClient(d);
    stranger.headers['x-forwarded-for'] = '203.0.113.77';
    await stranger.get('/login');
    await stranger.post('/login', { _csrf: stranger.csrf, email: 'nobody@example.com', password: 'guess' });
    const unknown = await events(d, admin.apiKey, '?type=sign_in.failed&client_ip=203.0.113.77');
    expect(unknown[0]).toMatchObject({ actor: null, details: { email: 'nobody@example.com' } });
    // The access log names the same address: the real one behind the proxy, not the proxy's.
    const line = await d.logLine((l) => l.includes('"msg":"request"') && l.includes('"path":"/login"') && l.includes('"method":"POST"'));
    expect(JSON.parse(line)).toMatchObject({ client_ip: CLIENT, status: 401 });
    await d.logLine('"event":"audit.sign_in.locked_out"');
  });

  it('records a key creation and a document delete, with who, how and what', async () => {
    const made = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'audited key' } });
    expect(made.status).toBe(201);
    const created = await events(d, admin.apiKey, `?type=api_key.created&target=${made.body.id}`);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ actor: { id: aliceId, email: alice.email }, via: 'api_key', target: { type: 'api_key', id: made.body.id, label: 'audited key' }, details: { scopes: ['read:documents', 'write:documents'] } });
    expect(created[0]!.credential_id).toMatch(/^key_/);

    const up = await uploadFiles(d, alice.apiKey, [{ name: 'minutes.txt', bytes: Buffer.from('minutes of the audit meeting\n') }], { query: '?wait=true' });
    const doc = up.body.documents[0].id as string;
    const web = await loggedIn(d, alice);
    await web.get(`/documents/${doc}/delete`);
    expect((await web.post(`/documents/${doc}/delete`, { _csrf: web.csrf })).status).toBe(303);
    const deleted = await events(d, admin.apiKey, `?type=document.deleted&target=${doc}`);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ actor: { id: aliceId }, via: 'session', target: { type: 'document', id: doc, label: 'minutes.txt' } });
    expect(JSON.parse(await d.logLine(`"event":"audit.document.deleted"`))).toMatchObject({ target_id: doc, actor_id: aliceId, via: 'session' });
  });

  it('records shares, applications and consents, account changes and sign-outs', async () => {
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Audited' } })).body.id as string;
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: alice.apiKey, body: { email: admin.email, role: 'viewer' } })).status).toBe(201);
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: alice.apiKey, body: { email: admin.email, role: 'editor' } })).status).toBe(200);
    const shared = await events(d, admin.apiKey, `?type=project.shared&target=${project}`);
    expect(shared.map((e) => [e.details.role, e.details.change])).toEqual([
      ['editor', 'role'],
      ['viewer', 'added'],
    ]);
    const web = await loggedIn(d, alice);
    await web.get('/settings/applications');
    expect((await web.post('/settings/applications', { _csrf: web.csrf, name: 'Audited app', redirect_uris: 'https://app.example.com/callback' })).status).toBe(303);
    const [registered] = await events(d, admin.apiKey, `?type=oauth_app.registered&actor=${aliceId}`);
    expect(registered).toMatchObject({ via: 'session', target: { type: 'oauth_app', label: 'Audited app' }, details: { registration: 'user' } });
    await web.get('/settings/account');
    expect((await web.post('/settings/account/password', { _csrf: web.csrf, current_password: alice.password, new_password: alice.password, new_password_again: alice.password })).status).toBe(303);
    expect(await events(d, admin.apiKey, `?type=account.password_changed&actor=${aliceId}`)).toHaveLength(1);
    expect((await web.post('/logout', { _csrf: web.csrf })).status).toBe(302);
    expect(await events(d, admin.apiKey, `?type=sign_out&actor=${aliceId}`)).toHaveLength(1);
  });

  it('is for admins only: 403 for anyone else, 401 without a credential; filters and a cursor page through it', async () => {
    const refused = await api(d, '/api/v1/audit-events', { token: alice.apiKey });
    expect(refused.status).toBe(403);
    expect((await api(d, '/api/v1/audit-events')).status).toBe(401);
    const all = await events(d, admin.apiKey, '?limit=200');
    expect(all.length).toBeGreaterThan(8);
    // Newest first, one page at a time, each event once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(d, `/api/v1/audit-events?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: admin.apiKey });
      seen.push(...res.body.events.map((e: WireEvent) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.id));
    expect([...seen].sort().reverse()).toEqual(seen);
    const family = await events(d, admin.apiKey, '?type=sign_in.');
    expect(new Set(family.map((e) => e.type))).toEqual(new Set(['sign_in.failed', 'sign_in.locked_out', 'sign_in.succeeded']));
    expect(await events(d, admin.apiKey, '?until=2000-01-01')).toEqual([]);
    expect((await events(d, admin.apiKey, `?since=${new Date(Date.now() - 3600_000).toISOString()}&actor=${encodeURIComponent(alice.email.toUpperCase())}`)).length).toBeGreaterThan(0);
    expect((await api(d, '/api/v1/audit-events?type=DROP TABLE', { token: admin.apiKey })).status).toBe(400);

    const page = await (await loggedIn(d, admin)).get('/admin/audit?type=document.deleted');
    expect(page.status).toBe(200);
    expect(page.text).toContain('minutes.txt');
    expect(page.text).not.toContain('<code>sign_in.failed</code>');
    expect((await (await loggedIn(d, alice)).get('/admin/audit')).status).toBe(403);
  });

  // A data directory's backup, so the SQLite run only: shared mode's needs object storage (test/admin/ covers its backups).
  if (process.env.DOCSEARCH_TEST_ENGINE !== 'postgresql') it('survives docsearch backup → docsearch restore, which are recorded too', async () => {
    const before = await events(d, admin.apiKey, '?limit=200');
    const repo = mkdtempSync(join(tmpdir(), 'docsearch-audit-backup-'));
    const target = join(mkdtempSync(join(tmpdir(), 'docsearch-audit-restore-')), 'data');
    try {
      const backup = await runCli(['backup', '--data-dir', d.dataDir, '--to', repo], { timeoutMs: 120_000 });
      expect(backup.code, backup.stderr).toBe(0);
      const restore = await runCli(['restore', '--from', repo, '--to', target, '--key-file', join(d.dataDir, 'backup.key')], { timeoutMs: 120_000 });
      expect(restore.code, restore.stderr).toBe(0);
      const restored = await startDaemon({ dataDir: target });
      try {
        const after = await events(restored, admin.apiKey, '?limit=200');
        const ids = new Set(after.map((e) => e.id));
        expect(before.filter((e) => !ids.has(e.id))).toEqual([]);
        expect(after.find((e) => e.type === 'sign_in.failed' && e.client_ip === CLIENT)).toBeTruthy();
        const backupEvent = after.find((e) => e.type === 'backup.created');
        // The backup's own event is written after its snapshot: the source has it, the restored copy does not.
        expect(backupEvent).toBeUndefined();
        expect((await events(d, admin.apiKey, '?type=backup.created'))[0]).toMatchObject({ via: 'operator', actor: null });
        expect(after[0]).toMatchObject({ type: 'restore.completed', via: 'operator' });
        expect(after[0]!.user_agent).toMatch(/^docsearch restore \(/);
      } finally {
        await restored.stop();
      }
    } finally {
      removeDir(repo);
      removeDir(join(target, '..'));
    }
  }, 300_000);
});
