import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_CLIENT_ID } from '../../../src/store/sql/oauth-clients.js';
import { OAuthProvider } from '../../../src/auth/oauth/provider.js';
import { OAuthError } from '../../../src/auth/oauth/errors.js';
import { bearer } from '../../../src/server/middleware/bearer.js';
import { errorHandler } from '../../../src/server/middleware/error-handler.js';
import type { DatabaseHandle } from '../../../src/store/sql/database.js';
import { openSqlite } from '../../../src/store/sql/sqlite.js';
import { openOAuthStores } from '../../../src/store/sql/oauth-transaction.js';
import { UserStore } from '../../../src/store/sql/users.js';
import { removeDir } from '../../helpers/daemon.js';
import { pkce } from '../oauth-flow.js';
import { RecordedAudit } from '../../helpers/audit.js';

/**
 * Expiry needs a clock the test can move, and the daemon takes none from outside: so the grant
 * logic runs in-process against a real SQLite file with an injected `now`, and the access-token
 * check runs through the real bearer middleware and error handler in a minimal Koa app.
 */
const MIN = 60_000;
const REDIRECT = 'http://127.0.0.1:9/callback';

describe('code and token lifetimes (injected clock)', () => {
  let dir: string;
  let sqlite: DatabaseHandle;
  let oauth: OAuthProvider;
  let userId: string;
  let t = Date.UTC(2030, 0, 1);
  const now = () => t;
  let server: ReturnType<Koa['listen']>;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-oauth-expiry-'));
    sqlite = await openSqlite(join(dir, 'docsearch.db'));
    oauth = new OAuthProvider(openOAuthStores(sqlite.db, now), now, { publicUrl: () => 'http://127.0.0.1', audit: new RecordedAudit() });
    userId = (await new UserStore(sqlite.db, now).create('expiry@example.com', 'not-a-real-hash'))!.id;
    const app = new Koa();
    app.use(((ctx: Koa.Context, next: Koa.Next) => {
      ctx.state.requestId = 'test';
      return next();
    }) as Koa.Middleware);
    app.use(errorHandler() as unknown as Koa.Middleware);
    app.use(bearer([oauth.resolveAccessToken], 'read:documents') as unknown as Koa.Middleware);
    app.use((ctx) => {
      ctx.body = { user: (ctx.state as { principal: { userId: string } }).principal.userId };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/projects`;
  });
  afterAll(async () => {
    server.close();
    await sqlite.close();
    removeDir(dir);
  });

  async function code(): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkce();
    const outcome = await oauth.validateAuthorize({ client_id: CLI_CLIENT_ID, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }, '127.0.0.1');
    if (!outcome.ok) throw outcome.error;
    const location = new URL(await oauth.approve(outcome.request, userId));
    return { code: location.searchParams.get('code')!, verifier };
  }
  const exchange = (c: { code: string; verifier: string }) =>
    oauth.token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, client_id: CLI_CLIENT_ID, redirect_uri: REDIRECT }, undefined, '127.0.0.1');
  const refresh = (token: string) => oauth.token({ grant_type: 'refresh_token', refresh_token: token, client_id: CLI_CLIENT_ID }, undefined, '127.0.0.1');
  async function rejection(p: Promise<unknown>): Promise<{ error: string; description: string }> {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OAuthError);
    return { error: (err as OAuthError).error, description: (err as OAuthError).description };
  }
  const call = (token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } });

  it('accepts a code at 9:59 and refuses one at 10:00 with invalid_grant', async () => {
    const early = await code();
    t += 10 * MIN - 1000;
    expect((await exchange(early)).access_token).toMatch(/^[0-9a-f]{64}$/);
    const late = await code();
    t += 10 * MIN;
    expect(await rejection(exchange(late))).toEqual({ error: 'invalid_grant', description: 'authorization code has expired' });
  });

  it('accepts an access token for 3600 s, then answers 401 invalid_token', async () => {
    const tokens = await exchange(await code());
    expect(tokens.expires_in).toBe(3600);
    t += 3599_000;
    const fresh = await call(tokens.access_token);
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toEqual({ user: userId });
    t += 1000;
    const expired = await call(tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await expired.json()) as { error: unknown }).error).toMatchObject({ code: 'unauthorized', message: 'the credential is not valid, has expired or was revoked' });
    // The refresh token outlives it and yields a working access token.
    const renewed = await refresh(tokens.refresh_token);
    expect((await call(renewed.access_token)).status).toBe(200);
  });

  it('accepts a refresh token for 30 days, then refuses it', async () => {
    const tokens = await exchange(await code());
    t += 30 * 24 * 60 * MIN - 1000;
    const renewed = await refresh(tokens.refresh_token);
    t += 30 * 24 * 60 * MIN;
    expect(await rejection(refresh(renewed.refresh_token))).toEqual({ error: 'invalid_grant', description: 'refresh token has expired' });
  });

  it('still detects reuse of a code after it expired, and revokes what it issued', async () => {
    const c = await code();
    const tokens = await exchange(c);
    t += 11 * MIN;
    // Within its hour, the access token still works until the reuse is seen.
    expect((await call(tokens.access_token)).status).toBe(200);
    expect(await rejection(exchange(c))).toEqual({ error: 'invalid_grant', description: 'authorization code has already been used; the tokens issued from it are revoked' });
    expect(await rejection(refresh(tokens.refresh_token))).toEqual({ error: 'invalid_grant', description: 'refresh token has been revoked' });
    expect((await call(tokens.access_token)).status).toBe(401);
  });

  it('consumes a code once under concurrent exchanges', async () => {
    const c = await code();
    const results = await Promise.allSettled([exchange(c), exchange(c), exchange(c)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as OAuthError).error);
    expect(failures).toEqual(['invalid_grant', 'invalid_grant']);
  });

  it('purges expired tokens but keeps used codes long enough to detect reuse', async () => {
    const c = await code();
    const tokens = await exchange(c);
    const stored = () => sqlite.db.selectFrom('oauth_tokens').select(['expires_at']).execute();
    t += 2 * 3600_000;
    expect((await stored()).some((r) => Number(r.expires_at) < t)).toBe(true);
    await oauth.purgeExpired();
    // The expired access tokens are gone; the refresh token (30 days) is kept.
    expect((await stored()).filter((r) => Number(r.expires_at) < t)).toEqual([]);
    expect((await stored()).length).toBeGreaterThan(0);
    expect((await refresh(tokens.refresh_token)).access_token).toMatch(/^[0-9a-f]{64}$/);
    expect((await rejection(exchange(c))).description).toBe('authorization code has already been used; the tokens issued from it are revoked');
    t += 2 * 24 * 3600_000;
    await oauth.purgeExpired();
    expect((await rejection(exchange(c))).description).toBe('authorization code is invalid');
  });
});
