import type { AuthorizeOutcome } from '../../auth/oauth/authorize/index.js';
import type { AuthorizationRequest } from '../../auth/oauth/authorize/request.js';
import { AccessDenied } from '../../auth/oauth/errors.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import { oauthErrorPage } from '../../web/pages/consent.js';
import { rejectionReason } from '../rejection-reason.js';
import { render } from '../web/render.js';
import type { WebContext } from '../web/session.js';

/**
 * Sends an authorize error where it may go. RFC 9700 §4.11.2: the server redirects automatically only to a
 * URI it trusts. Any user can register an application with any https redirect URI, so a registered URI is
 * trusted only when the client was registered by the operator (or is built in) or by the signed-in user
 * themself — never one that registered itself (RFC 7591, metadata documents) unless with that user's own
 * credential — and never for a signed-out browser, which anyone can send here with any link. Otherwise — and
 * when there is no registered target at all (unknown client) — the user gets an error page.
 */
export function respondAuthorizeError(ctx: WebContext, oauth: OAuthProvider, outcome: Extract<AuthorizeOutcome, { ok: false }>, userId: string | null): void {
  const client = outcome.client;
  const trusted = userId !== null && client !== null && (client.registration === 'operator' || client.userId === userId);
  if (outcome.redirectUri !== null && trusted) return ctx.redirect(oauth.errorRedirect(outcome.error, outcome.redirectUri, outcome.state));
  ctx.state.log?.debug({ code: outcome.error.error, error: rejectionReason(ctx, outcome.error.description) }, 'authorize request refused');
  const status = outcome.error.status >= 500 ? 500 : outcome.error.status === 429 ? 429 : 400;
  for (const [k, v] of Object.entries(outcome.error.headers)) if (k.toLowerCase() === 'retry-after') ctx.set(k, v);
  render(ctx, oauthErrorPage({ error: outcome.error.error, description: outcome.error.description }), status);
}

/** A client another account registered for itself (policy `users`) is shown an error page, never the consent screen. */
export function refusedForUser(ctx: WebContext, oauth: OAuthProvider, req: AuthorizationRequest, userId: string): boolean {
  if (oauth.mayAuthorize(req.client, userId)) return false;
  const error = new AccessDenied('this application registered itself with another account, and only that account can authorize it');
  respondAuthorizeError(ctx, oauth, { ok: false, error, redirectUri: null, state: req.state, client: req.client }, userId);
  return true;
}
