import type Router from '@koa/router';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { consentRoutes } from '../web/consent.js';
import { settingsAppsRoutes } from '../web/settings-apps.js';
import { authorizeRoute } from './authorize.js';
import { metadataRoute } from './metadata.js';
import { registerRoute } from './register.js';
import { revokeRoute } from './revoke.js';
import { tokenRoute } from './token.js';

/**
 * Everything OAuth mounts on the page router (createApp's extraRouters): the protocol endpoints
 * under /api/oauth (registration included), the RFC 8414 and RFC 9728 metadata, the consent decision and the two settings pages.
 */
export function oauthRouters(oauth: OAuthProvider): (router: Router<AppState>, s: Services) => void {
  return (router, s) => {
    authorizeRoute(router, s, oauth);
    tokenRoute(router, oauth);
    revokeRoute(router, oauth);
    metadataRoute(router, s, oauth);
    registerRoute(router, s, oauth);
    consentRoutes(router, s, oauth);
    settingsAppsRoutes(router, s, oauth);
  };
}
