/**
 * The periodic re-check (docs/sso.md, "Sessions that follow the provider") against a provider that puts the groups
 * claim in the ID token alone, as Entra ID does, and gives no refresh token (Entra ID without offline_access): the
 * re-check can then only ask userinfo, whose answer says nothing of groups. It must not read that silence as "in no
 * group": the person would lose the required group (their session ended at the first re-check), the admin flag and
 * every group. It still ends the session once the provider says no.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, removeDir, runCli } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';
import { WebClient } from '../../server/web-client.js';
import { CLIENT_ID, CLIENT_SECRET, PROVIDER_NAME, ssoDaemon, ssoSignIn } from './sso-flow.js';

describe('the re-check with a provider whose userinfo has no groups claim (Entra ID)', () => {
  let idp: TestIdp;
  let d: Daemon;

  beforeAll(async () => {
    idp = await startIdp({ groupsInIdTokenOnly: true });
    d = await ssoDaemon(idp, ['--sso-required-group', 'staff', '--sso-admin-group', 'docs-admins', '--sso-recheck', '1']);
    // No refresh_token grant: the re-check asks userinfo while the access token lasts.
    idp.setClients([{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${d.url}/login/sso/callback`] }]);
  }, 180_000);
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await idp?.stop();
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });

  it('keeps the session, its groups and its admin flag as the sign-in set them, and still ends a session the provider ended', async () => {
    idp.accounts.set('eli', { email: 'eli@example.org', email_verified: true, groups: ['staff', 'docs-admins', 'engineering'] });
    const web = new WebClient(d);
    expect((await ssoSignIn(web, idp, 'eli')).status).toBe(302);
    // The groups came with the ID token.
    await d.logLine(/"event":"sso\.signed_in".*"groups_claim":3/);
    expect((await web.get('/admin/users')).status).toBe(200);

    // Past the 1 s interval, twice: each page asks userinfo, which names no groups.
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, 1_200));
      expect((await web.get('/admin/users')).status, `page ${i + 1} after the interval`).toBe(200);
    }
    expect(d.stdout()).not.toContain('"event":"sso.session_ended"');
    const users = JSON.parse((await op('users', 'list', '--json')).stdout).users as { email: string; admin: boolean; admin_from: string | null }[];
    expect(users.find((u) => u.email === 'eli@example.org')).toMatchObject({ admin: true, admin_from: PROVIDER_NAME });
    const members = JSON.parse((await op('groups', 'members', 'engineering', '--json')).stdout).members as { email: string }[];
    expect(members.map((m) => m.email)).toEqual(['eli@example.org']);

    // The provider's no still ends it: signed out there, its access token no longer opens userinfo.
    await idp.endSession('eli');
    await waitFor(async () => (await web.get('/projects')).status === 302, 30_000, 'the session ended at the re-check');
    await d.logLine('"event":"sso.session_ended"');
  });
});
