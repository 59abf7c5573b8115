import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { invalidRequest } from '../../core/errors.js';
import { firstUnstorable } from '../../core/storable-text.js';
import type { WebContext } from './session.js';

/**
 * A form field may repeat this often and still read as a list (the Documents page's 50 checkboxes and more): qs turns
 * a field repeated more than its default 20 times into an object, and the selection was silently empty.
 */
const MAX_REPEATS = 1000;

/**
 * Parsed bodies refuse a NUL or a lone surrogate in any field, before a form's own checks: PostgreSQL cannot store
 * them and SQLite can, and no browser sends them (a hostile client does). The 400 page names the field.
 */
function storableOnly(parse: Middleware): Middleware {
  return async (ctx, next) => {
    await parse(ctx, async () => undefined);
    const body = (ctx.request as { body?: unknown }).body;
    const unstorable = firstUnstorable(body);
    if (unstorable) throw invalidRequest(`${unstorable.path || 'the form'}: ${unstorable.problem}`);
    return next();
  };
}

/**
 * Parses an urlencoded form (small, no files). A field's name is kept as sent: co-body turns dots on by default, which
 * made the search's `metadata.team=ops` an object and its saved search a refusal.
 */
export function formBody(): Middleware {
  const parse = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '64kb', queryString: { arrayLimit: MAX_REPEATS, allowDots: false } });
  return storableOnly(parse as unknown as Middleware);
}

export function formField(ctx: WebContext, name: string): string {
  const value = (ctx.request as { body?: Record<string, unknown> }).body?.[name];
  if (Array.isArray(value)) return String(value[0] ?? '');
  return typeof value === 'string' ? value : '';
}

export function formFields(ctx: WebContext, name: string): string[] {
  const value = (ctx.request as { body?: Record<string, unknown> }).body?.[name];
  if (Array.isArray(value)) return value.map(String);
  return typeof value === 'string' ? [value] : [];
}

/** Parses a small JSON body (a page script's WebAuthn answer); nothing else is accepted. */
export function jsonBody(): Middleware {
  const parse = koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: '64kb', jsonStrict: true });
  return storableOnly(parse as unknown as Middleware);
}

/** The parsed JSON body, or an empty object. */
export function jsonFields(ctx: WebContext): Record<string, unknown> {
  const body = (ctx.request as { body?: unknown }).body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
