import type { Clock } from '../../../core/clock.js';
import type { OAuthClientRecord } from '../../../store/sql/oauth-clients.js';
import type { OAuthStoreSet } from '../../../store/sql/oauth-transaction.js';
import type { OAuthError } from '../errors.js';
import type { OAuthParams } from '../params.js';
import type { TokenResponse } from '../tokens.js';

export interface GrantContext {
  /** Only the parameters the grant declares (plus nothing else). */
  params: OAuthParams;
  /** The authenticated client. */
  client: OAuthClientRecord;
  stores: OAuthStoreSet;
  now: Clock;
  /**
   * The request's RFC 8707 `resource`, already checked to name one of this server's resources and in its stored
   * form (null = the REST API); undefined when not sent. It must then equal the code's or grant's resource.
   */
  resource: string | null | undefined;
  /** Names a stored resource in error messages. */
  describeResource: (resource: string | null) => string;
}

/**
 * A grant type, oidc-provider style: its name, the parameters it reads, and a handler. Handlers
 * return protocol failures instead of throwing them, so that a revocation decided inside the
 * transaction (code or refresh-token reuse) is committed before the error is sent.
 */
export interface Grant {
  grantType: string;
  parameters: ReadonlySet<string>;
  handler(ctx: GrantContext): Promise<TokenResponse | OAuthError>;
}
