import type Router from '@koa/router';
import type { Context } from 'koa';
import { MCP_PATH, METADATA_PATH, PROTECTED_RESOURCE_METADATA_PATH, protectedResourceMetadata, serverMetadata } from '../../auth/oauth/metadata.js';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import { mcpResource } from '../../auth/oauth/resource.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';

/** Public metadata: cacheable for an hour, and readable by browser-based clients on any origin (it holds no secret). */
function publicDocument(ctx: Context, body: object): void {
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.body = body;
}

/**
 * GET /.well-known/oauth-authorization-server (RFC 8414), and the protected resource metadata (RFC 9728) of the
 * daemon's two resources: /mcp at /.well-known/oauth-protected-resource/mcp, the REST API at
 * /.well-known/oauth-protected-resource. Both name this server as their authorization server.
 */
export function metadataRoute(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.get('oauth.metadata', METADATA_PATH, (ctx) => publicDocument(ctx, serverMetadata(s.publicUrl(), oauth.registrationPolicy)));
  router.get('oauth.resource.mcp', PROTECTED_RESOURCE_METADATA_PATH + MCP_PATH, (ctx) =>
    publicDocument(ctx, protectedResourceMetadata(s.publicUrl(), mcpResource(s.publicUrl()))),
  );
  router.get('oauth.resource.api', PROTECTED_RESOURCE_METADATA_PATH, (ctx) => publicDocument(ctx, protectedResourceMetadata(s.publicUrl(), s.publicUrl())));
}
