import { DEFAULT_SCOPES, parseScopes, SCOPES } from '../../scopes.js';
import { InvalidScope } from '../errors.js';
import type { AuthorizeCheck } from './request.js';

/** Rules: scope is optional (default: every scope); when sent, each value is a known scope. */
export const checkScope: AuthorizeCheck = (ctx) => {
  const raw = ctx.params.scope;
  if (raw === undefined || !raw.trim()) {
    ctx.scopes = [...DEFAULT_SCOPES];
    return;
  }
  const { scopes, unknown } = parseScopes(raw);
  if (unknown.length > 0) throw new InvalidScope(`unknown scope: ${unknown.join(' ')} (supported: ${SCOPES.join(' ')})`);
  ctx.scopes = scopes;
};
