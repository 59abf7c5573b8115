import type Router from '@koa/router';
import { AUTHORIZE_PARAMETERS } from '../../auth/oauth/authorize/index.js';
import type { AuthorizationRequest } from '../../auth/oauth/authorize/request.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { OAuthClientRecord } from '../../store/sql/oauth-clients.js';
import { consentPage, type SelfRegisteredApp } from '../../web/pages/consent.js';
import { refusedForUser, respondAuthorizeError } from '../oauth/authorize-errors.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { AppError } from '../../core/errors.js';
import { checkCsrf } from './csrf.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { signedIn, type WebContext } from './session.js';

function redirectHost(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host || url.protocol;
  } catch {
    return uri;
  }
}

/** What the consent page says about a client that registered itself: unverified, with what it claims. */
function selfRegistration(client: OAuthClientRecord): SelfRegisteredApp | null {
  if (client.registration !== 'dynamic' && client.registration !== 'metadata_document') return null;
  return {
    how: client.registration,
    clientUriHost: client.clientUri ? redirectHost(client.clientUri) : null,
    documentUrl: client.registration === 'metadata_document' ? client.id : null,
  };
}

/** Renders the consent screen for a checked authorization request. */
export function showConsent(ctx: WebContext, user: { email: string }, req: AuthorizationRequest): void {
  const params: Record<string, string> = {
    client_id: req.client.id,
    redirect_uri: req.redirectUri,
    response_type: 'code',
    scope: req.scopes.join(' '),
  };
  if (req.state !== undefined) params.state = req.state;
  if (req.codeChallenge) Object.assign(params, { code_challenge: req.codeChallenge, code_challenge_method: 'S256' });
  // Only /mcp's is carried: every name of the REST API was stored as null, which is what an absent resource means.
  if (req.resource !== null) params.resource = req.resource;
  render(
    ctx,
    consentPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      app: {
        name: req.client.name,
        clientId: req.client.id,
        selfRegistered: selfRegistration(req.client),
        origin: req.client.registration === 'metadata_document' ? redirectHost(req.client.id) : redirectHost(req.redirectUri),
      },
      redirectHost: redirectHost(req.redirectUri),
      scopes: req.scopes,
      params,
    }),
  );
}

/**
 * POST /oauth/consent: the user's decision. The form carries the authorization request's
 * parameters, which are checked again in full (nothing from the form is trusted), plus the
 * session's CSRF token, so another site can't approve on the user's behalf.
 */
export function consentRoutes(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.post('oauth.consent', '/oauth/consent', formBody(), async (ctx) => {
    // The sign-in gate of every page (a session short of a second factor its account has or must have is refused):
    // a grant is minted only from a session that passed it.
    const user = await signedIn(ctx, s);
    // Signed out while the consent screen was open: nothing to return to here, so say so.
    if ('reason' in user) {
      throw user.reason === 'enrol'
        ? new AppError('forbidden', 'set up a second factor first (Settings → Security), then start again from the application')
        : new AppError('unauthorized', 'your session ended before you decided — start again from the application');
    }
    checkCsrf(ctx, s);
    const params = Object.fromEntries([...AUTHORIZE_PARAMETERS].map((k) => [k, formField(ctx, k)]).filter(([, v]) => v !== ''));
    const outcome = await oauth.validateAuthorize(params, ctx.ip);
    if (!outcome.ok) {
      ctx.status = 303; // used only when the error is redirected
      return respondAuthorizeError(ctx, oauth, outcome, user.id);
    }
    if (refusedForUser(ctx, oauth, outcome.request, user.id)) return;
    const decision = formField(ctx, 'decision');
    ctx.status = 303; // RFC 9700 §4.11: a redirect after POST must not re-post the form
    ctx.redirect(decision === 'approve' ? await oauth.approve(outcome.request, user.id) : oauth.deny(outcome.request));
  });
}
