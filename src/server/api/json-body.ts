import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { AppError, invalidRequest } from '../../core/errors.js';
import { ownTable } from '../../core/own-table.js';
import { MAX_JSON_DEPTH, suspectKey, tooDeep } from '../../core/json-checks.js';

const JSON_LIMIT = 1024 * 1024;
/** Without a prototype: `Content-Encoding: constructor` found Object, the body was piped into `{}`, and the daemon died. */
const DECODERS = ownTable<Record<string, () => Readable & NodeJS.WritableStream>>({ gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress });
const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

const tooLarge = () => new AppError('payload_too_large', `request body is over the ${JSON_LIMIT / 1024 / 1024} MiB limit for JSON`);

/**
 * The body's bytes, decompressed by Node's zlib, read by raw-body (what koa-body reads through, asked here for bytes,
 * not text: its text is decoded leniently, and a body that is not UTF-8 must be refused, not stored with U+FFFD):
 * refused with a 413 as soon as they pass the limit (at once when the declared length does), a 400 when the request
 * ends short. raw-body pauses the stream on a refusal rather than destroying it, so the answer still goes out.
 */
async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const coding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = DECODERS[coding];
  if (coding !== 'identity' && !decoder) {
    const message = `unsupported Content-Encoding "${coding}": send ${ACCEPTED_ENCODINGS} or none`;
    throw new AppError('unsupported_media_type', message, { headers: { 'Accept-Encoding': ACCEPTED_ENCODINGS } });
  }
  // The connection closed before the route began to read (the body cut short, or bytes after it no request): raw-body
  // would call that a 500, "stream is not readable", and a decoder would wait for a close that came already.
  if (!req.readable) throw invalidRequest(req.complete ? 'the connection closed before the request body was read' : 'the request body ended before its end');
  // A plain pipe: a body that does not decompress fails the decoder alone, and the request stays open for the answer.
  const source: Readable = decoder ? req.pipe(decoder()) : req;
  // A decoder never ends when the request is cut short: its close says so.
  let cut: (err: Error) => void = () => {};
  const ended = new Promise<never>((_, reject) => (cut = reject));
  ended.catch(() => {});
  const onClose = () => req.complete || cut(invalidRequest('the request body ended before its end'));
  req.once('close', onClose);
  try {
    return await Promise.race([getRawBody(source, { limit: JSON_LIMIT, length: decoder ? undefined : req.headers['content-length'] }), ended]);
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw tooLarge();
    if (type === 'request.aborted' || type === 'request.size.invalid') throw invalidRequest('the request body ended before its end');
    throw err;
  } finally {
    req.off('close', onClose);
  }
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? 'a string' : typeof v === 'number' ? 'a number' : 'a boolean');

/** The parsed JSON object of the request: UTF-8 (RFC 8259), no repeated keys, not nested too deep; a clear 400/413/415 otherwise. */
async function readJsonObject(req: IncomingMessage): Promise<unknown> {
  const bytes = await readBytes(req);
  let text: string;
  try {
    // Fatal: a lenient decoder would store U+FFFD in place of each bad byte, and answer 201.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest('request body is not valid UTF-8 (JSON is sent in UTF-8)');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidRequest('request body is not valid JSON', [{ path: 'body', message: (err as Error).message }]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest(`request body must be a JSON object, not ${kind(value)}`);
  const suspect = suspectKey(text);
  if (suspect) throw invalidRequest(`${suspect.path}: ${suspect.problem}`, [{ path: suspect.path, message: `${suspect.path}: ${suspect.problem}` }]);
  if (tooDeep(value)) throw invalidRequest(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** Body parsing for the JSON routes: an absent body is `{}`; anything but UTF-8 `application/json` is a 415. */
export function jsonBody(method: string): Middleware {
  return async (ctx, next) => {
    if (ctx.request.length === 0 || (!ctx.request.length && !ctx.get('transfer-encoding'))) {
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    // RFC 5789: a PATCH refused for its media type names the one it takes.
    const accepted: Record<string, string> = method === 'PATCH' ? { 'Accept-Patch': 'application/json' } : {};
    // Media types are case-insensitive (RFC 9110); koa's `type` is the header's text before the `;`.
    const type = ctx.request.type.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new AppError('unsupported_media_type', `request body must be application/json${type ? '' : ' (no Content-Type was sent)'}`, { headers: accepted });
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset && charset !== 'utf-8' && charset !== 'utf8') {
      throw new AppError('unsupported_media_type', `request body must be UTF-8 JSON, not charset=${charset}`, { headers: accepted });
    }
    (ctx.request as { body?: unknown }).body = await readJsonObject(ctx.req);
    return next();
  };
}
