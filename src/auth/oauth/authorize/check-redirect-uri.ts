import { InvalidRedirectUri, InvalidRequest } from '../errors.js';
import { redirectUriAllowed } from '../redirect-uri.js';
import type { AuthorizeCheck } from './request.js';

/**
 * Rules: redirect_uri is present and exactly one of the client's registered URIs (or, for
 * loopback clients, one of them on another port). We never redirect to an unregistered URI:
 * the error goes to the client's first registered URI, or to an error page when it has none —
 * or when the client is a loopback one, whose registered URI names no port it listens on.
 */
export const checkRedirectUri: AuthorizeCheck = (ctx) => {
  const client = ctx.client!;
  ctx.errorRedirectUri = client.loopbackAnyPort ? undefined : client.redirectUris[0];
  const uri = ctx.params.redirect_uri;
  if (uri === undefined) throw new InvalidRequest('missing required parameter: redirect_uri');
  if (!redirectUriAllowed(client, uri)) throw new InvalidRedirectUri('redirect_uri is not registered for this client');
  ctx.redirectUri = uri;
  ctx.errorRedirectUri = uri;
};
