import { describe, expect, it } from 'vitest';
import type { Daemon } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { addClient, post, type RegisteredClient } from '../oauth-flow.js';

/**
 * How the token and revocation endpoints read a client's credentials and parameters (docs/oauth.md "Token": one
 * client-authentication method per request; the invalid_request and invalid_client rows of its error table). An
 * unknown code stands for any request that got past client authentication: it ends in invalid_grant.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const TOKEN = '/api/oauth/token';
const UNKNOWN_CODE = { grant_type: 'authorization_code', code: 'x'.repeat(64), redirect_uri: REDIRECT };
const PAST_CLIENT_AUTH = { error: 'invalid_grant', error_description: 'authorization code is invalid' };

describe('client authentication at the token and revocation endpoints', () => {
  let d: Daemon;
  let app: RegisteredClient;

  daemonForSuite(async (started) => {
    d = started;
    app = await addClient(d, { name: 'Auth Rules App', redirectUris: [REDIRECT] });
  });

  const basic = (): [string, string] => [app.clientId, app.clientSecret!];

  it('takes one method per request: HTTP Basic with a client_secret in the body is invalid_request', async () => {
    for (const path of [TOKEN, '/api/oauth/revoke'] as const) {
      const both = await post(d, path, { ...UNKNOWN_CODE, token: 'f'.repeat(64), client_secret: app.clientSecret! }, { basic: basic() });
      expect(both.status).toBe(400);
      expect(both.body).toEqual({ error: 'invalid_request', error_description: 'use one client authentication method: HTTP Basic or client_secret in the body, not both' });
    }
    // A body client_id beside Basic must name the same client.
    const other = await post(d, TOKEN, { ...UNKNOWN_CODE, client_id: 'app_someone_else' }, { basic: basic() });
    expect(other.body).toEqual({ error: 'invalid_request', error_description: 'client_id in the body differs from the HTTP Basic client_id' });
    expect((await post(d, TOKEN, { ...UNKNOWN_CODE, client_id: app.clientId }, { basic: basic() })).body).toEqual(PAST_CLIENT_AUTH);
  });

  it('answers a missing client_id or malformed Basic credentials with 401 invalid_client and WWW-Authenticate: Basic', async () => {
    const none = await post(d, TOKEN, UNKNOWN_CODE);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: no client_id was sent' });
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="docsearch"/);
    const malformed = await fetch(d.url + TOKEN, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('no colon here').toString('base64')}` },
      body: new URLSearchParams(UNKNOWN_CODE).toString(),
    });
    expect(malformed.status).toBe(401);
    expect(malformed.headers.get('www-authenticate')).toMatch(/^Basic realm="docsearch"/);
    expect(await malformed.json()).toEqual({ error: 'invalid_client', error_description: 'malformed HTTP Basic client credentials' });
  });

  it('refuses JSON that is not an object of strings with invalid_request, naming the parameter', async () => {
    const send = (body: unknown) => fetch(d.url + TOKEN, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const number = await send({ ...UNKNOWN_CODE, code: 42, client_id: app.clientId, client_secret: app.clientSecret });
    expect(number.status).toBe(400);
    expect(await number.json()).toEqual({ error: 'invalid_request', error_description: 'parameter code must be a string' });
    const array = await send([UNKNOWN_CODE]);
    expect(array.status).toBe(400);
    expect(await array.json()).toEqual({ error: 'invalid_request', error_description: 'the request body must be a JSON object or a form' });
    // RFC 6749 §3.1: a parameter sent empty counts as not sent.
    const empty = await send({ ...UNKNOWN_CODE, client_id: app.clientId, client_secret: app.clientSecret, code_verifier: '' });
    expect(await empty.json()).toEqual(PAST_CLIENT_AUTH);
  });
});
