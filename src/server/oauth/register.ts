import type Router from '@koa/router';
import { OAuthError, TooManyRequests } from '../../auth/oauth/errors.js';
import { REGISTER_PATH } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import { RegistrationError } from '../../auth/oauth/registration.js';
import { SELF_REGISTRATION_OFF } from '../../auth/oauth/clients.js';
import { resolveBearer } from '../middleware/bearer.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { noStore, oauthBody, requestBody, sendOAuthError } from './respond.js';

const REALM = 'docsearch';

/** RFC 6750 §3: the registration endpoint's initial access token (policy `users`) is missing or not valid. */
function invalidToken(description: string, withError: boolean): OAuthError {
  const challenge = withError ? `Bearer realm="${REALM}", error="invalid_token", error_description="${description}"` : `Bearer realm="${REALM}"`;
  return new OAuthError('invalid_token', description, 401, true, { 'WWW-Authenticate': challenge });
}

/**
 * POST /api/oauth/register (RFC 7591): JSON only, 16 KiB at most. Order: the operator's policy (off: 403), the
 * per-address rate limit (429 with Retry-After; every attempt counts, so guessing credentials under `users` is
 * limited too), under `users` an API key or access token of an account here (its owner then owns the client),
 * then the metadata. 201 with the registered client; errors in RFC 7591 §3.2.2's format.
 */
export function registerRoute(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  const body = oauthBody({ jsonOnly: true, limit: '16kb', error: (d) => new RegistrationError('invalid_client_metadata', d) });
  router.post('oauth.register', REGISTER_PATH, async (ctx, next) => {
    const policy = oauth.registrationPolicy;
    if (policy === 'off') return sendOAuthError(ctx, new OAuthError('access_denied', SELF_REGISTRATION_OFF, 403));
    const waitMs = await oauth.takeRegistrationSlot(ctx.ip);
    if (waitMs > 0) return sendOAuthError(ctx, new TooManyRequests('too many client registrations from this address', waitMs));
    await next();
  }, body, async (ctx) => {
    try {
      let owner: string | null = null;
      if (oauth.registrationPolicy === 'users') {
        // The REST API's credentials: API keys and access tokens not bound to another resource (/mcp).
        const outcome = await resolveBearer(s.bearerResolvers, ctx.get('authorization') || undefined);
        if (!outcome.ok) {
          throw invalidToken(outcome.withError ? outcome.message : 'registering a client here needs an account: send Authorization: Bearer <API key or access token>', outcome.withError);
        }
        owner = outcome.principal.userId;
      }
      const registered = await oauth.register(requestBody(ctx), owner);
      noStore(ctx);
      ctx.status = 201;
      ctx.body = registered;
    } catch (err) {
      sendOAuthError(ctx, err);
    }
  });
}
