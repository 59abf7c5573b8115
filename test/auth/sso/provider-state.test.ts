/**
 * What the identity provider manages stays the provider's, and what it ends ends here (issue 61, docs/sso.md), with
 * a real OpenID Provider (oidc-provider, private CA) and the built daemon:
 * - an admin flag set by `--sso-admin-group` is marked "from the provider" (Admin → Users, `users list`) and cannot
 *   be changed here (web, operator command: a clear refusal); every change a sign-in makes is audited `by: sso`;
 * - a back-channel logout from the provider ends the session at once; a forged logout token, or one issued more than
 *   10 minutes ago, is refused and the session stays;
 * - the periodic re-check (`--sso-recheck`) takes the provider's groups anew, and ends a session the provider ended;
 * - an account the operator lets the provider take over (`users allow-sso-link`) is linked at its next sign-in, and its
 *   own second factor is asked after a provider sign-in without MFA, not after one with it; a person links their own
 *   account from Settings → Security by signing in at the provider (both proofs).
 * The relying party's own calls (re-check, logout token) are also run in-process, where the clock is a seam.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OidcSignIn, SsoError } from '../../../src/auth/sso/oidc.js';
import { addUser, api, type Daemon, removeDir, runCli, type TestUser } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';
import { enrolTotp, totpCode } from '../two-factor/totp.js';
import { hiddenFields, loggedIn, WebClient } from '../../server/web-client.js';
import { CLIENT_ID, CLIENT_SECRET, PROVIDER_NAME, ssoDaemon, ssoSignIn } from './sso-flow.js';

interface WireEvent {
  type: string;
  by: string;
  actor: { id: string | null; email: string | null } | null;
  target: { type: string; id: string; label: string | null } | null;
  details: Record<string, unknown>;
}

describe('provider-managed state, back-channel logout and the re-check', () => {
  let idp: TestIdp;
  let d: Daemon;
  /** With --require-2fa all: the provider's MFA, or a factor set up here. */
  let strict: Daemon;
  let admin: TestUser;

  beforeAll(async () => {
    idp = await startIdp({ refreshTokens: true });
    [d, strict] = await Promise.all([ssoDaemon(idp, ['--sso-admin-group', 'docs-admins', '--sso-recheck', '1']), ssoDaemon(idp, ['--require-2fa', 'all', '--sso-mfa-acr', 'urn:example:loa:mfa, gold'])]);
    idp.setClients([
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${d.url}/login/sso/callback`, `${strict.url}/login/sso/callback`, 'http://127.0.0.1:9/cb'],
        post_logout_redirect_uris: [`${d.url}/login`],
        backchannel_logout_uri: `${d.url}/login/sso/backchannel-logout`,
        backchannel_logout_session_required: true,
        grant_types: ['authorization_code', 'refresh_token'],
      },
    ]);
    // The library's first account, a local admin: the provider's people come after.
    admin = await addUser(d);
  }, 180_000);
  afterAll(async () => {
    for (const daemon of [d, strict]) {
      if (!daemon) continue;
      expect(await daemon.stop()).toBe(0);
      removeDir(daemon.dataDir);
    }
    await idp?.stop();
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const events = async (query: string): Promise<WireEvent[]> => {
    const res = await api(d, `/api/v1/audit-events${query}`, { token: admin.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.events as WireEvent[];
  };

  it("marks a provider admin's flag, refuses to change it here, and audits each change a sign-in makes by: sso", async () => {
    idp.accounts.set('pia', { email: 'pia@example.org', email_verified: true, groups: ['docs-admins', 'engineering'] });
    expect((await ssoSignIn(new WebClient(d), idp, 'pia')).status).toBe(302);
    const listed = JSON.parse((await op('users', 'list', '--json')).stdout).users as { id: string; email: string; admin: boolean; admin_from: string | null }[];
    const pia = listed.find((u) => u.email === 'pia@example.org')!;
    expect(pia).toMatchObject({ admin: true, admin_from: PROVIDER_NAME });
    expect(listed.find((u) => u.email === admin.email)).toMatchObject({ admin: true, admin_from: null });

    // The web marks it and offers no button; a hand-made form post is refused, saying where to change it.
    const web = await loggedIn(d, admin);
    const page = await web.get('/admin/users');
    const row = new RegExp(`<tr data-user-id="${pia.id}">([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
    expect(row).toContain(`from ${PROVIDER_NAME}`);
    expect(row).not.toContain('Remove admin');
    const refused = await web.submit(`/admin/users/${pia.id}/admin`, { _csrf: web.csrf, admin: 'off' });
    expect(refused.text).toContain(`through ${PROVIDER_NAME}&#39;s admin group`);
    const cli = await op('users', 'set-admin', 'pia@example.org', '--off');
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain(`change their groups at ${PROVIDER_NAME}`);
    expect(JSON.parse((await op('users', 'list', '--json')).stdout).users.find((u: { id: string }) => u.id === pia.id).admin).toBe(true);

    // The first sign-in: the account made, the provider's groups made and joined, the admin flag granted, each once.
    const first = (await events(`?by=sso&target=${pia.id}`)).map((e) => [e.type, e.details.admin ?? null]);
    expect(first.sort()).toEqual([
      ['account.admin_changed', true],
      ['account.created', null],
    ]);
    const joined = (await events('?by=sso&type=group.member_added')).filter((e) => e.details.user === pia.id).map((e) => e.target!.label);
    expect(joined.sort()).toEqual(['docs-admins', 'engineering']);
    expect((await events('?by=sso&type=group.created')).map((e) => e.target!.label)).toEqual(expect.arrayContaining(['docs-admins', 'engineering']));
    for (const e of await events(`?by=sso&target=${pia.id}`)) expect(e.actor).toEqual({ id: pia.id, email: 'pia@example.org' });

    // The provider takes her out of the admin group: the next sign-in removes the flag, and says so by: sso.
    idp.accounts.set('pia', { email: 'pia@example.org', email_verified: true, groups: ['engineering'] });
    expect((await ssoSignIn(new WebClient(d), idp, 'pia')).status).toBe(302);
    const after = (await events(`?by=sso&target=${pia.id}&type=account.admin_changed`)).map((e) => e.details.admin);
    expect(after).toEqual([false, true]);
    const left = (await events('?by=sso&type=group.member_removed')).filter((e) => e.details.user === pia.id).map((e) => e.target!.label);
    expect(left).toEqual(['docs-admins']);
    // Still the provider's to set: making her an admin here is refused too.
    const make = await op('users', 'set-admin', 'pia@example.org');
    expect(make.code).not.toBe(0);
    // A sign-in that changes nothing records nothing by: sso.
    const before = (await events('?by=sso')).length;
    expect((await ssoSignIn(new WebClient(d), idp, 'pia')).status).toBe(302);
    expect((await events('?by=sso')).length).toBe(before);
  });

  it("--require-2fa takes the provider's MFA (amr, or an acr named by --sso-mfa-acr) as the second factor; without it, a factor is set up here first", async () => {
    idp.accounts.set('max', { email: 'max@example.org', email_verified: true });
    idp.amr.set('max', ['pwd', 'otp', 'mfa']);
    idp.accounts.set('paul', { email: 'paul@example.org', email_verified: true });
    const withMfa = new WebClient(strict);
    expect((await ssoSignIn(withMfa, idp, 'max')).status).toBe(302);
    expect((await withMfa.get('/projects')).status).toBe(200);
    const without = new WebClient(strict);
    expect((await ssoSignIn(without, idp, 'paul')).status).toBe(302);
    const sent = await without.get('/projects');
    expect(sent.status).toBe(302);
    expect(sent.location).toBe(`/settings/security?return_to=${encodeURIComponent('/projects')}`);
    expect((await withMfa.get('/settings/security')).text).toContain('with identity provider, with its MFA');
    // An acr the operator names as multi-factor (--sso-mfa-acr) counts too; another provider's acr does not.
    idp.accounts.set('ada', { email: 'ada@example.org', email_verified: true });
    idp.acr.set('ada', 'urn:example:loa:mfa');
    const byAcr = new WebClient(strict);
    expect((await ssoSignIn(byAcr, idp, 'ada')).status).toBe(302);
    expect((await byAcr.get('/projects')).status).toBe(200);
    idp.accounts.set('lee', { email: 'lee@example.org', email_verified: true });
    idp.acr.set('lee', 'urn:example:loa:pwd');
    const otherAcr = new WebClient(strict);
    expect((await ssoSignIn(otherAcr, idp, 'lee')).status).toBe(302);
    expect((await otherAcr.get('/projects')).status).toBe(302);
    // Paul sets up an authenticator app here; the session has its second factor then, and every page opens.
    await enrolTotp(without);
    expect((await without.get('/projects')).status).toBe(200);
    expect((await without.get('/settings/security')).text).toContain('with identity provider and authenticator code');
  });

  it("asks a linked account's own factor (code or recovery code) after a provider sign-in without MFA, not after one with MFA", async () => {
    const lena = await addUser(d, { email: 'lena@example.org' });
    const { secret, recoveryCodes } = await enrolTotp(await loggedIn(d, lena));
    idp.accounts.set('lena', { email: 'lena@example.org', email_verified: true });

    // Without --sso-link-accounts the provider may not take her account over, until it is allowed for this account.
    const taken = await ssoSignIn(new WebClient(d), idp, 'lena');
    expect(taken.status).toBe(403);
    expect(taken.text).toContain('may not take it over');
    const allowed = await op('users', 'allow-sso-link', 'lena@example.org');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await events('?type=account.link_offered&target=lena@example.org')).map((e) => e.by)).toEqual(['operator']);

    // The provider says it asked two factors: the account's own is not asked again.
    idp.amr.set('lena', ['pwd', 'otp']);
    const withMfa = new WebClient(d);
    expect((await ssoSignIn(withMfa, idp, 'lena', '/projects')).location).toBe('/projects');
    expect((await withMfa.get('/projects')).status).toBe(200);
    idp.amr.delete('lena');

    // Without MFA there, the provider's sign-in stands for a password: the second step asks first. A recovery code
    // does there what it does after a password.
    const recovered = new WebClient(d);
    expect((await ssoSignIn(recovered, idp, 'lena')).location).toBe('/login/verify');
    expect((await recovered.get('/projects')).status).toBe(302);
    await recovered.get('/login/verify');
    expect((await recovered.post('/login/verify', { _csrf: recovered.csrf, code: recoveryCodes[0]!, return_to: '' })).location).toBe('/');
    expect((await recovered.get('/settings/security')).text).toContain('with identity provider and recovery code');

    // And the code, back to where the person was going.
    const web = new WebClient(d);
    const toVerify = `/login/verify?return_to=${encodeURIComponent('/projects')}`;
    expect((await ssoSignIn(web, idp, 'lena', '/projects')).location).toBe(toVerify);
    expect((await web.get(toVerify)).text).toContain('name="code"');
    expect((await web.post('/login/verify', { _csrf: web.csrf, code: '000000', return_to: '/projects' })).status).toBe(401);
    expect((await web.post('/login/verify', { _csrf: web.csrf, code: totpCode(secret, 1), return_to: '/projects' })).location).toBe('/projects');
    expect((await web.get('/projects')).status).toBe(200);
    expect((await web.get('/settings/security')).text).toContain('with identity provider and authenticator code');

    const methods = (await events('?type=sign_in.succeeded')).filter((e) => e.actor?.email === 'lena@example.org').map((e) => e.details.method);
    expect(methods.filter((m) => String(m).startsWith('sso')).sort()).toEqual(['sso+mfa', 'sso+recovery', 'sso+totp']);
    expect((await events(`?type=account.linked&target=lena@example.org`)).length).toBe(1);

    // The session the second step made still follows the provider: its back-channel logout ends it at once.
    await idp.endSession('lena');
    expect((await web.get('/projects')).status).toBe(302);
    const ended = (await events('?type=session.ended&by=sso')).filter((e) => e.actor?.email === 'lena@example.org');
    expect(ended.map((e) => e.details.reason)).toEqual(['back-channel logout']);
  });

  it('links a signed-in account from Settings → Security by a sign-in at the provider, and refuses a provider account linked elsewhere', async () => {
    idp.accounts.set('nico-idp', { email: 'nico.home@example.net', email_verified: false });
    const nico = await addUser(d, { email: 'nico@example.org' });
    /** Settings → Security's "Link with …" posted by `web`, and the provider's sign-in as `login`: where it ends. */
    const link = async (web: WebClient, login: string) => {
      const page = await web.get('/settings/security');
      expect(page.text).toContain(`Link with ${PROVIDER_NAME}`);
      const away = await web.post('/login/sso', hiddenFields(page.text, '/login/sso'));
      expect(away.location?.startsWith(idp.issuer), away.text.slice(0, 300)).toBe(true);
      const back = await idp.signIn(away.location!, login);
      return web.get(back.pathname + back.search);
    };
    const web = await loggedIn(d, nico);
    const done = await link(web, 'nico-idp');
    expect(done.location).toBe('/settings/security');
    const page = await web.get('/settings/security');
    expect(page.text).toContain(`Your account is linked with ${PROVIDER_NAME}`);
    expect(page.text).not.toContain(`Link with ${PROVIDER_NAME}`);
    // The provider now signs in to Nico's account (another e-mail there, not even verified: the two proofs linked it).
    const viaProvider = new WebClient(d);
    expect((await ssoSignIn(viaProvider, idp, 'nico-idp')).status).toBe(302);
    expect((await viaProvider.get('/settings/security')).text).toContain('nico@example.org');
    const linked = await events('?type=account.linked&target=nico@example.org');
    expect(linked.map((e) => [e.by, e.details.how])).toEqual([['user', 'settings']]);

    // Another account cannot take the same provider account.
    const omar = await addUser(d, { email: 'omar@example.org' });
    const other = await loggedIn(d, omar);
    expect((await link(other, 'nico-idp')).location).toBe('/settings/security');
    expect((await other.get('/settings/security')).text).toContain('linked to another account here');
    expect((await events('?type=account.linked&target=omar@example.org')).length).toBe(0);
  });

  it('ends the session at once when the provider sends a back-channel logout, and refuses a forged one', async () => {
    idp.accounts.set('bo', { email: 'bo@example.org', email_verified: true, groups: ['engineering'] });
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'bo')).status).toBe(302);
    expect((await web.get('/projects')).status).toBe(200);
    await idp.endSession('bo');
    const after = await web.get('/projects');
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login/);
    const ended = (await events('?type=session.ended&by=sso')).find((e) => e.actor?.email === 'bo@example.org');
    expect(ended?.details).toMatchObject({ reason: 'back-channel logout', sessions: 1, provider: PROVIDER_NAME });

    // Not signed by the provider: 400, nothing ended (pia, whom it names, stays signed in).
    idp.accounts.set('pia', { email: 'pia@example.org', email_verified: true, groups: ['engineering'] });
    const pia = new WebClient(d);
    expect((await ssoSignIn(pia, idp, 'pia')).status).toBe(302);
    expect((await pia.get('/projects')).status).toBe(200);
    const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: idp.issuer, aud: CLIENT_ID, sub: 'pia', iat: Math.floor(Date.now() / 1000), jti: 'x', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })).toString('base64url')}.`;
    const res = await fetch(`${d.url}/login/sso/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: forged }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    expect((await pia.get('/projects')).status).toBe(200);
    expect((await events('?type=session.ended&by=sso')).filter((e) => e.actor?.email === 'pia@example.org')).toEqual([]);
  });

  it('refuses a logout token the provider signed more than 10 minutes ago, keeping the session; takes one of 9 minutes', async () => {
    // Signed with the provider's own key: oidc-provider's development keystore, which this test provider serves (its
    // jwks_uri publishes the same key, checked here), so the daemon's check of the signature passes.
    const { SignJWT, importJWK } = await import('jose');
    const keystore = (await import('oidc-provider/lib/consts/dev_keystore.js' as string)) as { default: { keys: ({ kid: string; alg: string; n: string } & Record<string, unknown>)[] } };
    const key = keystore.default.keys.find((k) => k.alg === 'RS256')!;
    const discovery = (await (await idp.fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    const published = ((await (await idp.fetch(discovery.jwks_uri)).json()) as { keys: { kid: string; n?: string }[] }).keys;
    expect(published.find((k) => k.kid === key.kid)?.n, 'the provider publishes the key the tokens are signed with').toBe(key.n);
    const privateKey = await importJWK(key, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    /** A logout token for `sub` as the provider sends one, but issued `minutesAgo`; it expires well in the future. */
    const logoutToken = (sub: string, minutesAgo: number) =>
      new SignJWT({ sub, jti: `age-${minutesAgo}-${Math.random()}`, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'logout+jwt' })
        .setIssuer(idp.issuer)
        .setAudience(CLIENT_ID)
        .setIssuedAt(now - minutesAgo * 60)
        .setExpirationTime(now + 5 * 60)
        .sign(privateKey);
    const post = (token: string) =>
      fetch(`${d.url}/login/sso/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }) });
    const endedFor = async (email: string) => (await events('?type=session.ended&by=sso')).filter((e) => e.actor?.email === email);

    idp.accounts.set('ivo', { email: 'ivo@example.org', email_verified: true });
    const ivo = new WebClient(d);
    expect((await ssoSignIn(ivo, idp, 'ivo')).status).toBe(302);
    expect((await ivo.get('/projects')).status).toBe(200);

    // 11 minutes old: refused for its age alone (400), and Ivo stays signed in.
    const old = await post(await logoutToken('ivo', 11));
    expect(old.status).toBe(400);
    const refusal = (await old.json()) as { error: string; error_description: string };
    expect(refusal.error).toBe('invalid_request');
    expect(refusal.error_description).toMatch(/"iat" claim timestamp check failed \(too far in the past\)/);
    expect((await ivo.get('/projects')).status).toBe(200);
    expect(await endedFor('ivo@example.org')).toEqual([]);

    // 9 minutes old, otherwise the same: taken, and Ivo's session ends at once.
    const recent = await post(await logoutToken('ivo', 9));
    expect(recent.status, await recent.clone().text()).toBe(200);
    const after = await ivo.get('/projects');
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login/);
    expect((await endedFor('ivo@example.org')).map((e) => e.details)).toEqual([expect.objectContaining({ reason: 'back-channel logout', sessions: 1 })]);
  });

  it('takes the provider’s groups anew at the re-check, without a new sign-in', async () => {
    const project = (await api(d, '/api/v1/projects', { token: admin.apiKey, body: { name: 'Runbooks' } })).body.id as string;
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: admin.apiKey, body: { group: 'engineering', role: 'viewer' } })).status).toBe(201);
    idp.accounts.set('cy', { email: 'cy@example.org', email_verified: true, groups: ['engineering'] });
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'cy')).status).toBe(302);
    expect((await web.get(`/projects/${project}`)).status).toBe(200);
    idp.accounts.set('cy', { email: 'cy@example.org', email_verified: true, groups: ['support'] });
    // Within --sso-recheck (1 s) a page asks the provider again, with the refresh token, and the group is gone.
    await waitFor(async () => (await web.get(`/projects/${project}`)).status === 404, 30_000, 'the group lost at the re-check');
    expect((await web.get('/projects')).status).toBe(200);
    const left = (await events('?by=sso&type=group.member_removed')).find((e) => e.details.email === 'cy@example.org');
    expect(left?.target?.label).toBe('engineering');
  });

  describe('the relying party, in-process', () => {
    const REDIRECT = 'http://127.0.0.1:9/cb';
    const rp = (now?: () => number) =>
      new OidcSignIn(
        { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: 'openid email profile groups', groupsClaim: 'groups', redirectUri: () => REDIRECT },
        { fetch: idp.fetch, ...(now ? { now } : {}) },
      );
    async function signedIn(login: string) {
      const signIn = rp();
      const { url, transaction } = await signIn.begin();
      const back = await idp.signIn(url, login);
      return signIn.complete(transaction, back.search);
    }

    it('a sign-in keeps its session id and a refresh token; the re-check renews them until the provider ends the session', async () => {
      idp.accounts.set('dee', { email: 'dee@example.org', email_verified: true, groups: ['engineering'] });
      const identity = await signedIn('dee');
      expect(identity.session).toMatchObject({ sid: expect.any(String), refreshToken: expect.any(String) });
      idp.accounts.set('dee', { email: 'dee@example.org', email_verified: true, groups: ['support'] });
      const again = await rp().recheck('dee', identity.session!);
      expect(again).toMatchObject({ ended: false, identity: { groups: ['support'] } });
      await idp.endSession('dee');
      const over = await rp().recheck('dee', again.ended ? identity.session! : again.identity.session!);
      expect(over.ended).toBe(true);
    });

    it('with no refresh token, asks userinfo while the access token lasts, and ends the session once nothing is left to ask with', async () => {
      idp.accounts.set('eve', { email: 'eve@example.org', email_verified: true });
      const { session } = await signedIn('eve');
      const withoutRefresh = { ...session!, refreshToken: null };
      expect((await rp().recheck('eve', withoutRefresh)).ended).toBe(false);
      const later = await rp(() => Date.now() + 2 * 3600_000).recheck('eve', withoutRefresh);
      expect(later).toMatchObject({ ended: true, why: expect.stringContaining('nothing') });
    });

    it("checks a logout token: the provider's signature, our audience, the logout event", async () => {
      const refusal = async (signIn: OidcSignIn, token: string) => {
        const err = await signIn.verifyLogoutToken(token).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, token).toBeInstanceOf(SsoError);
        expect((err as SsoError).failure).toBe('invalid');
        return (err as SsoError).message;
      };
      expect(await refusal(rp(), 'not.a.token')).toMatch(/failed a check/);
      // Tokens signed with a key the provider publishes here (its jwks_uri answered with this test's key): a good one
      // is taken, and each one that breaks one rule is refused for that rule.
      const { SignJWT, exportJWK, generateKeyPair } = await import('jose');
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const jwk = { ...(await exportJWK(publicKey)), kid: 'test', alg: 'ES256', use: 'sig' };
      const jwksUri = ((await (await idp.fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string }).jwks_uri;
      const ourKeys: typeof fetch = async (input, init) => (String(input instanceof Request ? input.url : input) === jwksUri ? Response.json({ keys: [jwk] }) : idp.fetch(input, init));
      const signIn = new OidcSignIn(
        { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: 'openid email profile groups', groupsClaim: 'groups', redirectUri: () => REDIRECT },
        { fetch: ourKeys },
      );
      const event = { 'http://schemas.openid.net/event/backchannel-logout': {} };
      const sign = (claims: Record<string, unknown>, audience: string = CLIENT_ID) =>
        new SignJWT({ jti: `j-${Math.random()}`, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'test' }).setIssuer(idp.issuer).setAudience(audience).setIssuedAt().sign(privateKey);
      expect(await signIn.verifyLogoutToken(await sign({ sub: 'pia', events: event }))).toMatchObject({ sub: 'pia', sid: null });
      expect(await refusal(signIn, await sign({ sub: 'pia', events: event }, 'another-client'))).toMatch(/failed a check.*aud/i);
      expect(await refusal(signIn, await sign({ sub: 'pia' }))).toMatch(/failed a check.*events/i);
      expect(await refusal(signIn, await sign({ sub: 'pia', events: {} }))).toMatch(/no back-channel logout event/);
      expect(await refusal(signIn, await sign({ sub: 'pia', events: event, nonce: 'n' }))).toMatch(/has a nonce/);
      expect(await refusal(signIn, await sign({ events: event }))).toMatch(/neither a person \(sub\) nor a session \(sid\)/);

      // At most 10 minutes old (by iat), on the relying party's clock, with its 30 seconds of tolerance: a token
      // issued at a fixed time is taken 9 minutes later and refused 11 minutes later; its exp would still allow it.
      const issued = Math.floor(Date.now() / 1000);
      const dated = await new SignJWT({ jti: 'j-dated', sub: 'pia', events: event })
        .setProtectedHeader({ alg: 'ES256', kid: 'test' })
        .setIssuer(idp.issuer)
        .setAudience(CLIENT_ID)
        .setIssuedAt(issued)
        .setExpirationTime(issued + 3600)
        .sign(privateKey);
      const at = (minutesLater: number) =>
        new OidcSignIn(
          { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: 'openid email profile groups', groupsClaim: 'groups', redirectUri: () => REDIRECT },
          { fetch: ourKeys, now: () => (issued + minutesLater * 60) * 1000 },
        );
      expect(await at(9).verifyLogoutToken(dated)).toMatchObject({ sub: 'pia' });
      expect(await at(10).verifyLogoutToken(dated)).toMatchObject({ sub: 'pia' });
      expect(await refusal(at(11), dated)).toMatch(/failed a check.*"iat" claim timestamp check failed \(too far in the past\)/);
    });
  });
});
