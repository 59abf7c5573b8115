import type Router from '@koa/router';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context } from 'koa';
import { MCP_PATH, protectedResourceMetadataUrl } from '../../auth/oauth/metadata.js';
import { mcpResource } from '../../auth/oauth/resource.js';
import type { Principal } from '../../auth/principal.js';
import { SCOPES } from '../../auth/scopes.js';
import { MAX_MESSAGE_BYTES, messageRefusal } from '../../mcp/message-text.js';
import { createMcpServer } from '../../mcp/server.js';
import type { ApiRoute } from '../api/route.js';
import type { Services } from '../services.js';
import { resolveBearer } from '../middleware/bearer.js';
import type { AppState } from '../state.js';
import { InProcessLibrary } from './in-process-library.js';
import { allowedOrigins } from './origin.js';
import { BodyTooLarge, readBody } from './read-body.js';

type Ctx = Context & { state: AppState };

/** The request headers the transport reads (content negotiation, the protocol version); the body is parsed here. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** A refusal before the request reaches the protocol: a JSON-RPC error object (MCP clients read these) with its HTTP status. */
function refuse(ctx: Ctx, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

/**
 * Authenticates the bearer credential for /mcp: an API key with its scopes, or an OAuth access token issued for
 * this resource (RFC 8707; resolveBearer refuses a token for the REST API or any other audience, as the MCP
 * authorization spec requires). Every refusal is a 401 whose WWW-Authenticate points at the protected resource
 * metadata, which is how an MCP client finds the authorization server and registers.
 */
async function authenticate(ctx: Ctx, s: Services): Promise<Principal | null> {
  const base = s.publicUrl();
  const outcome = await resolveBearer(s.bearerResolvers, ctx.get('authorization') || undefined, mcpResource(base));
  if (outcome.ok) return outcome.principal;
  const challenge = [
    `Bearer resource_metadata="${protectedResourceMetadataUrl(base)}"`,
    `scope="${SCOPES.join(' ')}"`,
    // RFC 6750 §3.1: a request that sent no credential gets the challenge without an error code.
    ...(outcome.withError ? [`error="invalid_token"`, `error_description="${outcome.message}"`] : []),
  ].join(', ');
  refuse(ctx, 401, -32001, outcome.message, { 'WWW-Authenticate': challenge });
  return null;
}

/**
 * POST /mcp: the Streamable HTTP transport (MCP 2025-11-25), stateless: each request gets its own server and
 * transport over the caller's library, and answers with JSON, so any replica serves any request and nothing is
 * kept between them. GET (a server-to-client stream) and DELETE (ending a session) have nothing to offer
 * without sessions: 405, as the transport spec allows.
 */
export function mcpRoutes(router: Router<AppState>, s: Services, routes: readonly ApiRoute[]): void {
  // The public URL is known once the daemon listens (port 0 picks it then).
  let origins: ReadonlySet<string> | undefined;
  router.all('mcp', MCP_PATH, async (ctx) => {
    const origin = ctx.get('origin');
    origins ??= allowedOrigins(s.publicUrl(), s.config.mcpAllowedOrigins);
    if (origin && !origins.has(origin)) return refuse(ctx, 403, -32000, `requests from the origin ${origin} are not allowed (see --mcp-allowed-origins)`);
    if (ctx.method !== 'POST') return refuse(ctx, 405, -32000, 'this server is stateless: send JSON-RPC requests with POST', { Allow: 'POST' });
    const principal = await authenticate(ctx, s);
    if (!principal) return;
    ctx.state.principal = principal;
    if (ctx.request.type !== 'application/json') return refuse(ctx, 415, -32700, 'the request body must be application/json');
    let message: unknown;
    let text: string;
    try {
      text = (await readBody(ctx.req, MAX_MESSAGE_BYTES)).toString('utf8');
      message = JSON.parse(text);
    } catch (err) {
      if (err instanceof BodyTooLarge) return refuse(ctx, 413, -32600, `the request body is larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`);
      return refuse(ctx, 400, -32700, 'parse error: the request body is not valid JSON');
    }
    // As the REST API's bodies and `docsearch mcp`'s lines: repeated keys, `__proto__`, nesting, an empty batch.
    const refusal = messageRefusal(text, message, 'body');
    if (refusal) return refuse(ctx, 400, refusal.code, refusal.message);

    const report = (err: unknown) => ctx.state.log?.error({ err }, 'mcp tool failed');
    const server = createMcpServer(new InProcessLibrary(s, routes, principal), { version: s.version, scopes: principal.scopes, report });
    // The web-standard transport, handed the body parsed above: its answer is a Response that Koa sends like any
    // other (the Node wrapper would convert the request and response once more through @hono/node-server).
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const name of FORWARDED_HEADERS) if (ctx.get(name)) headers.set(name, ctx.get(name));
      const answer = await transport.handleRequest(new Request(s.publicUrl() + MCP_PATH, { method: 'POST', headers }), { parsedBody: message });
      ctx.status = answer.status;
      answer.headers.forEach((value, name) => ctx.set(name, value));
      const body = await answer.text();
      if (body) ctx.body = body;
    } finally {
      await server.close();
    }
  });
}
