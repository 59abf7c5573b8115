/**
 * docs/sso.md's rules for who a provider signs in, held on one daemon with a real OpenID Provider (oidc-provider,
 * private CA) and a trusted-header proxy beside it (Authentik's header names, `--trust-proxy` as a list with a CIDR
 * range): the admin group deciding the first account of an empty library, where the admin flag's source shows, the
 * link following the subject, the required group at every later sign-in, each refused sign-in audited
 * `sign_in.failed` (`step: provider`) and logged `sso.refused`, groups docsearch does not take (`sso.group_skipped`),
 * an account's own factor asked within 5 minutes, a back-channel logout ending the session its `sid` names and no
 * other, the re-check (an outage keeps the session; a person no longer let in is signed out; `--sso-recheck 0` never
 * asks), the proxy's `|`-separated groups and its e-mail counted as verified, the admin flag marked at start (the
 * issuer with or without a bare host's trailing slash) or not. In-process: a public client (PKCE alone), the name's
 * default, and the reasons Troubleshooting quotes.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OidcSignIn, SsoError } from '../../../src/auth/sso/oidc.js';
import { ssoName } from '../../../src/server/sso.js';
import { addUser, api, type Daemon, removeDir, runCli, type TestUser } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { startIdp, type TestClient, type TestIdp } from '../../helpers/oidc-provider.js';
import { newKeyOnPage, WebClient } from '../../server/web-client.js';
import { enrolTotp, totpCode } from '../two-factor/totp.js';
import { CLIENT_ID, CLIENT_SECRET, PROVIDER_NAME, ssoDaemon, ssoSignIn } from './sso-flow.js';

const PROXY = '127.0.0.2';
/** --trust-proxy as a list with a CIDR range: the proxy is in the range (127.0.0.2–3), the tests' own 127.0.0.1 is not. */
const TRUSTED = '10.0.0.5, 127.0.0.2/31';
const PUBLIC_CLIENT = { client_id: 'docsearch-public', redirect_uris: ['http://127.0.0.1:9/login/sso/callback'] };
const AUTHENTIK_HEADERS = ['--trusted-header-user', 'X-authentik-username', '--trusted-header-email', 'X-authentik-email', '--trusted-header-groups', 'X-authentik-groups'];

interface WireEvent {
  type: string;
  by: string;
  actor: { id: string | null; email: string | null } | null;
  details: Record<string, unknown>;
}

/** A page requested through the forward-auth proxy (from its address, or `from`), with the headers it sets. */
function throughProxy(d: Daemon, path: string, headers: Record<string, string>, from = PROXY): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, d.url), { localAddress: from, headers: { accept: 'text/html', ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe("the provider's rules for who signs in (docs/sso.md)", () => {
  let idp: TestIdp;
  let d: Daemon;
  let auditor: TestUser;

  beforeAll(async () => {
    idp = await startIdp({ refreshTokens: true });
    d = await ssoDaemon(idp, ['--sso-admin-group', 'docs-admins', '--sso-required-group', 'staff', '--sso-allowed-domains', 'example.org', '--sso-recheck', '1', '--trusted-header-login', '--trust-proxy', TRUSTED, ...AUTHENTIK_HEADERS]);
    idp.setClients([
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${d.url}/login/sso/callback`],
        post_logout_redirect_uris: [`${d.url}/login`],
        backchannel_logout_uri: `${d.url}/login/sso/backchannel-logout`,
        backchannel_logout_session_required: true,
        grant_types: ['authorization_code', 'refresh_token'],
      },
      // A public client: no secret, PKCE alone (TestClient's type asks for a secret; the provider takes none).
      { ...PUBLIC_CLIENT, token_endpoint_auth_method: 'none' } as unknown as TestClient,
    ]);
  }, 180_000);
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await idp?.stop();
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const users = async () => JSON.parse((await op('users', 'list', '--json')).stdout).users as { email: string; admin: boolean; admin_from: string | null }[];
  const events = async (query: string): Promise<WireEvent[]> => {
    const res = await api(d, `/api/v1/audit-events${query}`, { token: auditor.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.events as WireEvent[];
  };
  const person = (login: string, groups: string[] = ['staff']) => idp.accounts.set(login, { email: `${login}@example.org`, email_verified: true, groups });

  it('with --sso-admin-group, the first account of an empty library is an admin only through that group', async () => {
    // The empty library's login page offers the provider, not the setup link's message.
    const login = await new WebClient(d).get('/login');
    expect(login.text).toContain(`Sign in with ${PROVIDER_NAME}`);
    expect(login.text).not.toContain('No account exists yet');
    person('una');
    expect((await ssoSignIn(new WebClient(d), idp, 'una')).status).toBe(302);
    // An account the provider made has no password: none opens it.
    expect((await new WebClient(d).login('una@example.org', '!')).status).not.toBe(302);
    person('ade', ['staff', 'docs-admins']);
    expect((await ssoSignIn(new WebClient(d), idp, 'ade')).status).toBe(302);
    expect(await users()).toEqual([
      expect.objectContaining({ email: 'una@example.org', admin: false, admin_from: PROVIDER_NAME }),
      expect.objectContaining({ email: 'ade@example.org', admin: true, admin_from: PROVIDER_NAME }),
    ]);
    // `users list` says whose flag it is, and so does GET /api/v1/me with Ade's own key (made after her sign-in).
    expect((await op('users', 'list')).stdout).toMatch(new RegExp(`ade@example\\.org\\s+yes \\(from ${PROVIDER_NAME}\\)`));
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'ade')).status).toBe(302);
    const keys = await web.get('/settings/keys');
    const key = newKeyOnPage((await web.submit('/settings/keys', { _csrf: /name="_csrf" value="([^"]+)"/.exec(keys.text)![1]!, name: 'me', scopes: ['read:documents'] })).text);
    expect((await api(d, '/api/v1/me', { token: key! })).body).toMatchObject({ email: 'ade@example.org', admin: true, admin_from: PROVIDER_NAME });
    // The log line of a sign-in: the amr it brought ([] when none) and how many groups arrived.
    const signedIn = JSON.parse(await d.logLine(/"event":"sso\.signed_in".*"groups_claim":2/)) as Record<string, unknown>;
    expect(signedIn).toMatchObject({ amr: [], groups_claim: 2 });
    // A local admin reads the audit log in the tests that follow.
    auditor = await addUser(d);
    expect((await op('users', 'set-admin', auditor.email)).code).toBe(0);
  });

  it("finds the account by the provider's subject after the person's e-mail changes there", async () => {
    idp.accounts.set('ade', { email: 'ade.renamed@example.org', email_verified: true, groups: ['staff', 'docs-admins'] });
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'ade')).status).toBe(302);
    expect((await web.get('/settings/account')).text).toContain('ade@example.org');
    expect((await users()).map((u) => u.email)).not.toContain('ade.renamed@example.org');
    person('ade', ['staff', 'docs-admins']);
  });

  it('checks the required group at every sign-in, and audits each refused sign-in as sign_in.failed, step provider, with why', async () => {
    // Una's account exists: losing "staff" at the provider refuses her next sign-in all the same.
    person('una', ['engineering']);
    const lost = await ssoSignIn(new WebClient(d), idp, 'una');
    expect(lost.status).toBe(403);
    expect(lost.text).toContain('Only members of the group “staff”');
    // The other reasons the doc names: no e-mail, a local account's e-mail, a disabled account.
    idp.accounts.set('nomail', { groups: ['staff'] });
    expect((await ssoSignIn(new WebClient(d), idp, 'nomail')).status).toBe(403);
    const local = await addUser(d, { email: 'tom@example.org' });
    person('tom');
    expect((await ssoSignIn(new WebClient(d), idp, 'tom')).status).toBe(403);
    person('dan');
    expect((await ssoSignIn(new WebClient(d), idp, 'dan')).status).toBe(302);
    expect((await op('users', 'disable', 'dan@example.org', '--yes')).code).toBe(0);
    expect((await ssoSignIn(new WebClient(d), idp, 'dan')).status).toBe(403);

    const failed = (await events('?type=sign_in.failed')).filter((e) => e.details.step === 'provider');
    const why = (subject: string) => failed.filter((e) => e.details.subject === subject).map((e) => e.details.reason);
    expect([why('una'), why('nomail'), why('tom'), why('dan')]).toEqual([['not-allowed'], ['no-email'], ['taken'], ['disabled']]);
    expect(failed.find((e) => e.details.subject === 'una')?.actor?.email).toBe('una@example.org');
    expect(local.email).toBe('tom@example.org');
    // The log says the same as sso.refused (sso.failed is for an answer that did not complete).
    // Written before each page is sent, the lines reach this process through a pipe: wait for the fourth.
    const refused = () => d.stdout().split('\n').filter((l) => l.includes('"event":"sso.refused"')).map((l) => JSON.parse(l).reason as string);
    await waitFor(() => refused().length >= 4, 15_000, 'four sso.refused lines');
    expect(refused().sort()).toEqual(['disabled', 'no-email', 'not-allowed', 'taken']);
  });

  it('skips, and logs as sso.group_skipped, a local group of the same name and names it does not take (over 100 characters, with : or /)', async () => {
    expect((await op('groups', 'create', 'support')).code).toBe(0);
    const long = 'g'.repeat(101);
    person('gus', ['staff', 'support', long, 'team:ops', '/eng/backend']);
    expect((await ssoSignIn(new WebClient(d), idp, 'gus')).status).toBe(302);
    const skipped = () => d.stdout().split('\n').filter((l) => l.includes('"event":"sso.group_skipped"')).map((l) => JSON.parse(l).group as string);
    await waitFor(() => skipped().length >= 4, 15_000, 'four sso.group_skipped lines');
    expect(skipped().sort()).toEqual(['/eng/backend', long, 'support', 'team:ops'].sort());
    // The local group is left alone: not joined, still local; nothing else of the claim was made.
    const members = JSON.parse((await op('groups', 'members', 'support', '--json')).stdout).members as { email: string }[];
    expect(members.map((m) => m.email)).not.toContain('gus@example.org');
    const groups = JSON.parse((await op('groups', 'list', '--json')).stdout).groups as { name: string; source: string | null }[];
    expect(groups.find((g) => g.name === 'support')?.source).not.toBe(PROVIDER_NAME);
    expect(groups.map((g) => g.name).filter((n) => n.includes(':') || n.includes('/') || n.length > 100)).toEqual([]);
  });

  it("an account's own factor after a provider sign-in without MFA is asked within 5 minutes, or the sign-in starts over", async () => {
    person('lia');
    const first = new WebClient(d);
    expect((await ssoSignIn(first, idp, 'lia')).status).toBe(302);
    const { secret } = await enrolTotp(first);
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'lia')).location).toBe('/login/verify');
    // The session waiting for the code: it waits 5 minutes (set on the database's clock: this machine's).
    const db = new Database(join(d.dataDir, 'docsearch.db'));
    try {
      const waiting = db.prepare('select id_hash, pending_until from sessions where pending_user_id is not null').all() as { id_hash: string; pending_until: number }[];
      expect(waiting).toHaveLength(1);
      expect(waiting[0]!.pending_until - Date.now()).toBeGreaterThan(4.5 * 60_000);
      expect(waiting[0]!.pending_until - Date.now()).toBeLessThanOrEqual(5 * 60_000);
      // Five minutes on: the right code no longer finishes it.
      db.prepare('update sessions set pending_until = ? where id_hash = ?').run(Date.now() - 1, waiting[0]!.id_hash);
    } finally {
      db.close();
    }
    const late = await web.post('/login/verify', { _csrf: /name="_csrf" value="([^"]+)"/.exec((await web.get('/login')).text)![1]!, code: totpCode(secret, 1), return_to: '' });
    expect(late.location).toBe('/login');
    expect((await web.get('/projects')).status).toBe(302);
  });

  it("a back-channel logout naming a session (sid) ends that session only, not the person's others", async () => {
    person('bea');
    const first = new WebClient(d);
    const second = new WebClient(d);
    expect((await ssoSignIn(first, idp, 'bea')).status).toBe(302);
    expect((await ssoSignIn(second, idp, 'bea')).status).toBe(302);
    // Signing out at the provider ends its latest session there: the one `second` signed in with.
    await idp.endSession('bea');
    expect((await second.get('/projects')).status).toBe(302);
    expect((await first.get('/projects')).status).toBe(200);
    const ended = (await events('?type=session.ended&by=sso')).filter((e) => e.actor?.email === 'bea@example.org');
    expect(ended.map((e) => [e.details.reason, e.details.sessions])).toEqual([['back-channel logout', 1]]);
  });

  it('the re-check keeps a session while the provider is down (sso.recheck_failed), and ends it once the provider no longer lets the person in', async () => {
    person('rex');
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'rex')).status).toBe(302);
    await idp.down();
    try {
      // Past the 1 s interval: the page asks, cannot reach the provider, and the session goes on.
      await new Promise((r) => setTimeout(r, 1_200));
      expect((await web.get('/projects')).status).toBe(200);
      await d.logLine('"event":"sso.recheck_failed"');
    } finally {
      await idp.up();
    }
    person('rex', ['engineering']);
    await waitFor(async () => (await web.get('/projects')).status === 302, 30_000, 'the session ended at the re-check');
    const ended = (await events('?type=session.ended&by=sso')).filter((e) => e.actor?.email === 'rex@example.org');
    expect(ended.map((e) => e.details.reason)).toEqual(['recheck']);
  });

  it("the proxy's headers (Authentik's names), from a --trust-proxy range only: groups separated by |, its e-mail counted as verified for the allowed domains", async () => {
    const pat = { 'X-authentik-username': 'pat', 'X-authentik-email': 'pat@example.org', 'X-authentik-groups': 'staff|writers' };
    // From outside the --trust-proxy range the same headers sign nobody in.
    expect((await throughProxy(d, '/projects', pat, '127.0.0.1')).status).toBe(302);
    const res = await throughProxy(d, '/projects', pat);
    expect(res.status).toBe(200);
    expect(res.body).toContain('pat@example.org');
    const writers = JSON.parse((await op('groups', 'members', 'writers', '--json')).stdout).members as { email: string }[];
    expect(writers.map((m) => m.email)).toEqual(['pat@example.org']);
    // The allowed domains apply to the proxy's e-mail as to the provider's.
    const outsider = await throughProxy(d, '/projects', { 'X-authentik-username': 'out', 'X-authentik-email': 'out@elsewhere.test', 'X-authentik-groups': 'staff' });
    expect(outsider.status).toBe(403);
    expect(outsider.body).toContain('verified e-mail addresses at example.org');
  });

  it('a public client (no secret) signs in with PKCE alone', async () => {
    const sent: string[] = [];
    const signIn = new OidcSignIn(
      { issuer: idp.issuer, clientId: PUBLIC_CLIENT.client_id, scopes: 'openid email', groupsClaim: 'groups', redirectUri: () => PUBLIC_CLIENT.redirect_uris[0]! },
      {
        fetch: (input, init) => {
          if (String(input).endsWith('/token')) sent.push(`${new Headers(init?.headers).has('authorization')} ${String(init?.body)}`);
          return idp.fetch(input, init);
        },
      },
    );
    const { url, transaction } = await signIn.begin();
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const back = await idp.signIn(url, 'una');
    expect((await signIn.complete(transaction, back.search)).subject).toBe('una');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^false /);
    expect(sent[0]).toContain('code_verifier=');
    expect(sent[0]).not.toContain('client_secret');
  });

  it("--sso-name's default is the issuer's host", () => {
    expect(ssoName({ ssoName: undefined, oidcIssuer: 'https://sso.example.org:8443/realms/acme' })).toBe('sso.example.org:8443');
  });

  it("Troubleshooting's reasons, as the log quotes them: a refused connection, no discovery document, another issuer", async () => {
    const reason = async (issuer: string, fetchWith: typeof fetch = idp.fetch) => {
      const signIn = new OidcSignIn({ issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: 'openid', groupsClaim: 'groups', redirectUri: () => 'http://127.0.0.1:9/cb' }, { fetch: fetchWith });
      const err = await signIn.begin().then(() => null, (e: unknown) => e as SsoError);
      expect(err).toBeInstanceOf(SsoError);
      return [err!.failure, err!.message];
    };
    expect(await reason('https://127.0.0.1:1')).toEqual(['unreachable', expect.stringContaining('ECONNREFUSED')]);
    expect(await reason(`${idp.issuer}/realms/none`)).toEqual(['unreachable', expect.stringContaining('unexpected HTTP response status code: 404')]);
    // An issuer with a path (Keycloak's realm, Authentik's application) and a trailing slash its discovery document
    // does not have; a bare host is the same URL with or without one.
    const realm: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!url.endsWith('/.well-known/openid-configuration')) return idp.fetch(input, init);
      const document = (await (await idp.fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as object;
      return Response.json({ ...document, issuer: `${idp.issuer}/realms/acme` });
    };
    expect(await reason(`${idp.issuer}/realms/acme/`, realm)).toEqual(['unreachable', expect.stringContaining('discovered metadata issuer does not match the expected issuer')]);
    expect((await new OidcSignIn({ issuer: `${idp.issuer}/`, clientId: CLIENT_ID, scopes: 'openid', groupsClaim: 'groups', redirectUri: () => 'http://127.0.0.1:9/cb' }, { fetch: idp.fetch }).begin()).url.origin).toBe(idp.issuer);
  });

  it('a restart without --sso-admin-group leaves no admin flag the provider’s, one with it marks every linked account (the issuer written with a trailing slash too); --sso-recheck 0 never asks again', async () => {
    person('val', ['staff', 'writers']);
    const before = new WebClient(d);
    expect((await ssoSignIn(before, idp, 'val')).status).toBe(302);
    const restart = async (args: string[]) => {
      const { dataDir, databaseUrl } = d;
      expect(await d.stop()).toBe(0);
      d = await ssoDaemon(idp, args, { dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
    };
    await restart(['--sso-recheck', '0']);
    const after = await users();
    expect(after.find((u) => u.email === 'ade@example.org')).toMatchObject({ admin: true, admin_from: null });
    expect(after.filter((u) => u.admin_from !== null)).toEqual([]);
    // Val's session goes on past any interval without asking the provider: the group she lost there stays hers.
    person('val', ['staff']);
    const web = new WebClient(d);
    for (const [name, value] of before.cookies) web.cookies.set(name, value);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await web.get('/projects')).status).toBe(200);
    const writers = JSON.parse((await op('groups', 'members', 'writers', '--json')).stdout).members as { email: string }[];
    expect(writers.map((m) => m.email)).toContain('val@example.org');

    // With the proxy again too: the accounts it linked are the provider's as well. The issuer now with the trailing
    // slash a bare host may be written with (the same URL: the accounts it linked are still its own).
    await restart(['--oidc-issuer', `${idp.issuer}/`, '--sso-admin-group', 'docs-admins', '--trusted-header-login', '--trust-proxy', TRUSTED]);
    const marked = await users();
    const from = (email: string) => marked.find((u) => u.email === email)?.admin_from;
    expect([from('ade@example.org'), from('una@example.org'), from('pat@example.org')]).toEqual([PROVIDER_NAME, PROVIDER_NAME, PROVIDER_NAME]);
    expect([from('tom@example.org'), from(auditor.email)]).toEqual([null, null]);
  });
});
