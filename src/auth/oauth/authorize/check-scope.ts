import { DEFAULT_SCOPES, parseGrantScopes, SCOPES } from '../../scopes.js';
import { InvalidScope } from '../errors.js';
import type { AuthorizeCheck } from './request.js';

/**
 * Rules: scope is optional (default: the document scopes); when sent, each value is a known scope this client may
 * ask for. A first-party scope (`manage:keys`, the CLI's) asked for by another client is refused exactly like an
 * unknown one, and the supported list names only the scopes every client may ask for.
 */
export const checkScope: AuthorizeCheck = (ctx) => {
  const raw = ctx.params.scope;
  if (raw === undefined || !raw.trim()) {
    ctx.scopes = [...DEFAULT_SCOPES];
    return;
  }
  const { scopes, unknown } = parseGrantScopes(raw, ctx.client!.id);
  if (unknown.length > 0) throw new InvalidScope(`unknown scope: ${unknown.join(' ')} (supported: ${SCOPES.join(' ')})`);
  ctx.scopes = scopes;
};
