import type { Context } from 'koa';
import rangeParser from 'range-parser';
import type { ByteRange } from '../../store/objects/object-store.js';

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

/**
 * The one byte range a GET asks of a file of `size` bytes (RFC 9110 §14), 'unsatisfiable' when none of its ranges
 * overlaps the file, or undefined when the answer is the whole file: no Range; not a GET (§14.2: GET is the only
 * method ranges are defined for, so HEAD describes the whole file); a unit other than bytes or a header range-parser
 * cannot read (ignored, §14.2); an If-Range that no longer holds; or ranges that stay apart once overlapping and
 * adjacent ones are joined (§14.2 lets a server send the whole instead of multipart/byteranges, and a client asking
 * for many small ranges gets no more work out of it than one download). Call after notModified, which sets the
 * validators If-Range is compared with.
 */
export function requestedRange(ctx: Context, size: number): ByteRange | 'unsatisfiable' | undefined {
  const header = ctx.get('Range');
  if (ctx.method !== 'GET' || !/^bytes=/i.test(header) || !ifRangeHolds(ctx)) return undefined;
  // A suffix longer than the file means all of it (§14.1.3), which range-parser 1.3.0 calls unsatisfiable
  // (jshttp/range-parser#66): asked as `0-`, it is all of it.
  const clamped = header.replace(/([=,]\s*)-(\d+)/g, (spec, before: string, length: string) => (Number(length) > size ? `${before}0-` : spec));
  const ranges = rangeParser(size, clamped, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  return ranges !== -2 && ranges.length === 1 ? ranges[0] : undefined;
}

/**
 * If-Range (RFC 9110 §13.1.5) is absent, or names the bytes the response holds: its ETag by strong comparison (a
 * weak tag never matches), or exactly its Last-Modified date. Otherwise the client's partial copy is of other bytes.
 */
function ifRangeHolds(ctx: Context): boolean {
  const ifRange = ctx.get('If-Range');
  if (!ifRange) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === ctx.response.get('ETag');
  const lastModified = ctx.response.get('Last-Modified');
  return lastModified !== '' && Date.parse(ifRange) === Date.parse(lastModified);
}
