import { InvalidRequest } from './errors.js';

export type OAuthParams = Record<string, string>;

/**
 * Normalises request parameters (query, form or JSON body) to single strings. RFC 6749 §3.1:
 * parameters must not be sent more than once; JSON values must be strings (the spec's fields
 * are all strings). Empty values count as absent (RFC 6749 §3.1).
 */
export function readParams(input: unknown, allowed?: ReadonlySet<string>): OAuthParams {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw new InvalidRequest('the request body must be a JSON object or a form');
  const out: OAuthParams = {};
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (allowed && !allowed.has(name)) continue;
    if (Array.isArray(value)) throw new InvalidRequest(`parameter ${name} must not be repeated`);
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') throw new InvalidRequest(`parameter ${name} must be a string`);
    out[name] = value;
  }
  return out;
}

export function requireParam(params: OAuthParams, name: string): string {
  const value = params[name];
  if (value === undefined) throw new InvalidRequest(`missing required parameter: ${name}`);
  return value;
}
