import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { WebContext } from './session.js';

/** Parses an urlencoded form (small, no files). */
export function formBody(): Middleware {
  const parse = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '64kb' });
  return parse as unknown as Middleware;
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
