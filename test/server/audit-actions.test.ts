/**
 * The audit log misses nothing (issue 61 item 8), generated from the table of audited actions in
 * docs/operations.md#audit-log: the table and the code (core/audit.ts AUDIT_EVENT_TYPES) name the same events, each
 * once; each action this file can perform through the built daemon's REST API and web forms is performed once and
 * must add exactly one event of its type, by one of the row's `by` values; the others name the test that performs
 * them. An action that changes nothing (sharing again with the same role, uploading bytes the project has) records
 * nothing, and the target filter takes a name as well as an id.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_EVENT_TYPES } from '../../src/core/audit.js';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, WebClient } from './web-client.js';
import { enrolTotp } from '../auth/two-factor/totp.js';
import { getCode, pkce, post as oauthPost } from '../auth/oauth-flow.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The rows of "What is recorded": event, the `by` values it may have. */
function auditTable(): { type: string; by: string[] }[] {
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('**What is recorded**'), doc.indexOf('Each event has:'));
  return [...section.matchAll(/^\| `([a-z_.]+)` \| ([a-z, ]+) \|/gm)].map((m) => ({ type: m[1]!, by: m[2]!.split(',').map((b) => b.trim()) }));
}

/** Actions performed by other tests (they assert the event): which file. */
const ELSEWHERE: Record<string, string> = {
  'sign_in.locked_out': 'test/server/audit-log.test.ts',
  'session.ended': 'test/auth/sso/provider-state.test.ts',
  'session.confirmed': 'test/web/two-factor.browser.test.ts',
  'totp.enabled': 'test/auth/two-factor/two-factor.test.ts',
  'two_factor.reset': 'test/auth/two-factor/two-factor.test.ts',
  'oauth_app.registered': 'test/server/audit-log.test.ts',
  'account.created': 'test/auth/sso/provider-state.test.ts',
  'password_reset.requested': 'test/mail/accounts-by-mail.test.ts',
  'password_reset.completed': 'test/mail/accounts-by-mail.test.ts',
  'document.replaced': 'test/sources/edit-guard-notices.test.ts',
  'backup.created': 'test/server/audit-log.test.ts',
  'restore.completed': 'test/server/audit-log.test.ts',
  'mail.sent': 'test/mail/outbox.test.ts',
  'migrate.completed': 'test/admin/restore-drill.test.ts',
  'account.linked': 'test/auth/sso/sso-web.test.ts',
  'account.link_offered': 'test/auth/sso/provider-state.test.ts',
  'reindex.started': 'test/ingest/pipeline/reindex.test.ts',
  'mail.failed': 'test/mail/outbox.test.ts',
};

/** Passkeys are offered on a host name only: the daemon's public URL is localhost, on a port chosen here. */
const PORT = await freePort();
const PUBLIC_URL = `http://localhost:${PORT}`;

/** Actions no test performs yet through a real interface: none (a new event gets a driver here or a test elsewhere). */
const NOT_YET = new Set<string>([]);

interface WireEvent {
  id: string;
  type: string;
  by: string;
  target: { type: string; id: string; label: string | null } | null;
  details: Record<string, unknown>;
}

describe('the audit log misses nothing: the table of audited actions, each once', () => {
  const dirs = tempDirs('docsearch-audit-actions');
  const folder = dirs.make('folder');
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d); // the first account: the admin
      alice = await addUser(d);
      bob = await addUser(d);
      carol = await addUser(d);
    },
    { args: ['--port', String(PORT), '--public-url', PUBLIC_URL, '--source-roots', folder] },
  );

  /** What the actions share as they go, in the table's order. */
  const w: { project?: string; other?: string; keyId?: string; docA?: string; docB?: string; label?: string; saved?: string; source?: string; group?: string; invitation?: string; web?: WebClient } = {};
  const ok = (res: { status: number; body: unknown }, status: number) => expect(res.status, JSON.stringify(res.body)).toBe(status);
  const done = (res: { status: number; body: unknown }) => expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  const as = (u: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: u.apiKey, ...opts });
  const upload = async (name: string, text: string) => {
    const res = await uploadFiles(d, alice.apiKey, [{ name, bytes: Buffer.from(text) }], { projectId: w.project! });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body.documents[0] as { id: string; duplicate?: boolean };
  };
  const ids = new Map<string, string>();
  /** An account's id, looked up once (a disabled account's key no longer answers). */
  const userId = async (u: TestUser) => {
    if (!ids.has(u.apiKey)) ids.set(u.apiKey, (await as(u, '/api/v1/me')).body.id as string);
    return ids.get(u.apiKey)!;
  };

  /** An account of its own, signed in, with an authenticator app set up through Settings → Security. */
  const withApp = async () => {
    const u = await addUser(d);
    const web = await loggedIn(d, u);
    return { u, web, ...(await enrolTotp(web)) };
  };
  let withCodes: Awaited<ReturnType<typeof withApp>> | undefined;

  /** A passkey of a software authenticator (test/helpers/soft-passkey.ts) added on Settings → Security; its id. */
  const addPasskey = async (web: WebClient, name: string, alone: boolean) => {
    await web.get('/settings/security');
    const options = await web.postJson('/settings/security/passkeys/options', {});
    expect(options.status, options.text).toBe(200);
    const added = await web.postJson('/settings/security/passkeys', { response: registrationResponse(JSON.parse(options.text), PUBLIC_URL), name, alone });
    expect(added.status, added.text).toBe(200);
    const page = await web.get('/settings/security');
    return [...page.text.matchAll(/\/settings\/security\/passkeys\/([^/"]+)\/rename/g)].at(-1)![1]!;
  };
  const passkey: { web?: WebClient; id?: string } = {};
  /** An application of alice's, registered on Settings → Applications (confidential: it has a secret); its id. */
  const ownApp = async () => {
    const web = await loggedIn(d, alice);
    await web.get('/settings/applications');
    expect((await web.post('/settings/applications', { _csrf: web.csrf, name: 'Audited own app', redirect_uris: 'https://app.example.com/callback' })).status).toBe(303);
    const page = await web.get('/settings/applications');
    return { web, id: [...page.text.matchAll(/\/settings\/applications\/([^/"]+)\/rotate/g)].at(-1)![1]! };
  };
  let app: Awaited<ReturnType<typeof ownApp>> | undefined;
  const connected: { web?: WebClient; clientId?: string } = {};

  const DRIVERS: Record<string, () => Promise<unknown>> = {
    'totp.disabled': async () => {
      const { u, web } = await withApp();
      withCodes = await withApp(); // for the next two: setting up an app makes its first recovery codes
      await web.get('/settings/security');
      expect((await web.post('/settings/security/totp/disable', { _csrf: web.csrf, password: u.password })).status).toBe(303);
    },
    'recovery_codes.generated': async () => {
      withCodes = withCodes ?? (await withApp());
      await withCodes.web.get('/settings/security');
      expect((await withCodes.web.post('/settings/security/recovery-codes', { _csrf: withCodes.web.csrf, password: withCodes.u.password })).status).toBe(303);
      withCodes.recoveryCodes = [...(await withCodes.web.get('/settings/security')).text.matchAll(/<li><code>([0-9a-z-]{19})<\/code><\/li>/g)].map((m) => m[1]!);
    },
    'recovery_code.used': async () => {
      const web = new WebClient(d);
      expect((await web.login(withCodes!.u.email, withCodes!.u.password)).status).toBe(303);
      await web.get('/login/verify');
      expect((await web.post('/login/verify', { _csrf: web.csrf, code: withCodes!.recoveryCodes[0]!, return_to: '' })).status).toBe(303);
    },
    'passkey.added': async () => {
      passkey.web = await loggedIn(d, await addUser(d));
      passkey.id = await addPasskey(passkey.web, 'Audited laptop', false);
    },
    'passkey.renamed': async () => {
      await passkey.web!.get('/settings/security');
      expect((await passkey.web!.post(`/settings/security/passkeys/${passkey.id}/rename`, { _csrf: passkey.web!.csrf, name: 'Audited desktop' })).status).toBe(303);
    },
    'passkey.removed': async () => {
      await passkey.web!.get('/settings/security');
      expect((await passkey.web!.post(`/settings/security/passkeys/${passkey.id}/remove`, { _csrf: passkey.web!.csrf })).status).toBe(303);
    },
    'passkey_sign_in.changed': async () => {
      await addPasskey(passkey.web!, 'Audited phone', false);
      // Chosen twice: the second changes nothing and records nothing (this row's one event).
      for (let i = 0; i < 2; i++) expect((await passkey.web!.post('/settings/security/passkey-sign-in', { _csrf: passkey.web!.csrf, sign_in: 'alone' })).status).toBe(303);
    },
    'oauth_app.deleted': async () => {
      const { web, id } = await ownApp();
      expect((await web.post(`/settings/applications/${id}/delete`, { _csrf: web.csrf })).status).toBeLessThan(400);
    },
    'oauth_app.secret_rotated': async () => {
      app = await ownApp();
      expect((await app.web.post(`/settings/applications/${app.id}/rotate`, { _csrf: app.web.csrf })).status).toBe(303);
    },
    'oauth.consented': async () => {
      // A public client registered by itself (RFC 7591), then alice's consent and the code exchanged for a token.
      const redirect = 'http://127.0.0.1:9/callback';
      const registered = await api(d, '/api/oauth/register', { body: { client_name: 'Audited client', redirect_uris: [redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] } });
      ok(registered, 201);
      connected.clientId = registered.body.client_id as string;
      connected.web = await loggedIn(d, alice);
      const { verifier, challenge } = pkce();
      const code = await getCode(connected.web, { client_id: connected.clientId, redirect_uri: redirect, scope: 'read:documents', state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
      ok(await oauthPost(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: connected.clientId, redirect_uri: redirect, code_verifier: verifier }), 200);
    },
    'oauth.revoked': async () => {
      await connected.web!.get('/settings/connected');
      expect((await connected.web!.post(`/settings/connected/${connected.clientId}/revoke`, { _csrf: connected.web!.csrf })).status).toBeLessThan(400);
    },
    'account.password_set': async () => {
      const erin = await addUser(d);
      const res = await runCli(['users', 'set-password', erin.email, '--data-dir', d.dataDir], { input: 'an operator chose this one\n', env: d.env });
      expect(res.code, res.stderr).toBe(0);
    },
    'sign_in.succeeded': async () => (w.web = await loggedIn(d, alice)),
    'sign_in.failed': async () => {
      const web = new WebClient(d);
      await web.get('/login');
      expect((await web.post('/login', { _csrf: web.csrf, email: bob.email, password: 'not the password' })).status).toBe(401);
    },
    sign_out: async () => {
      await w.web!.get('/settings/account');
      expect((await w.web!.post('/logout', { _csrf: w.web!.csrf })).status).toBe(302);
    },
    'api_key.created': async () => {
      const res = await as(alice, '/api/v1/keys', { body: { name: 'audited key' } });
      ok(res, 201);
      w.keyId = res.body.id;
    },
    'api_key.revoked': async () => ok(await as(alice, `/api/v1/keys/${w.keyId}`, { method: 'DELETE' }), 204),
    'account.invited': async () => {
      const res = await as(admin, '/api/v1/admin/invitations', { body: { emails: ['invited-audit@example.com'], send: false } });
      ok(res, 201);
      w.invitation = res.body.invitations[0].id;
    },
    'account.invite_revoked': async () => expect((await as(admin, `/api/v1/admin/invitations/${w.invitation}`, { method: 'DELETE' })).status).toBeLessThan(300),
    'password_reset.link_made': async () => done(await as(admin, `/api/v1/admin/users/${await userId(carol)}/reset-link`, { body: { send: false } })),
    'account.password_changed': async () => {
      const web = await loggedIn(d, bob);
      await web.get('/settings/account');
      const res = await web.submit('/settings/account/password', { _csrf: web.csrf, current_password: bob.password, new_password: bob.password, new_password_again: bob.password });
      expect(res.status).toBe(200);
    },
    'account.email_changed': async () => {
      const web = await loggedIn(d, bob);
      await web.get('/settings/account');
      bob = { ...bob, email: `renamed-${bob.email}` };
      await web.submit('/settings/account/email', { _csrf: web.csrf, password: bob.password, email: bob.email });
    },
    'account.disabled': async () => done(await as(admin, `/api/v1/admin/users/${await userId(carol)}/disable`, { body: {} })),
    'account.enabled': async () => done(await as(admin, `/api/v1/admin/users/${await userId(carol)}/enable`, { body: {} })),
    'account.admin_changed': async () => ok(await as(admin, `/api/v1/admin/users/${await userId(carol)}`, { method: 'PATCH', body: { admin: true } }), 200),
    'account.quota_set': async () => ok(await as(admin, `/api/v1/admin/users/${await userId(carol)}`, { method: 'PATCH', body: { quota_bytes: 1_000_000_000 } }), 200),
    'account.deleted': async () => {
      const dave = await addUser(d);
      done(await as(admin, `/api/v1/admin/users/${await userId(dave)}`, { method: 'DELETE' }));
    },
    'group.created': async () => {
      const res = await as(admin, '/api/v1/admin/groups', { body: { name: 'auditors' } });
      ok(res, 201);
      w.group = res.body.id;
    },
    'group.member_added': async () => ok(await as(admin, `/api/v1/admin/groups/${w.group}/members`, { body: { user: alice.email } }), 201),
    'group.member_removed': async () => expect((await as(admin, `/api/v1/admin/groups/${w.group}/members/${await userId(alice)}`, { method: 'DELETE' })).status).toBeLessThan(300),
    'group.deleted': async () => expect((await as(admin, `/api/v1/admin/groups/${w.group}`, { method: 'DELETE' })).status).toBeLessThan(300),
    'sharing.policy_changed': async () => {
      const web = await loggedIn(d, admin);
      await web.get('/admin/sharing');
      await web.submit('/admin/sharing', { _csrf: web.csrf, policy: 'groups' });
      await web.get('/admin/sharing');
      // Back as it was, unrecorded by this row's count: it is the same action again.
      w.web = web;
    },
    'project.shared': async () => {
      await w.web!.submit('/admin/sharing', { _csrf: w.web!.csrf, policy: 'anyone' });
      for (const name of ['audited', 'audited other']) {
        const res = await as(alice, '/api/v1/projects', { body: { name } });
        ok(res, 201);
        if (name === 'audited') w.project = res.body.id;
        else w.other = res.body.id;
      }
      ok(await as(alice, `/api/v1/projects/${w.project}/members`, { body: { email: bob.email, role: 'viewer' } }), 201);
    },
    'project.unshared': async () => ok(await as(alice, `/api/v1/projects/${w.project}/members/${await userId(bob)}`, { method: 'DELETE' }), 204),
    'project.transferred': async () => ok(await as(alice, `/api/v1/projects/${w.other}/transfer`, { body: { email: bob.email } }), 200),
    'project.quota_set': async () => ok(await as(admin, `/api/v1/admin/projects/${w.project}`, { method: 'PATCH', body: { quota_bytes: 1_000_000_000 } }), 200),
    'project.deleted': async () => done(await as(bob, `/api/v1/projects/${w.other}`, { method: 'DELETE' })),
    'document.uploaded': async () => {
      w.docA = (await upload('minutes.txt', 'Minutes of the audited meeting.')).id;
    },
    'document.deleted': async () => ok(await as(alice, `/api/v1/documents/${w.docA}`, { method: 'DELETE' }), 204),
    'document.moved': async () => {
      const other = await as(alice, '/api/v1/projects', { body: { name: 'audited moves' } });
      ok(other, 201);
      const b = await uploadFiles(d, alice.apiKey, [{ name: 'moved.txt', bytes: Buffer.from('A memo that moves between projects.') }], { projectId: w.project!, query: '?wait=true' });
      w.docB = b.body.documents[0].id;
      ok(await as(alice, `/api/v1/documents/${w.docB}`, { method: 'PATCH', body: { project_id: other.body.id } }), 200);
    },
    'document.labelled': async () => ok(await as(alice, `/api/v1/documents/${w.docB}`, { method: 'PATCH', body: { labels: { add: ['audited'] } } }), 200),
    'label.created': async () => {
      const res = await as(alice, `/api/v1/projects/${w.project}/labels`, { body: { name: 'minutes', color: 'teal' } });
      ok(res, 201);
      w.label = res.body.id;
    },
    'label.changed': async () => ok(await as(alice, `/api/v1/projects/${w.project}/labels/${w.label}`, { method: 'PATCH', body: { name: 'meeting minutes' } }), 200),
    'label.deleted': async () => ok(await as(alice, `/api/v1/projects/${w.project}/labels/${w.label}`, { method: 'DELETE' }), 204),
    'saved_search.created': async () => {
      const res = await as(alice, '/api/v1/saved-searches', { body: { name: 'my minutes', search: { query: 'minutes' } } });
      ok(res, 201);
      w.saved = res.body.id;
    },
    'saved_search.shared': async () => ok(await as(alice, '/api/v1/saved-searches', { body: { name: 'team minutes', search: { query: 'minutes', project_ids: [w.project] }, project_id: w.project } }), 201),
    'saved_search.renamed': async () => ok(await as(alice, `/api/v1/saved-searches/${w.saved}`, { method: 'PATCH', body: { name: 'minutes kept' } }), 200),
    'saved_search.deleted': async () => ok(await as(alice, `/api/v1/saved-searches/${w.saved}`, { method: 'DELETE' }), 204),
    'document.restored': async () => done(await as(alice, `/api/v1/trash/${w.docA}/restore`, { body: {} })),
    'document.purged': async () => {
      ok(await as(alice, `/api/v1/documents/${w.docA}`, { method: 'DELETE' }), 204);
      done(await as(alice, `/api/v1/trash/${w.docA}`, { method: 'DELETE' }));
    },
    'source.created': async () => {
      const res = await as(alice, `/api/v1/projects/${w.project}/sources`, { body: { url: `file://${folder}`, every: '1h' } });
      ok(res, 201);
      w.source = res.body.id;
    },
    'source.changed': async () => ok(await as(alice, `/api/v1/projects/${w.project}/sources/${w.source}`, { method: 'PATCH', body: { every: '2h' } }), 200),
    'source.removed': async () => ok(await as(alice, `/api/v1/projects/${w.project}/sources/${w.source}`, { method: 'DELETE' }), 204),
  };

  const table = auditTable();

  it('the table names every event the code records, each once, and each row is performed here or by a named test', () => {
    expect(table.map((r) => r.type).sort()).toEqual([...AUDIT_EVENT_TYPES].sort());
    expect(new Set(table.map((r) => r.type)).size).toBe(table.length);
    for (const { type, by } of table) {
      expect(by.length, type).toBeGreaterThan(0);
      const where = [type in DRIVERS, type in ELSEWHERE, NOT_YET.has(type)].filter(Boolean).length;
      expect(where, `${type}: performed here, named elsewhere, or not yet — exactly one`).toBe(1);
      if (type in ELSEWHERE) expect(readFileSync(join(ROOT, ELSEWHERE[type]!), 'utf8'), `${ELSEWHERE[type]} performs ${type}`).toContain(type);
    }
  });

  const events = async (query: string): Promise<WireEvent[]> => {
    const res = await as(admin, `/api/v1/audit-events${query}`);
    ok(res, 200);
    return res.body.events as WireEvent[];
  };

  // One test per row performed here, in the table's order (later actions use what earlier ones made).
  for (const { type, by } of table.filter((r) => r.type in DRIVERS)) {
    it(`${type}: one action, one event (by ${by.join(' or ')})`, async () => {
      const before = new Set((await events(`?type=${type}&limit=200`)).map((e) => e.id));
      await DRIVERS[type]!();
      // The outbox, a source's first pass and the like record on their own time: none of them is of these types.
      const added = (await events(`?type=${type}&limit=200`)).filter((e) => !before.has(e.id));
      expect(added.map((e) => `${e.type} by ${e.by}`)).toHaveLength(1);
      expect(by).toContain(added[0]!.by);
    });
  }

  it('refuses to give a project to a disabled account, and records nothing (Low 15)', async () => {
    const erin = await addUser(d);
    done(await as(admin, `/api/v1/admin/users/${await userId(erin)}/disable`, { body: {} }));
    const transferred = (await events('?type=project.transferred')).length;
    const res = await as(alice, `/api/v1/projects/${w.project}/transfer`, { body: { email: erin.email } });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error.message).toContain(`${erin.email} is disabled`);
    expect((await events('?type=project.transferred')).length).toBe(transferred);
  });

  it('records nothing for a change that changes nothing: sharing with the same role again, uploading bytes the project has', async () => {
    ok(await as(alice, `/api/v1/projects/${w.project}/members`, { body: { email: carol.email, role: 'editor' } }), 201);
    const shared = (await events('?type=project.shared')).length;
    ok(await as(alice, `/api/v1/projects/${w.project}/members`, { body: { email: carol.email, role: 'editor' } }), 200);
    expect((await events('?type=project.shared')).length).toBe(shared);
    const first = await upload('twice.txt', 'The same bytes, uploaded twice.');
    const uploaded = (await events('?type=document.uploaded')).length;
    const again = await upload('twice-again.txt', 'The same bytes, uploaded twice.');
    expect(again.id).toBe(first.id);
    expect((await events('?type=document.uploaded')).length).toBe(uploaded);
  });

  it('finds events by the name of their target as well as its id, and upload events carry who, the file name and its hash', async () => {
    const byName = await events('?target=MINUTES.TXT');
    expect(byName.map((e) => e.type).sort()).toEqual(['document.deleted', 'document.deleted', 'document.purged', 'document.restored', 'document.uploaded']);
    expect(byName.every((e) => e.target!.id === w.docA)).toBe(true);
    const upload = byName.find((e) => e.type === 'document.uploaded')!;
    expect(upload.details).toMatchObject({ project: w.project, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await events(`?target=${w.docA}`)).length).toBe(byName.length);
  });

  it('exports the whole log, or what the filters select, as JSON Lines', async () => {
    const res = await fetch(`${d.url}/api/v1/audit-events?format=jsonl&type=document.`, { headers: { authorization: `Bearer ${admin.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as WireEvent);
    const paged = await events('?type=document.&limit=200');
    expect(lines.map((e) => e.id)).toEqual(paged.map((e) => e.id));
    expect(lines.every((e) => e.type.startsWith('document.'))).toBe(true);
    const all = await fetch(`${d.url}/api/v1/audit-events?format=jsonl`, { headers: { authorization: `Bearer ${admin.apiKey}` } });
    expect((await all.text()).trimEnd().split('\n').length).toBeGreaterThan(lines.length);
    expect((await fetch(`${d.url}/api/v1/audit-events?format=jsonl`, { headers: { authorization: `Bearer ${alice.apiKey}` } })).status).toBe(403);
  });
});
