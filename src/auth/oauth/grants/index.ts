import { authorizationCodeGrant } from './authorization-code.js';
import type { Grant } from './grant.js';
import { refreshTokenGrant } from './refresh-token.js';

/** Supported grant types, dispatched by grant_type (oidc-provider's grants/index.js). */
export const GRANTS: ReadonlyMap<string, Grant> = new Map([authorizationCodeGrant, refreshTokenGrant].map((g) => [g.grantType, g]));
