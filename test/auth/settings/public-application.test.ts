import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { authorizePath, getCode, HEX64, loggedIn, pkce, post } from '../oauth-flow.js';

/**
 * docs/oauth.md, Clients: Settings → Applications registers an application "optionally public". A public client has
 * no secret to show or send, so PKCE S256 is what keeps a stolen code useless: the authorize request without it is
 * refused, and the code is exchanged with client_id and the verifier alone.
 */
const REDIRECT = 'https://public.example.com/cb';

describe('a public application registered on Settings → Applications', () => {
  let d: Daemon;
  let web: WebClient;
  daemonForSuite(async (started) => {
    d = started;
    web = await loggedIn(d, await addUser(d));
  });

  it('gets no secret, must use PKCE, and exchanges its code with client_id and the verifier alone', async () => {
    await web.get('/settings/applications');
    const page = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Phone App', redirect_uris: REDIRECT, public: '1' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('This is a public client: it has no secret and must use PKCE.');
    expect(page.text).not.toContain('id="new-client-secret"');
    const clientId = /id="new-client-id" readonly value="([^"]+)"/.exec(page.text)?.[1];
    expect(clientId).toMatch(/^app_/);
    expect(page.text).toContain(`<code>${clientId}</code> <span class="muted">(public)</span>`);

    const noPkce = await web.get(authorizePath({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'p1' }));
    expect(noPkce.status).toBe(302);
    expect(Object.fromEntries(new URL(noPkce.location!).searchParams)).toEqual({
      error: 'invalid_request',
      error_description: 'PKCE is required for public clients: send code_challenge and code_challenge_method=S256',
      state: 'p1',
    });

    const { verifier, challenge } = pkce();
    const code = await getCode(web, { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' });
    const exchange = { grant_type: 'authorization_code', code, client_id: clientId!, redirect_uri: REDIRECT };
    expect((await post(d, '/api/oauth/token', { ...exchange, code_verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    const tokens = await post(d, '/api/oauth/token', { ...exchange, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toMatch(HEX64);
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(200);
  });
});
