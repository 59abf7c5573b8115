import type Router from '@koa/router';
import { TOKEN_PATH } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { AppState } from '../state.js';
import { noStore, oauthBody, requestBody, sendOAuthError } from './respond.js';

/** POST /api/oauth/token: authorization_code and refresh_token grants (RFC 6749 §4.1.3, §6). */
export function tokenRoute(router: Router<AppState>, oauth: OAuthProvider): void {
  router.post('oauth.token', TOKEN_PATH, oauthBody(), async (ctx) => {
    try {
      const tokens = await oauth.token(requestBody(ctx), ctx.get('authorization') || undefined, ctx.ip);
      noStore(ctx);
      ctx.body = tokens;
    } catch (err) {
      sendOAuthError(ctx, err);
    }
  });
}
