import { z } from 'zod';
import type { ApiRoute, ResponseSpec } from './api/route.js';
import { ErrorBody } from './api/schemas.js';

const toOpenApiPath = (path: string) => '/api/v1' + path.replace(/:([A-Za-z_]+)/g, '{$1}');

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
}

function parameters(route: ApiRoute) {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const js = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: prop });
    }
  }
  return out;
}

/**
 * Errors the shared middleware answers on a route before or around its handler (bearer, body
 * parsing, validation). Declared here so clients and the contract test see every real status;
 * a route's own declaration of the same status wins.
 */
function sharedErrors(route: ApiRoute): Record<number, ResponseSpec> {
  const out: Record<number, ResponseSpec> = {};
  const hasBody = route.rawBody || ['POST', 'PATCH', 'PUT'].includes(route.method);
  if (hasBody || route.query || route.params) out[400] = { description: 'Invalid request (the message names the field)', schema: ErrorBody };
  if (route.scope) {
    out[401] = { description: 'Missing, malformed, unknown, expired or revoked credential (see WWW-Authenticate)', schema: ErrorBody };
    const kinds = route.credentials
      ? `${route.credentials.map((k) => (k === 'api_key' ? 'an API key' : 'an OAuth access token')).join(' or ')}${route.tokensWith ? ` or an OAuth access token with ${route.tokensWith}` : ''}`
      : '';
    if (route.scope !== 'authenticated') {
      out[403] = { description: `The credential lacks the ${route.scope} scope${kinds ? `, or is not ${kinds}` : ''} (insufficient_scope)`, schema: ErrorBody };
    } else if (kinds) {
      out[403] = { description: `The credential is not ${kinds} (insufficient_scope)`, schema: ErrorBody };
    }
  }
  if (hasBody) {
    out[413] = { description: 'Request body too large', schema: ErrorBody };
    out[415] = {
      description: route.rawBody
        ? 'Unsupported content type'
        : 'Request body is not UTF-8 application/json, or its Content-Encoding is not gzip, deflate or br (Accept-Patch or Accept-Encoding names what is taken)',
      schema: ErrorBody,
    };
  }
  return out;
}

/**
 * The OpenAPI 3.1 document, generated from the same route declarations and zod schemas that
 * validate requests: the document cannot drift from the code.
 */
export function buildOpenApi(routes: readonly ApiRoute[], info: { version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const op: Record<string, unknown> = {
      operationId: route.name,
      summary: route.summary,
      tags: [route.tag],
      security: route.scope ? [{ bearer: route.scope === 'authenticated' ? [] : [route.scope] }] : [],
      parameters: parameters(route),
      responses: Object.fromEntries(
        Object.entries({ ...sharedErrors(route), ...route.responses }).map(([status, spec]) => [
          status,
          spec.schema
            ? { description: spec.description, content: { 'application/json': { schema: jsonSchema(spec.schema, 'output') } } }
            : spec.media
              ? { description: spec.description, content: Object.fromEntries(spec.media.map((m) => [m, { schema: { type: 'string', contentMediaType: m } }])) }
              : { description: spec.description },
        ]),
      ),
    };
    if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } };
    if (route.rawBody && route.body === undefined) op.requestBody = { required: true, content: { 'multipart/form-data': { schema: { type: 'object' } } } };
    const path = toOpenApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'docsearch API', version: info.version, description: 'Semantic search over your document library.' },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key (dsk_…) or an OAuth 2.0 access token' },
      },
    },
    paths,
  };
}
