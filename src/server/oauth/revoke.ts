import type Router from '@koa/router';
import { REVOKE_PATH } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { AppState } from '../state.js';
import { noStore, oauthBody, requestBody, sendOAuthError } from './respond.js';

/** POST /api/oauth/revoke (RFC 7009): 200 with an empty body, also for unknown tokens. */
export function revokeRoute(router: Router<AppState>, oauth: OAuthProvider): void {
  router.post('oauth.revoke', REVOKE_PATH, oauthBody(), async (ctx) => {
    try {
      await oauth.revoke(requestBody(ctx), ctx.get('authorization') || undefined, ctx.ip);
      noStore(ctx);
      ctx.status = 200;
      ctx.body = '';
    } catch (err) {
      sendOAuthError(ctx, err);
    }
  });
}
