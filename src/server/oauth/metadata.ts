import type Router from '@koa/router';
import { METADATA_PATH, serverMetadata } from '../../auth/oauth/metadata.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';

/** GET /.well-known/oauth-authorization-server (RFC 8414). Public and cacheable for an hour. */
export function metadataRoute(router: Router<AppState>, s: Services): void {
  router.get('oauth.metadata', METADATA_PATH, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = serverMetadata(s.publicUrl());
  });
}
