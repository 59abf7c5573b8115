import type Router from '@koa/router';
import { AUTHORIZE_PATH } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { refusedForUser, respondAuthorizeError } from './authorize-errors.js';
import { showConsent } from '../web/consent.js';
import { requireUser } from '../web/session.js';

/**
 * GET /api/oauth/authorize (RFC 6749 §4.1.1): checks the request first (so a bad request never
 * reaches the login page, and a signed-out browser gets an error page), then sends a signed-out user to /login and back here, and shows the
 * consent screen to a signed-in one. The decision is posted to /oauth/consent (web/consent.ts).
 */
export function authorizeRoute(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.get('oauth.authorize', AUTHORIZE_PATH, async (ctx) => {
    const outcome = await oauth.validateAuthorize(ctx.query, ctx.ip);
    if (!outcome.ok) {
      const userId = ctx.state.session?.userId;
      const signedIn = userId ? await s.accounts.findUser(userId) : null;
      return respondAuthorizeError(ctx, oauth, outcome, signedIn?.id ?? null);
    }
    const user = await requireUser(ctx, s);
    if (!user) return;
    if (refusedForUser(ctx, oauth, outcome.request, user.id)) return;
    showConsent(ctx, user, outcome.request);
  });
}
