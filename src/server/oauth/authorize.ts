import type Router from '@koa/router';
import { AUTHORIZE_PATH } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { AuthorizeOutcome } from '../../auth/oauth/authorize/index.js';
import { oauthErrorPage } from '../../web/pages/consent.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { showConsent } from '../web/consent.js';
import { render, requireUser, type WebContext } from '../web/session.js';

/**
 * Sends an authorize error where it may go: a redirect to a registered redirect URI with error,
 * error_description and state — or, when there is no trusted target (unknown client, no
 * registered URI to fall back to), an error page for the user. Never to an unregistered URI.
 */
export function respondAuthorizeError(ctx: WebContext, oauth: OAuthProvider, outcome: Extract<AuthorizeOutcome, { ok: false }>): void {
  if (outcome.redirectUri !== null) return ctx.redirect(oauth.errorRedirect(outcome.error, outcome.redirectUri, outcome.state));
  ctx.state.log?.debug({ error: outcome.error.error, msg: outcome.error.description }, 'authorize request refused');
  render(ctx, oauthErrorPage({ error: outcome.error.error, description: outcome.error.description }), outcome.error.status >= 500 ? 500 : 400);
}

/**
 * GET /api/oauth/authorize (RFC 6749 §4.1.1): checks the request first (so a bad request never
 * reaches the login page), then sends a signed-out user to /login and back here, and shows the
 * consent screen to a signed-in one. The decision is posted to /oauth/consent (web/consent.ts).
 */
export function authorizeRoute(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.get('oauth.authorize', AUTHORIZE_PATH, async (ctx) => {
    const outcome = await oauth.validateAuthorize(ctx.query);
    if (!outcome.ok) return respondAuthorizeError(ctx, oauth, outcome);
    const user = await requireUser(ctx, s);
    if (!user) return;
    showConsent(ctx, user, outcome.request);
  });
}
