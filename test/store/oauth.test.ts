import { expect, it } from 'vitest';
import { OAuthProvider } from '../../src/auth/oauth/provider.js';
import type { TokenResponse } from '../../src/auth/oauth/tokens.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { openOAuthStores } from '../../src/store/sql/oauth-transaction.js';
import { UserStore } from '../../src/store/sql/users.js';
import { type EngineSuite, describeEachEngine } from '../helpers/store-dialects.js';
import { RecordedAudit } from '../helpers/audit.js';

const REDIRECT = 'https://app.example.com/cb';
const now = () => Date.now();

/**
 * The OAuth stores through the real grant handlers (OAuthProvider.token), on both engines. "Replicas" are
 * providers on separate pools of one database; on SQLite they share the daemon's one connection.
 */
async function setup(suite: EngineSuite, email: string) {
  const replicas = [suite.handle(), await suite.another(), await suite.another()].map((h) => new OAuthProvider(openOAuthStores(h.db, now), now, { publicUrl: () => 'https://docsearch.example.com', audit: new RecordedAudit() }));
  const userId = (await new UserStore(suite.handle().db, now).create(email, 'h'))!.id;
  const { client, secret } = await replicas[0]!.clients.register({ name: 'App', redirectUris: [REDIRECT], userId: null });
  const code = async () => {
    const redirect = new URL(await replicas[0]!.approve({ client, redirectUri: REDIRECT, scopes: ['read:documents', 'write:documents'], codeChallenge: null, state: 's', resource: null }, userId));
    return redirect.searchParams.get('code')!;
  };
  const exchange = (replica: OAuthProvider, value: string) =>
    replica.token({ grant_type: 'authorization_code', code: value, client_id: client.id, client_secret: secret!, redirect_uri: REDIRECT }, undefined, '127.0.0.1');
  const refresh = (replica: OAuthProvider, value: string) => replica.token({ grant_type: 'refresh_token', refresh_token: value, client_id: client.id, client_secret: secret! }, undefined, '127.0.0.1');
  const live = async (t: TokenResponse) => (await replicas[0]!.resolveAccessToken(t.access_token)) !== null;
  return { replicas, userId, client, code, exchange, refresh, live };
}

const outcome = (p: Promise<TokenResponse>) =>
  p.then(
    (t) => ({ ok: true as const, t }),
    (err: { error?: string; description?: string; message?: string }) => ({ ok: false as const, error: err.error, description: err.description ?? err.message }),
  );

describeEachEngine('OAuth codes, grants and tokens', (suite) => {
  it('redeems a code once; a replay revokes what it issued; refresh rotates and its reuse revokes the grant', async () => {
    const s = await setup(suite, 'oauth-serial@example.com');
    const code = await s.code();
    const tokens = await s.exchange(s.replicas[1]!, code);
    expect(await s.live(tokens)).toBe(true);
    const rotated = await s.refresh(s.replicas[2]!, tokens.refresh_token);
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(await s.live(rotated)).toBe(true);
    // Reuse of the rotated refresh token: the grant (every token under it) is revoked.
    const reuse = await outcome(s.refresh(s.replicas[0]!, tokens.refresh_token));
    expect(reuse).toMatchObject({ ok: false, error: 'invalid_grant', description: 'refresh token has already been used; the grant is revoked' });
    expect(await s.live(rotated)).toBe(false);
    expect((await outcome(s.refresh(s.replicas[1]!, rotated.refresh_token))).ok).toBe(false);
    // A replayed code also answers invalid_grant (its grant is already revoked).
    expect(await outcome(s.exchange(s.replicas[2]!, code))).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await s.replicas[0]!.connectedApps(s.userId)).toEqual([]);
  });

  it('a code presented on three replicas at once is redeemed once, and the replays revoke its tokens', async () => {
    const s = await setup(suite, 'oauth-race@example.com');
    const code = await s.code();
    const results = await Promise.all(s.replicas.flatMap((r) => [outcome(s.exchange(r, code)), outcome(s.exchange(r, code))]));
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    // Each replay waited for the winner's transaction and saw the code used (the row lock), rather than failing
    // later at the conditional update without revoking anything.
    expect(results.filter((r) => !r.ok).map((r) => [r.error, r.description])).toEqual(
      Array(5).fill(['invalid_grant', 'authorization code has already been used; the tokens issued from it are revoked']),
    );
    expect(await s.live(won[0]!.t)).toBe(false);
    const record = await s.replicas[0]!.connectedApps(s.userId);
    expect(record).toEqual([]);
  });

  it('one refresh token presented on three replicas at once rotates once; the reuse revokes the grant', async () => {
    const s = await setup(suite, 'oauth-refresh-race@example.com');
    const tokens = await s.exchange(s.replicas[0]!, await s.code());
    const results = await Promise.all(s.replicas.map((r) => outcome(s.refresh(r, tokens.refresh_token))));
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    // The first replay waited for the rotation and saw the token used, so it revoked the grant; a later one may
    // find the grant revoked already. None failed only at the conditional update, leaving the grant alive.
    const lost = results.filter((r) => !r.ok).map((r) => r.description);
    expect(lost).toContain('refresh token has already been used; the grant is revoked');
    expect(lost.every((d) => d === 'refresh token has already been used; the grant is revoked' || d === 'refresh token has been revoked')).toBe(true);
    expect(await s.live(won[0]!.t)).toBe(false);
  });

  it('keeps clients: find, list a user\'s own, replace a confidential secret, delete with everything issued to it', async () => {
    const s = await setup(suite, 'oauth-clients@example.com');
    const stores = openOAuthStores(suite.handle().db, now);
    const owned = await stores.clients.create({ id: 'cli_owned', userId: s.userId, name: 'Mine', secretHash: 'a'.repeat(64), isPublic: false, redirectUris: [REDIRECT] });
    const pub = await stores.clients.create({ id: 'cli_public', userId: s.userId, name: 'Mine too', secretHash: null, isPublic: true, redirectUris: ['http://127.0.0.1:9/cb'] });
    expect(await stores.clients.find('cli_owned')).toEqual(owned);
    expect((await stores.clients.listOwned(s.userId)).map((c) => c.id)).toEqual(['cli_owned', 'cli_public']);
    expect(await stores.clients.replaceSecret(s.userId, 'cli_owned', 'b'.repeat(64))).toBe(true);
    expect((await stores.clients.find('cli_owned'))?.secretHash).toBe('b'.repeat(64));
    expect(await stores.clients.replaceSecret(s.userId, pub.id, 'c'.repeat(64))).toBe(false); // public: no secret
    expect(await stores.clients.replaceSecret('someone-else', 'cli_owned', 'c'.repeat(64))).toBe(false);
    // Deleting the operator-registered client of setup() takes its grants and tokens along.
    const tokens = await s.exchange(s.replicas[0]!, await s.code());
    expect(await stores.clients.delete(s.userId, s.client.id)).toBe(false); // not the user's own
    await suite.handle().db.deleteFrom('oauth_clients').where('id', '=', s.client.id).execute();
    expect(await stores.tokens.find(sha256Hex(tokens.access_token))).toBeNull();
    expect(await stores.clients.delete(s.userId, 'cli_owned')).toBe(true);
    expect(await stores.clients.find('cli_owned')).toBeNull();
  });

  it('lists connected apps with their scopes, revokes them, and purges what expired', async () => {
    const s = await setup(suite, 'oauth-connected@example.com');
    await s.exchange(s.replicas[0]!, await s.code());
    await s.exchange(s.replicas[1]!, await s.code());
    const apps = await s.replicas[2]!.connectedApps(s.userId);
    expect(apps).toEqual([{ clientId: s.client.id, clientName: 'App', scopes: ['read:documents', 'write:documents'], grantedAt: expect.any(Number), lastIssuedAt: expect.any(Number) }]);
    expect(await s.replicas[0]!.revokeConnected(s.userId, s.client.id)).toBe(2);
    expect(await s.replicas[0]!.connectedApps(s.userId)).toEqual([]);
    const stores = openOAuthStores(suite.handle().db, now);
    expect(await stores.tokens.purgeExpired(Date.now() + 31 * 24 * 3600_000)).toBeGreaterThanOrEqual(4);
    expect(await stores.codes.purgeExpired(Date.now() + 3600_000)).toBeGreaterThanOrEqual(2);
    expect(await stores.codes.find(sha256Hex('never-issued'))).toBeNull();
  });
});
