import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../../helpers/daemon.js';
import { withLibraryDb } from '../../helpers/library-db.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { addClient, getCode, loggedIn, post, type RegisteredClient } from '../oauth-flow.js';

/**
 * What keeps an OAuth token working, held through the built daemon (docs/oauth.md "Lifetimes and formats", "Token",
 * "Revocation"; the spec's Limits): the lifetimes as stored, and what the bearer check and the refresh grant refuse.
 * The daemon takes no clock from outside, so expiry is reached the way test/mail/link-lifetimes does it: the stored
 * lifetime (expiry − creation) is read from the library's database, then the expiry is moved underneath the
 * running daemon — a second past now the credential is refused, a few seconds ahead the same one still works.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const TOKEN = '/api/oauth/token';
const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

type Table = 'oauth_tokens' | 'oauth_codes';
const keyOf: Record<Table, string> = { oauth_tokens: 'token_hash', oauth_codes: 'code_hash' };

describe('what keeps an OAuth token live', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let app: RegisteredClient;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    app = await addClient(d, { name: 'Liveness App', redirectUris: [REDIRECT] });
    web = await loggedIn(d, alice);
  });

  const auth = () => ({ client_id: app.clientId, client_secret: app.clientSecret! });
  const codeFor = (as: WebClient = web, extra: Record<string, string> = {}) => getCode(as, { client_id: app.clientId, redirect_uri: REDIRECT, ...extra });
  const exchange = (code: string) => post(d, TOKEN, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...auth() });
  const pair = async (as: WebClient = web, extra: Record<string, string> = {}) => {
    const res = await exchange(await codeFor(as, extra));
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string; scope: string };
  };
  const refresh = (token: string, extra: Record<string, string> = {}) => post(d, TOKEN, { grant_type: 'refresh_token', refresh_token: token, ...auth(), ...extra });
  const projects = (token: string) => api(d, '/api/v1/projects', { token });

  /** The stored lifetime of a code or token: its expiry minus its creation. */
  const lifetime = (table: Table, secret: string) =>
    withLibraryDb(d.dataDir, (db) => {
      const row = db.prepare(`select created_at, expires_at from ${table} where ${keyOf[table]} = ?`).get(hashOf(secret)) as { created_at: number; expires_at: number };
      return row.expires_at - row.created_at;
    });
  /** Moves a code's or token's expiry, as if time had passed (or not yet). */
  const expireAt = (table: Table, secret: string, at: number) =>
    expect(withLibraryDb(d.dataDir, (db) => db.prepare(`update ${table} set expires_at = ? where ${keyOf[table]} = ?`).run(at, hashOf(secret)).changes)).toBe(1);

  async function expectInvalidToken(token: string): Promise<void> {
    const res = await projects(token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(res.body.error).toMatchObject({ code: 'unauthorized', message: 'the credential is not valid, has expired or was revoked' });
  }

  it('keeps a code 10 minutes: refused once past it (and left unused), exchanged while within it', async () => {
    const code = await codeFor();
    expect(lifetime('oauth_codes', code)).toBe(10 * 60_000);
    expireAt('oauth_codes', code, Date.now() - 1000);
    const late = await exchange(code);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ error: 'invalid_grant', error_description: 'authorization code has expired' });
    expireAt('oauth_codes', code, Date.now() + 5000);
    expect((await exchange(code)).status).toBe(200);
  });

  it('keeps an access token 3600 s: 401 invalid_token once past it, and revoking it then reveals nothing', async () => {
    const tokens = await pair();
    expect(lifetime('oauth_tokens', tokens.access_token)).toBe(3600_000);
    expireAt('oauth_tokens', tokens.access_token, Date.now() + 5000);
    expect((await projects(tokens.access_token)).status).toBe(200);
    expireAt('oauth_tokens', tokens.access_token, Date.now() - 1000);
    await expectInvalidToken(tokens.access_token);
    const revoked = await post(d, '/api/oauth/revoke', { token: tokens.access_token, ...auth() });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toBeUndefined();
    // The refresh token outlives it and brings a working access token.
    const renewed = await refresh(tokens.refresh_token);
    expect((await projects(renewed.body.access_token)).status).toBe(200);
  });

  it('keeps a refresh token 30 days: invalid_grant once past it (and left unused), refreshed while within it', async () => {
    const tokens = await pair();
    expect(lifetime('oauth_tokens', tokens.refresh_token)).toBe(30 * 24 * 3600_000);
    expireAt('oauth_tokens', tokens.refresh_token, Date.now() - 1000);
    const late = await refresh(tokens.refresh_token);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has expired' });
    expireAt('oauth_tokens', tokens.refresh_token, Date.now() + 5000);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it('takes a refresh token for no bearer credential, and an access token for no refresh token', async () => {
    const tokens = await pair();
    await expectInvalidToken(tokens.refresh_token);
    expect((await refresh(tokens.access_token)).body).toEqual({ error: 'invalid_grant', error_description: 'refresh token is invalid' });
    // Neither attempt spent anything.
    expect((await projects(tokens.access_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it("refuses every token of a revoked grant, also one whose own row the revocation missed", async () => {
    // A refresh that races a revocation (on another replica, or committing just after it) inserts its new pair after
    // the revocation marked the grant's tokens: the grant row alone says they are revoked. Made here by marking the
    // grant only; the same holds for an account disabled underneath its tokens.
    const tokens = await pair();
    const grant = withLibraryDb(d.dataDir, (db) => {
      const { grant_id } = db.prepare('select grant_id from oauth_tokens where token_hash = ?').get(hashOf(tokens.access_token)) as { grant_id: string };
      db.prepare('update oauth_grants set revoked_at = ? where id = ?').run(Date.now(), grant_id);
      return grant_id;
    });
    expect(withLibraryDb(d.dataDir, (db) => db.prepare('select count(*) as n from oauth_tokens where grant_id = ? and revoked_at is null').get(grant) as { n: number }).n).toBe(2);
    await expectInvalidToken(tokens.access_token);
    expect((await refresh(tokens.refresh_token)).body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });

    const bob = await addUser(d);
    const bobs = await pair(await loggedIn(d, bob));
    expect((await projects(bobs.access_token)).status).toBe(200);
    withLibraryDb(d.dataDir, (db) => db.prepare('update users set disabled_at = ? where email = ?').run(Date.now(), bob.email));
    await expectInvalidToken(bobs.access_token);
    expect((await refresh(bobs.refresh_token)).body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });
  });

  it('ends on Settings → Connected apps → Revoke access, with the codes the app has not exchanged yet', async () => {
    const tokens = await pair();
    // Approved just before the revocation, exchanged just after: the page promises the app must ask again.
    const pending = await codeFor();
    expect((await web.get('/settings/connected')).text).toContain(`data-client-id="${app.clientId}"`);
    expect((await web.post(`/settings/connected/${app.clientId}/revoke`, { _csrf: web.csrf })).status).toBe(302);
    await expectInvalidToken(tokens.access_token);
    expect((await refresh(tokens.refresh_token)).body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });
    const late = await exchange(pending);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ error: 'invalid_grant', error_description: 'authorization code is invalid' });
    expect((await web.get('/settings/connected')).text).not.toContain(`data-client-id="${app.clientId}"`);
    // Allowed again on its consent screen, it works again.
    expect((await projects((await pair()).access_token)).status).toBe(200);
  });

  it('ends when the account is disabled, with the codes its approvals left unexchanged, also once it is enabled again', async () => {
    const carol = await addUser(d);
    const carolWeb = await loggedIn(d, carol);
    const tokens = await pair(carolWeb);
    const pending = await codeFor(carolWeb);
    const op = async (...args: string[]) => {
      const res = await runCli(['users', ...args, carol.email, '--data-dir', d.dataDir], { env: d.env });
      expect(res.code, res.stderr).toBe(0);
    };
    await op('disable', '--yes');
    await op('enable');
    await expectInvalidToken(tokens.access_token);
    expect((await exchange(pending)).body).toEqual({ error: 'invalid_grant', error_description: 'authorization code is invalid' });
  });

  it('narrows only the new access token: the new refresh token keeps the scope of the one presented', async () => {
    const tokens = await pair();
    const narrowed = await refresh(tokens.refresh_token, { scope: 'read:documents' });
    expect(narrowed.body.scope).toBe('read:documents');
    const write = await api(d, '/api/v1/projects', { token: narrowed.body.access_token, body: { name: 'narrowed' } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('insufficient_scope');
    // RFC 6749 §6: a refresh without scope gets what was granted, not what the last refresh asked for.
    const full = await refresh(narrowed.body.refresh_token);
    expect(full.body.scope).toBe('read:documents write:documents');
    expect((await api(d, '/api/v1/projects', { token: full.body.access_token, body: { name: 'widened-again' } })).status).toBe(201);
    // A grant narrowed at authorize stays narrow: a refresh cannot ask for more than the grant.
    const readOnly = await pair(web, { scope: 'read:documents' });
    expect((await refresh(readOnly.refresh_token, { scope: 'read:documents write:documents' })).body).toEqual({ error: 'invalid_scope', error_description: 'scope exceeds the grant: write:documents' });
  });
});
