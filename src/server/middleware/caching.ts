import type { Context } from 'koa';

/**
 * A response a client may keep (a Cache-Control without no-store) that is one person's: every cache must key it by
 * the credential that fetched it (`Authorization` on the API, the session `Cookie` on the pages), so a browser two
 * people share, or a proxy, never hands it to the next person. Public answers (static assets) vary on nothing.
 */
export function varyOnCredential(ctx: Context, header: 'Authorization' | 'Cookie'): void {
  const caching = ctx.response.get('Cache-Control');
  if (caching && !/no-store|public/.test(caching)) ctx.vary(header);
}

/**
 * Sets a file's validators and answers `304` (no body) when the request's If-None-Match or If-Modified-Since says
 * the client holds these bytes already. Called before the bytes are read, so a revalidation costs neither a
 * download from the store nor a render. The headers a 200 would carry (Cache-Control, Content-Disposition) are set
 * first: a 304 must repeat them (RFC 9110 §15.4.5).
 */
export function notModified(ctx: Context, validators: { etag: string; lastModified?: Date }): boolean {
  ctx.set('ETag', validators.etag);
  if (validators.lastModified) ctx.lastModified = validators.lastModified;
  ctx.status = 200;
  if (!ctx.fresh) return false;
  ctx.status = 304;
  return true;
}
