import { expect, it } from 'vitest';
import { OAuthProvider } from '../../../src/auth/oauth/provider.js';
import { LoginAttemptStore } from '../../../src/store/sql/login-attempts.js';
import { openOAuthStores } from '../../../src/store/sql/oauth-transaction.js';
import { UserStore } from '../../../src/store/sql/users.js';
import { describeEachEngine } from '../../helpers/store-dialects.js';
import { pkce } from '../oauth-flow.js';

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
    const oauth = new OAuthProvider(openOAuthStores(db, now), now, { publicUrl: () => 'https://docsearch.example.com', registration: 'open', attempts: new LoginAttemptStore(db, now) });
    const userId = (await new UserStore(db, now).create(`purge-${suite.engine}@example.com`, 'h'))!.id;
    const metadata = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
    const unused = await oauth.register(metadata, null);
    const used = await oauth.register(metadata, null);
    const operator = await oauth.clients.register({ name: 'Operator App', redirectUris: [REDIRECT], userId: null });

    // `used` gets a grant on day 29: its refresh token lives until day 59.
    t += 29 * DAY;
    const { verifier, challenge } = pkce();
    const outcome = await oauth.validateAuthorize({ client_id: used.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' });
    if (!outcome.ok) throw outcome.error;
    const code = new URL(await oauth.approve(outcome.request, userId)).searchParams.get('code')!;
    await oauth.token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: used.client_id, redirect_uri: REDIRECT }, undefined);

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
