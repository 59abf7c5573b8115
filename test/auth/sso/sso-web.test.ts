/**
 * Sign-in with an OpenID Provider through the daemon's pages (docs/sso.md), the provider being oidc-provider on
 * https with a private CA the daemon trusts through NODE_EXTRA_CA_CERTS: accounts made and linked by the operator's
 * rules, the provider's groups synced at every sign-in, the sign-in pages' audit (CSRF, a new session, no open
 * redirect, an answer that belongs to no sign-in of this browser), the provider being down, password sign-in off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';
import { newKeyOnPage, WebClient } from '../../server/web-client.js';
import { PROVIDER_NAME, registerDaemons, ssoDaemon, ssoSignIn, startSso } from './sso-flow.js';

describe('sign-in with an OpenID Provider (web pages)', () => {
  let idp: TestIdp;
  let d: Daemon;
  let strict: Daemon;

  beforeAll(async () => {
    idp = await startIdp();
    d = await ssoDaemon(idp, ['--sso-admin-group', 'docs-admins']);
    // Password sign-in off; first sign-ins only for verified addresses at example.org, members of "staff"; a local
    // account is taken over by a verified sign-in with its e-mail.
    strict = await ssoDaemon(idp, ['--password-login', 'off', '--sso-allowed-domains', 'example.org', '--sso-required-group', 'staff', '--sso-link-accounts']);
    registerDaemons(idp, [d, strict]);
    idp.accounts.set('ann', { email: 'ann@example.org', email_verified: true, groups: ['engineering'] });
  }, 180_000);
  afterAll(async () => {
    for (const daemon of [d, strict]) {
      if (!daemon) continue;
      expect(await daemon.stop()).toBe(0);
      removeDir(daemon.dataDir);
    }
    await idp?.stop();
  });

  const op = (daemon: Daemon, ...args: string[]) => runCli([...args, '--data-dir', daemon.dataDir], { env: daemon.env });
  const usersOf = async (daemon: Daemon) => JSON.parse((await op(daemon, 'users', 'list', '--json')).stdout).users as { email: string; admin: boolean; disabled: boolean }[];

  it('the login page offers the provider beside the password form', async () => {
    const page = await new WebClient(d).get('/login');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Sign in with ${PROVIDER_NAME}`);
    expect(page.text).toContain('action="/login"');
  });

  it('a first sign-in makes the account, in a new session, and goes back where it was going', async () => {
    const web = new WebClient(d);
    await web.get('/login');
    const before = web.sessionCookie;
    const res = await ssoSignIn(web, idp, 'ann', '/projects?sort=name');
    expect(res.status).toBe(302);
    expect(res.location).toBe('/projects?sort=name');
    expect(web.sessionCookie).toBeDefined();
    expect(web.sessionCookie).not.toBe(before);
    // The old (anonymous) session is over, not promoted.
    const old = new WebClient(d);
    old.cookies.set('ds_session', before!);
    expect((await old.get('/projects')).status).toBe(302);
    const projects = await web.get('/projects');
    expect(projects.status).toBe(200);
    expect(projects.text).toContain('ann@example.org');
    expect((await usersOf(d)).map((u) => u.email)).toContain('ann@example.org');
    // The provider's group is a group here, marked as the provider's and read-only.
    const groups = JSON.parse((await op(d, 'groups', 'list', '--json')).stdout).groups as { name: string; source: string; member_count: number }[];
    expect(groups).toContainEqual(expect.objectContaining({ name: 'engineering', source: PROVIDER_NAME, member_count: 1 }));
    const change = await op(d, 'groups', 'remove', 'engineering', 'ann@example.org');
    expect(change.code).not.toBe(0);
    expect(change.stderr).toContain(`comes from ${PROVIDER_NAME}`);
  });

  it('does not follow a return_to that leaves the site', async () => {
    idp.accounts.set('rita', { email: 'rita@example.org', email_verified: true });
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await ssoSignIn(new WebClient(d), idp, 'rita', evil);
      expect(res.status).toBe(302);
      expect(res.location).toBe('/');
    }
     // Rita is in no group at all: the log says the claim was missing (docs/sso.md, troubleshooting).
    await d.logLine(/"event":"sso\.signed_in".*"groups_claim":"missing"/);
  });

  it('refuses a person the provider gives no e-mail, saying which claim is missing', async () => {
    idp.accounts.set('noemail', { groups: ['engineering'] });
    const res = await ssoSignIn(new WebClient(d), idp, 'noemail');
    expect(res.status).toBe(403);
    expect(res.text).toContain(`${PROVIDER_NAME} did not say what this person&#39;s e-mail is: it must send the email claim`);
  });

  it('refuses to start a sign-in without the form\'s CSRF token, or from another site', async () => {
    const web = new WebClient(d);
    await web.get('/login');
    expect((await web.post('/login/sso', { return_to: '' })).status).toBe(403);
    expect((await web.post('/login/sso', { _csrf: 'forged', return_to: '' })).status).toBe(403);
    const page = await web.get('/login');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const foreign = await web.request('POST', '/login/sso', new URLSearchParams({ _csrf: csrf }), { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
  });

  it('refuses an answer from the provider that no sign-in in this browser is waiting for, and a replayed one', async () => {
    idp.accounts.set('sam', { email: 'sam@example.org', email_verified: true });
    // Someone else's sign-in, its answer carried to another browser (login CSRF): refused, nobody signed in.
    const attacker = new WebClient(d);
    const started = await startSso(attacker);
    const back = await idp.signIn(started.location!, 'sam');
    const victim = new WebClient(d);
    await victim.get('/login');
    const carried = await victim.get(back.pathname + back.search);
    expect(carried.status).toBe(400);
    expect(carried.text).toContain('Start it again');
    expect((await victim.get('/projects')).status).toBe(302);
    // The browser that started it finishes it once; the same answer again is refused.
    expect((await attacker.get(back.pathname + back.search)).status).toBe(302);
    const again = new WebClient(d);
    const second = await startSso(again);
    const answer = await idp.signIn(second.location!, 'sam');
    // The browser's cookies as they were while the sign-in waited: a replay brings them back with the answer.
    const waiting = new Map(again.cookies);
    expect((await again.get(answer.pathname + answer.search)).status).toBe(302);
    expect((await again.get('/projects')).status).toBe(200);
    const replay = new WebClient(d);
    for (const [name, value] of waiting) replay.cookies.set(name, value);
    const replayed = await replay.get(answer.pathname + answer.search);
    expect(replayed.status).toBe(400);
    expect((await replay.get('/projects')).status).toBe(302);
  });

  it('refuses an ID token whose nonce was changed on the way, with a page saying so', async () => {
    const web = new WebClient(d);
    const started = await startSso(web);
    const url = new URL(started.location!);
    url.searchParams.set('nonce', 'chosen-by-someone-else');
    const back = await idp.signIn(url, 'sam');
    const res = await web.get(back.pathname + back.search);
    expect(res.status).toBe(400);
    expect(res.text).toContain(`The answer from ${PROVIDER_NAME} could not be verified`);
    expect((await web.get('/projects')).status).toBe(302);
  });

  it('groups from the claim share projects; the admin group makes an admin; a group lost at the provider is lost at the next sign-in', async () => {
    const owner = await addUser(d);
    const project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'Roadmap' } })).body.id as string;
    idp.accounts.set('gil', { email: 'gil@example.org', email_verified: true, groups: ['engineering', 'docs-admins'] });
    let web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'gil')).status).toBe(302);
    const share = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { group: 'engineering', role: 'viewer' } });
    expect(share.status, JSON.stringify(share.body)).toBe(201);
    expect((await web.get(`/projects/${project}`)).status).toBe(200);
    expect((await usersOf(d)).find((u) => u.email === 'gil@example.org')?.admin).toBe(true);
    expect((await web.get('/admin/users')).status).toBe(200);

    idp.accounts.set('gil', { email: 'gil@example.org', email_verified: true, groups: ['support'] });
    web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'gil')).status).toBe(302);
    expect((await web.get(`/projects/${project}`)).status).toBe(404);
    expect((await usersOf(d)).find((u) => u.email === 'gil@example.org')?.admin).toBe(false);
    expect((await web.get('/admin/users')).status).toBe(403);
    const members = JSON.parse((await op(d, 'groups', 'members', 'engineering', '--json')).stdout).members as { email: string }[];
    expect(members.map((m) => m.email)).not.toContain('gil@example.org');
  });

  it('an API key made by an SSO user stops working when the user is disabled, and the next sign-in is refused', async () => {
    idp.accounts.set('kim', { email: 'kim@example.org', email_verified: true });
    const web = new WebClient(d);
    await ssoSignIn(web, idp, 'kim');
    const keys = await web.get('/settings/keys');
    const created = await web.submit('/settings/keys', { _csrf: /name="_csrf" value="([^"]+)"/.exec(keys.text)![1]!, name: 'laptop', scopes: ['read:documents'] });
    const key = newKeyOnPage(created.text);
    expect(key).toMatch(/^dsk_/);
    expect((await api(d, '/api/v1/projects', { token: key! })).status).toBe(200);
    expect((await op(d, 'users', 'disable', 'kim@example.org', '--yes')).code).toBe(0);
    expect((await api(d, '/api/v1/projects', { token: key! })).status).toBe(401);
    const again = await ssoSignIn(new WebClient(d), idp, 'kim');
    expect(again.status).toBe(403);
    expect(again.text).toContain('This account is disabled');
  });

  it('a local account with the same e-mail is not taken over unless the operator allows it, and then only by a verified e-mail', async () => {
    const local = await addUser(d, { email: 'lou@example.org' });
    idp.accounts.set('lou', { email: local.email, email_verified: true });
    const res = await ssoSignIn(new WebClient(d), idp, 'lou');
    expect(res.status).toBe(403);
    expect(res.text).toContain('exists here already');
    // Allowed for this account: an e-mail the provider has not verified still may not take it over (anyone can
    // claim an address there); the same person verified then does, into the same account.
    const allowed = await op(d, 'users', 'allow-sso-link', local.email);
    expect(allowed.code, allowed.stderr).toBe(0);
    idp.accounts.set('lou', { email: local.email, email_verified: false });
    const unverified = await ssoSignIn(new WebClient(d), idp, 'lou');
    expect(unverified.status).toBe(403);
    expect(unverified.text).toContain('may not take it over');
    idp.accounts.set('lou', { email: local.email, email_verified: true });
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'lou')).status).toBe(302);
    expect((await web.get('/settings/account')).text).toContain(local.email);
    expect((await usersOf(d)).filter((u) => u.email === local.email)).toHaveLength(1);
  });

  it('break-glass: the operator sets a password on an account the provider made, and it logs in with it', async () => {
    const set = await runCli(['users', 'set-password', 'ann@example.org', '--data-dir', d.dataDir], { input: 'a break-glass password\n', env: d.env });
    expect(set.code, set.stderr).toBe(0);
    expect((await new WebClient(d).login('ann@example.org', 'a break-glass password')).status).toBe(302);
  });

  it('signing out ends the session and signs out at the provider (RP-initiated logout), back to our login page', async () => {
    idp.accounts.set('ola', { email: 'ola@example.org', email_verified: true });
    const web = new WebClient(d);
    await ssoSignIn(web, idp, 'ola');
    const page = await web.get('/projects');
    const out = await web.post('/logout', { _csrf: /name="_csrf" value="([^"]+)"/.exec(page.text)![1]! });
    expect(out.status).toBe(302);
    const end = new URL(out.location!);
    expect(end.origin).toBe(idp.issuer);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${d.url}/login`);
    expect((await web.get('/projects')).status).toBe(302);
    // The provider knows the address we come back to (it is registered there).
    const confirm = await idp.fetch(end);
    expect(confirm.status).toBe(200);
  });

  it('with the provider down: a clear page, and password sign-in still works', async () => {
    const local = await addUser(d);
    await idp.down();
    try {
      const web = new WebClient(d);
      const res = await startSso(web);
      expect(res.status).toBe(502);
      expect(res.text).toContain(`${PROVIDER_NAME} cannot be reached right now`);
      expect(res.text).toContain('log in with your password');
      expect((await web.login(local.email, local.password)).status).toBe(302);
    } finally {
      await idp.up();
    }
  });

  it("without the provider's CA: a page that says the certificate is not trusted, not that the provider is down (Low 23)", async () => {
    // The operator left NODE_EXTRA_CA_CERTS out: every retry fails the same way, so "try again in a while" misleads.
    const blind = await ssoDaemon(idp, [], { env: { NODE_EXTRA_CA_CERTS: undefined } });
    try {
      const res = await startSso(new WebClient(blind));
      expect(res.status).toBe(502);
      expect(res.text).toContain(`This server does not trust ${PROVIDER_NAME}&#39;s certificate`);
      expect(res.text).toContain('NODE_EXTRA_CA_CERTS');
      expect(res.text).not.toContain('cannot be reached right now');
      // The log line is written before the page is sent, but reaches this process through a pipe: wait for it.
      const failures = () => blind.stdout().split('\n').filter((l) => l.includes('"event":"sso.failed"'));
      await waitFor(() => failures().length > 0, 30_000, 'the sso.failed log line');
      const logged = failures().map((l) => JSON.parse(l) as { failure: string; reason: string });
      expect(logged).toEqual([expect.objectContaining({ failure: 'untrusted', reason: expect.stringMatching(/certificate is not trusted \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN)\)/) })]);
    } finally {
      expect(await blind.stop()).toBe(0);
      removeDir(blind.dataDir);
    }
  }, 120_000);

  describe('password sign-in off, allowed domains, a required group, linking by verified e-mail', () => {
    it('an empty library offers the provider, and its first sign-in is the admin', async () => {
      const page = await new WebClient(strict).get('/login');
      expect(page.text).not.toContain('No account exists yet');
      idp.accounts.set('first', { email: 'first@example.org', email_verified: true, groups: ['staff'] });
      expect((await ssoSignIn(new WebClient(strict), idp, 'first')).status).toBe(302);
      expect(await usersOf(strict)).toEqual([expect.objectContaining({ email: 'first@example.org', admin: true })]);
    });

    it('offers the provider alone, and refuses a password', async () => {
      const page = await new WebClient(strict).get('/login');
      expect(page.text).toContain(`Sign in with ${PROVIDER_NAME}`);
      expect(page.text).not.toContain('action="/login"');
      const local = await addUser(strict);
      const res = await new WebClient(strict).login(local.email, local.password);
      expect(res.status).toBe(403);
      expect(res.text).toContain('Password sign-in is off here');
    });

    it('refuses people outside the required group, an unverified e-mail and another domain', async () => {
      idp.accounts.set('nogroup', { email: 'nogroup@example.org', email_verified: true, groups: ['engineering'] });
      idp.accounts.set('unverified', { email: 'unverified@example.org', email_verified: false, groups: ['staff'] });
      idp.accounts.set('outsider', { email: 'outsider@elsewhere.test', email_verified: true, groups: ['staff'] });
      const cases: [string, string][] = [
        ['nogroup', 'Only members of the group “staff”'],
        ['unverified', 'verified e-mail addresses at example.org'],
        ['outsider', 'verified e-mail addresses at example.org'],
      ];
      for (const [login, words] of cases) {
        const res = await ssoSignIn(new WebClient(strict), idp, login);
        expect(res.status, login).toBe(403);
        expect(res.text, login).toContain(words);
      }
      // Not one of them got an account (each on its own: a list holding one or two of them is as wrong).
      const emails = (await usersOf(strict)).map((u) => u.email);
      for (const refused of ['nogroup@example.org', 'unverified@example.org', 'outsider@elsewhere.test']) expect(emails, refused).not.toContain(refused);
    });

    it('links the local account with the same verified e-mail, once', async () => {
      const local = await addUser(strict, { email: 'vera@example.org' });
      const keyBefore = await api(strict, '/api/v1/projects', { token: local.apiKey });
      idp.accounts.set('vera', { email: 'vera@example.org', email_verified: true, groups: ['staff'] });
      const web = new WebClient(strict);
      expect((await ssoSignIn(web, idp, 'vera')).status).toBe(302);
      // The same account: its projects, its key.
      const mine = await api(strict, '/api/v1/projects', { token: local.apiKey });
      expect(mine.body).toEqual(keyBefore.body);
      expect((await web.get('/settings/account')).text).toContain('vera@example.org');
      expect((await usersOf(strict)).filter((u) => u.email === 'vera@example.org')).toHaveLength(1);
      // The take-over is in the audit log, by the provider (read with an admin's key: vera's, made admin by the operator).
      expect((await op(strict, 'users', 'set-admin', 'vera@example.org')).code).toBe(0);
      const linked = await api(strict, '/api/v1/audit-events?type=account.linked', { token: local.apiKey });
      expect(linked.body.events).toEqual([expect.objectContaining({ by: 'sso', target: expect.objectContaining({ type: 'account', label: 'vera@example.org' }) })]);
      // Another person at the provider claiming the same address does not get it.
      idp.accounts.set('vera2', { email: 'vera@example.org', email_verified: true, groups: ['staff'] });
      expect((await ssoSignIn(new WebClient(strict), idp, 'vera2')).status).toBe(403);
    });

    it('with the provider down, the page does not offer a password', async () => {
      await idp.down();
      try {
        const res = await startSso(new WebClient(strict));
        expect(res.status).toBe(502);
        expect(res.text).toContain(`${PROVIDER_NAME} cannot be reached right now`);
        expect(res.text).not.toContain('password');
      } finally {
        await idp.up();
      }
    });

    it('break-glass: a password set while sign-in by password is off works once it is turned on again', async () => {
      const set = await runCli(['users', 'set-password', 'first@example.org', '--data-dir', strict.dataDir], { input: 'a break-glass password\n', env: strict.env });
      expect(set.code, set.stderr).toBe(0);
      expect((await new WebClient(strict).login('first@example.org', 'a break-glass password')).status).toBe(403);
      const { dataDir, databaseUrl } = strict;
      expect(await strict.stop()).toBe(0);
      strict = await ssoDaemon(idp, ['--password-login', 'on'], { dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
      expect((await new WebClient(strict).login('first@example.org', 'a break-glass password')).status).toBe(302);
    });
  });
});
