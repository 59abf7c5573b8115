import type { Context } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { KEYS_SCOPE, Scope } from '../../auth/scopes.js';
import type { AppState } from '../state.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** The authenticated caller; routes with `scope: null` get none. */
  principal: Principal;
  ctx: Context & { state: AppState };
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Media types of a raw (non-JSON) body the handler sends itself, such as an original file. */
  media?: readonly string[];
}

/**
 * One /api/v1 endpoint: the single declaration its validation, OpenAPI entry, scope check and
 * handler come from. Request schemas are strict, so unknown fields are rejected by name.
 */
export interface ApiRoute<B = unknown, Q = unknown, P = unknown> {
  name: string;
  method: Method;
  /** Path below /api/v1, koa-router syntax (`/projects/:id`). */
  path: string;
  /** Required scope; `authenticated`: any valid credential (`/me`); null for a public route (health, OpenAPI). */
  scope: Scope | 'authenticated' | null;
  /** Credential kinds that may call the route (default: any). Key management refuses applications' tokens. */
  credentials?: readonly Principal['kind'][];
  /** An OAuth access token may call a route `credentials` limits to API keys when it also holds this scope (the CLI's). */
  tokensWith?: typeof KEYS_SCOPE;
  summary: string;
  tag: string;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** The route reads its own body (multipart uploads). */
  rawBody?: boolean;
  responses: Record<number, ResponseSpec>;
  handler(input: RouteInput<B, Q, P>): Promise<RouteResult>;
}

export function defineRoute<B = undefined, Q = undefined, P = undefined>(route: ApiRoute<B, Q, P>): ApiRoute {
  return route as unknown as ApiRoute;
}
