import { resolveResource } from '../resource.js';
import type { AuthorizeCheck } from './request.js';

/**
 * Rules (RFC 8707 §2): resource is optional (absent: the REST API, as before); when sent, it names one of this
 * server's resources — /mcp or the REST API — else invalid_target. The code, the grant and every token issued
 * under it are bound to it.
 */
export const checkResource: AuthorizeCheck = (ctx) => {
  const raw = ctx.params.resource;
  ctx.resource = raw === undefined ? null : resolveResource(raw, ctx.publicUrl);
};
