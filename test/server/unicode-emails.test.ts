/**
 * An e-mail address or an API key's name in two Unicode spellings is one (docs/api.md#names): a Mac's keyboard and
 * what is pasted from its files may give an address decomposed (NFD, "zoe" + U+0308), other keyboards and browsers
 * composed (NFC, "zoë"). They look the same: an account is found, signed in, locked out and made unique by either,
 * and a key named in one is revoked by the other. Through the real daemon, its web login, its API and both CLIs.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { cliEnv } from '../cli/cli-env.js';
import { WebClient } from './web-client.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describe('e-mail addresses and key names in NFC and NFD', () => {
  let d: Daemon;
  let admin: TestUser;
  let zoe: TestUser;
  let lena: TestUser;
  daemonForSuite(
    async (daemon) => {
      d = daemon;
      admin = await addUser(d);
      zoe = await addUser(d, { email: NFC('zoë.ångström@example.com') });
      lena = await addUser(d, { email: NFD('lena.müller@example.com') });
    },
    { args: ['--trust-proxy'] },
  );

  /** A web login from its own client address (the daemon trusts X-Forwarded-For), so only the e-mail's count is shared. */
  const signIn = async (email: string, password: string, from: string) => {
    const web = new WebClient(d);
    web.headers['x-forwarded-for'] = from;
    return (await web.login(email, password)).status;
  };

  it('an address typed in the other spelling signs in', async () => {
    expect(await signIn(NFD(zoe.email), zoe.password, '198.51.100.1')).toBe(302);
    expect(await signIn(NFC(lena.email), lena.password, '198.51.100.2')).toBe(302);
  });

  it('failures in either spelling count toward one lockout of the address: switching spelling gives no second budget', async () => {
    // Five failures, each from its own client address, in either spelling: the address is locked in both.
    for (const [i, spelled] of [NFC, NFD, NFC, NFD, NFD].entries()) expect(await signIn(spelled(lena.email), 'not the password', `203.0.113.${i + 1}`)).toBe(401);
    expect(await signIn(lena.email, lena.password, '203.0.113.50')).toBe(429);
    expect(await signIn(NFC(lena.email), lena.password, '203.0.113.51')).toBe(429);
  });

  const listed = async () => (await api(d, '/api/v1/admin/users', { token: admin.apiKey })).body.users.map((u: { email: string }) => u.email) as string[];

  it('users add refuses the other spelling of an existing address (any case of A–Z): no second account', async () => {
    const other = await runCli(['users', 'add', NFD('ZOë.ångström@example.com'), '--data-dir', d.dataDir], { input: `${zoe.password}\n`, env: d.env });
    expect(other.code, other.stderr).not.toBe(0);
    expect(other.stderr).toContain('already exists');
    expect((await listed()).filter((e) => NFC(e).toLowerCase() === NFC(zoe.email))).toHaveLength(1);
  });

  it('an address typed decomposed is stored composed', async () => {
    expect((await listed()).find((e) => e.startsWith('lena'))).toBe(NFC('lena.müller@example.com'));
  });

  it("Settings refuses a new e-mail that is another account's in the other spelling", async () => {
    const web = new WebClient(d);
    web.headers['x-forwarded-for'] = '198.51.100.20';
    expect((await web.login(admin.email, admin.password)).status).toBe(302);
    await web.get('/settings/account');
    const taken = await web.submit('/settings/account/email', { _csrf: web.csrf, email: NFD(zoe.email), password: admin.password });
    expect(taken.status).toBe(400);
    expect(taken.text).toContain('Another account already uses');
  });

  it('an admin finds an account by either spelling, and an invitation for its other spelling is refused as taken', async () => {
    const found = await api(d, `/api/v1/admin/users/${encodeURIComponent(NFD(zoe.email))}`, { token: admin.apiKey });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.email).toBe(NFC(zoe.email));
    const invited = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [NFD(zoe.email)] } });
    expect(invited.body.invitations, JSON.stringify(invited.body)).toEqual([]);
    expect(invited.body.refused).toHaveLength(1);
  });

  it('an invitation for an address replaces one for its other spelling, and is stored composed', async () => {
    const address = 'rené.dupré@example.com';
    for (const spelled of [NFD, NFC]) expect((await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [spelled(address)] } })).status).toBe(201);
    const open = (await api(d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations.filter((i: { email: string }) => NFC(i.email) === NFC(address));
    expect(open.map((i: { email: string }) => i.email)).toEqual([NFC(address)]);
  });

  it('a list of addresses to invite names one address once, whichever spellings it holds', async () => {
    const address = 'chloé.brontë@example.com';
    const invited = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [NFD(address), NFC(address)] } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    expect(invited.body.invitations.map((i: { email: string }) => i.email)).toEqual([NFC(address)]);
  });

  const cli = (token: string, args: string[]) => runCli(args, { env: cliEnv(d, { DOCSEARCH_TOKEN: token }) });

  it('docsearch projects share without --role finds the member by an address in the other spelling: no demotion', async () => {
    const p = await api(d, '/api/v1/projects', { token: zoe.apiKey, body: { name: 'Lena edits' } });
    expect((await api(d, `/api/v1/projects/${p.body.id}/members`, { token: zoe.apiKey, body: { email: lena.email, role: 'editor' } })).status).toBe(201);
    const again = await cli(zoe.apiKey, ['projects', 'share', 'Lena edits', NFD(lena.email)]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('is already editor');
  });

  it('docsearch projects unshare finds the member by an address in the other spelling', async () => {
    const unshared = await cli(zoe.apiKey, ['projects', 'unshare', 'Lena edits', NFD(lena.email)]);
    expect(unshared.code, unshared.stderr).toBe(0);
    const p = (await api(d, '/api/v1/projects', { token: zoe.apiKey })).body.projects.find((x: { name: string }) => x.name === 'Lena edits');
    expect((await api(d, `/api/v1/projects/${p.id}/members`, { token: zoe.apiKey })).body.members.map((m: { email?: string }) => m.email)).toEqual([NFC(zoe.email)]);
  });

  it('docsearch admin invitations revoke finds the invitation by its address in the other spelling', async () => {
    const address = 'noël.lefèvre@example.com';
    expect((await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [address] } })).status).toBe(201);
    const revoked = await cli(admin.apiKey, ['admin', 'invitations', 'revoke', NFD(address)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const open = (await api(d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations.map((i: { email: string }) => i.email);
    expect(open).not.toContain(NFC(address));
  });

  it('a project is shared with an address in the other spelling', async () => {
    const p = await api(d, '/api/v1/projects', { token: zoe.apiKey, body: { name: 'Shared with Lena' } });
    const shared = await api(d, `/api/v1/projects/${p.body.id}/members`, { token: zoe.apiKey, body: { email: NFC(lena.email), role: 'viewer' } });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
  });

  it('documents are filtered by their uploader in either spelling', { timeout: 60_000 }, async () => {
    const p = await api(d, '/api/v1/projects', { token: zoe.apiKey, body: { name: 'Zoë’s notes' } });
    const up = await uploadFiles(d, zoe.apiKey, [{ name: 'note.txt', bytes: Buffer.from('A short note about spellings.') }], { projectId: p.body.id, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    for (const spelled of [NFC, NFD]) {
      const found = await api(d, `/api/v1/documents?project_id=${p.body.id}&uploaded_by=${encodeURIComponent(spelled(zoe.email))}`, { token: zoe.apiKey });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.documents.map((x: { id: string }) => x.id), spelled.name).toEqual([up.body.documents[0].id]);
    }
  });

  it("the audit log finds an actor's or a target's address in either spelling", async () => {
    for (const spelled of [NFC, NFD]) {
      const by = await api(d, `/api/v1/audit-events?actor=${encodeURIComponent(spelled(zoe.email))}`, { token: admin.apiKey });
      expect(by.status, JSON.stringify(by.body)).toBe(200);
      expect(by.body.events.length, spelled.name).toBeGreaterThan(0);
      const about = await api(d, `/api/v1/audit-events?target=${encodeURIComponent(spelled('lena.müller@example.com'))}`, { token: admin.apiKey });
      expect(about.body.events.map((e: { type: string }) => e.type), spelled.name).toContain('account.created');
    }
  });

  it('a key named decomposed is stored composed', async () => {
    const made = await api(d, '/api/v1/keys', { token: zoe.apiKey, body: { name: NFD('Schlüssel für Café') } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.name).toBe(NFC('Schlüssel für Café'));
  });

  it('docsearch keys revoke takes a key\'s name in the other spelling', async () => {
    const made = await api(d, '/api/v1/keys', { token: zoe.apiKey, body: { name: NFC('Zürich CI') } });
    const revoked = await runCli(['keys', 'revoke', NFD('Zürich CI'), '--yes'], { env: cliEnv(d, { DOCSEARCH_TOKEN: zoe.apiKey }) });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(made.body.id);
    expect((await api(d, '/api/v1/projects', { token: made.body.key })).status).toBe(401);
  });
});
