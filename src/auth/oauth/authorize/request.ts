import type { GrantScope } from '../../scopes.js';
import type { OAuthClientRecord } from '../../../store/sql/oauth-clients.js';
import type { ClientService } from '../clients.js';
import type { OAuthParams } from '../params.js';

/** What the authorize checks read and fill in, step by step (see ./index.ts for the order). */
export interface AuthorizeContext {
  params: OAuthParams;
  clients: ClientService;
  /** The daemon's public URL, which names its resources (RFC 8707). */
  publicUrl: string;
  /** The address the request came from (a metadata document not yet recorded is fetched on its account). */
  clientIp: string;
  client?: OAuthClientRecord;
  /** Where errors may be sent: set once the redirect target is known to be registered. */
  errorRedirectUri?: string;
  redirectUri?: string;
  scopes?: GrantScope[];
  codeChallenge?: string | null;
  resource?: string | null;
}

export type AuthorizeCheck = (ctx: AuthorizeContext) => void | Promise<void>;

/** A request that passed every check: what the consent screen shows and the code is bound to. */
export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  scopes: GrantScope[];
  codeChallenge: string | null;
  state: string | undefined;
  /** RFC 8707: the resource the tokens will be for (`mcpResource(publicUrl)`), or null for the REST API. */
  resource: string | null;
}
