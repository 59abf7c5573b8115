import { describe, expect, it } from 'vitest';
import { addUser, type Daemon } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';
import { addClient, authorizePath, loggedIn, pkce, type RegisteredClient } from '../oauth-flow.js';

/**
 * docs/oauth.md, Authorize: which error an authorize request gets, and where it goes. "The request is checked first
 * (client, redirect URI, response type, scope, resource, PKCE — in that order)": each request below fails two
 * neighbouring checks and must be answered by the earlier one. And an error goes to the client's registered URI only
 * for a signed-in browser: signed out, even the operator's own client gets the error page (RFC 9700 §4.11.2).
 */
const REDIRECT = 'http://127.0.0.1:9/cb';

describe('authorize errors: which one, and where it goes', () => {
  let d: Daemon;
  let web: WebClient;
  let app: RegisteredClient;

  daemonForSuite(async (started) => {
    d = started;
    app = await addClient(d, { name: 'Order App', redirectUris: [REDIRECT] });
    web = await loggedIn(d, await addUser(d));
  });

  const base = () => ({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'o1' });
  /** The error an operator's client is sent back with (signed in, so errors are redirected). */
  async function errorOf(params: Record<string, string | undefined>): Promise<Record<string, string>> {
    const res = await web.get(authorizePath(params));
    expect(res.status).toBe(302);
    const to = new URL(res.location!);
    expect(to.origin + to.pathname).toBe(REDIRECT);
    return Object.fromEntries(to.searchParams);
  }
  const unknownScope = 'read:documents admin';
  const foreignResource = 'https://elsewhere.example.com/mcp';

  it('answers with the first failing check: client, redirect URI, response type, scope, resource, PKCE', async () => {
    const unknownClient = await web.get(authorizePath({ ...base(), client_id: 'app_nobody', response_type: 'token' }));
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.location).toBeNull();
    expect((await errorOf({ ...base(), redirect_uri: 'https://evil.example/cb', response_type: 'token' })).error).toBe('invalid_redirect_uri');
    expect((await errorOf({ ...base(), response_type: 'token', scope: unknownScope })).error).toBe('unsupported_response_type');
    expect((await errorOf({ ...base(), scope: unknownScope, resource: foreignResource })).error).toBe('invalid_scope');
    expect((await errorOf({ ...base(), resource: foreignResource, code_challenge: pkce().challenge, code_challenge_method: 'plain' })).error).toBe('invalid_target');
  });

  it('refuses a code_challenge_method sent without a code_challenge', async () => {
    expect(await errorOf({ ...base(), code_challenge_method: 'S256' })).toEqual({ error: 'invalid_request', error_description: 'code_challenge_method was sent without code_challenge', state: 'o1' });
  });

  it('shows a signed-out browser the error page, never a redirect, even for the operator\'s client', async () => {
    const anon = new WebClient(d);
    for (const params of [{ ...base(), response_type: 'token' }, { ...base(), scope: unknownScope }, { ...base(), redirect_uri: undefined }]) {
      const res = await anon.get(authorizePath(params));
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.location).toBeNull();
      expect(res.text).toContain('<code class="oauth-error">');
    }
    // The same request, valid, goes to the login page first.
    const valid = await anon.get(authorizePath(base()));
    expect(valid.status).toBe(302);
    expect(valid.location).toMatch(/^\/login\?return_to=/);
  });
});
