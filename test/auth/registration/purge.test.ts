import { expect, it } from 'vitest';
import { MAX_UNUSED_DYNAMIC_CLIENTS } from '../../../src/auth/oauth/clients.js';
import { OAuthProvider } from '../../../src/auth/oauth/provider.js';
import { LoginAttemptStore } from '../../../src/store/sql/login-attempts.js';
import { openOAuthStores } from '../../../src/store/sql/oauth-transaction.js';
import { UserStore } from '../../../src/store/sql/users.js';
import { describeEachEngine } from '../../helpers/store-dialects.js';
import { pkce } from '../oauth-flow.js';
import { RecordedAudit } from '../../helpers/audit.js';

const DAY = 24 * 3600_000;
const REDIRECT = 'http://127.0.0.1:9/cb';

/**
 * The hourly purge of self-registered clients, 30 days on, with a clock the test moves (the daemon takes none
 * from outside), through the real provider on both engines.
 */
describeEachEngine('purge of unused self-registered clients', (suite) => {
  it('deletes a self-registered client with no live grant 30 days after it registered, and keeps the others', async () => {
    let t = Date.UTC(2030, 0, 1);
    const now = () => t;
    const db = suite.handle().db;
    const oauth = new OAuthProvider(openOAuthStores(db, now), now, { publicUrl: () => 'https://docsearch.example.com', registration: 'open', attempts: new LoginAttemptStore(db, now), audit: new RecordedAudit() });
    const userId = (await new UserStore(db, now).create(`purge-${suite.engine}@example.com`, 'h'))!.id;
    const metadata = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
    const unused = await oauth.register(metadata, null);
    const used = await oauth.register(metadata, null);
    const operator = await oauth.clients.register({ name: 'Operator App', redirectUris: [REDIRECT], userId: null });

    // `used` gets a grant on day 29: its refresh token lives until day 59.
    t += 29 * DAY;
    const { verifier, challenge } = pkce();
    const outcome = await oauth.validateAuthorize({ client_id: used.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }, '127.0.0.1');
    if (!outcome.ok) throw outcome.error;
    const code = new URL(await oauth.approve(outcome.request, userId)).searchParams.get('code')!;
    await oauth.token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: used.client_id, redirect_uri: REDIRECT }, undefined, '127.0.0.1');

    t += 2 * DAY;
    await oauth.purgeExpired();
    expect(await oauth.clients.find(unused.client_id)).toBeNull();
    expect(await oauth.clients.find(used.client_id)).not.toBeNull();
    expect(await oauth.clients.find(operator.client.id)).not.toBeNull();

    t += 30 * DAY;
    await oauth.purgeExpired();
    expect(await oauth.clients.find(used.client_id)).toBeNull();
    expect(await oauth.clients.find(operator.client.id)).not.toBeNull();
  });
});

/**
 * Registration is open to anyone (within 20 an hour per address): many addresses could still fill the table, so at
 * most MAX_UNUSED_DYNAMIC_CLIENTS clients that never got a code wait at once, the oldest making room.
 */
describeEachEngine('bound on dynamically registered clients', (suite) => {
  it('keeps the newest 1000 unused ones and every client in use, under a flood of registrations', async () => {
    let t = Date.UTC(2030, 0, 1);
    const now = () => t++;
    const db = suite.handle().db;
    const oauth = new OAuthProvider(openOAuthStores(db, now), now, { publicUrl: () => 'https://docsearch.example.com', registration: 'open', attempts: new LoginAttemptStore(db, now), audit: new RecordedAudit() });
    const userId = (await new UserStore(db, now).create(`bound-${suite.engine}@example.com`, 'h'))!.id;
    const metadata = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
    const inUse = await oauth.register(metadata, null);
    const { challenge } = pkce();
    const outcome = await oauth.validateAuthorize({ client_id: inUse.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }, '127.0.0.1');
    if (!outcome.ok) throw outcome.error;
    await oauth.approve(outcome.request, userId); // a code: the client is in use
    const flood: string[] = [];
    for (let i = 0; i < MAX_UNUSED_DYNAMIC_CLIENTS + 50; i++) flood.push((await oauth.register(metadata, null)).client_id);
    const dynamic = await db.selectFrom('oauth_clients').where('registration', '=', 'dynamic').select('id').execute();
    expect(dynamic.length).toBe(MAX_UNUSED_DYNAMIC_CLIENTS + 1);
    expect(await oauth.clients.find(inUse.client_id)).not.toBeNull();
    expect(await oauth.clients.find(flood[49]!)).toBeNull();
    expect(await oauth.clients.find(flood[50]!)).not.toBeNull();
    expect(await oauth.clients.find(flood.at(-1)!)).not.toBeNull();
  }, 120_000);
});
