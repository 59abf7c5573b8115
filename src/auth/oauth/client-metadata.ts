import { unsafeTextProblem } from '../../core/unsafe-text.js';
import { SCOPES } from '../scopes.js';
import { isLoopbackHttp, redirectUriProblem } from './redirect-uri.js';

/**
 * The client metadata a self-registered client presents (RFC 7591 §2), read one way for both ways a client
 * registers itself: the body of POST /api/oauth/register, and a client ID metadata document. What is kept:
 * redirect_uris, client_name, client_uri (shown on the consent page, never fetched), the token endpoint auth
 * method. logo_uri and unknown fields are ignored (a logo would be a fetch the user's browser makes for the
 * client). grant_types, response_types and scope are checked against what this server does.
 */

export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME = 100;
export type TokenEndpointAuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic';
const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['none', 'client_secret_post', 'client_secret_basic'];
export const SUPPORTED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** A field that is not acceptable; `redirect` marks redirect_uris problems (RFC 7591's invalid_redirect_uri). */
export class ClientMetadataProblem extends Error {
  constructor(
    message: string,
    readonly redirect = false,
  ) {
    super(message);
    this.name = 'ClientMetadataProblem';
  }
}

export interface ClientMetadata {
  name: string | null;
  clientUri: string | null;
  redirectUris: string[];
  /** RFC 8252 §7.3: every redirect URI is loopback http, so any port on 127.0.0.1 / [::1] is accepted. */
  loopbackAnyPort: boolean;
  /** Absent in the input: null (RFC 7591's default is client_secret_basic; metadata documents mean none). */
  authMethod: TokenEndpointAuthMethod | null;
  scope: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function optionalString(doc: Record<string, unknown>, field: string): string | null {
  const v = doc[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new ClientMetadataProblem(`${field} must be a string`);
  return v.trim() || null;
}

function stringArray(doc: Record<string, unknown>, field: string): string[] | null {
  const v = doc[field];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new ClientMetadataProblem(`${field} must be an array of strings`);
  return v as string[];
}

/**
 * `echoValues`: whether a problem may quote the value it is about. A registration body is the caller's own (yes);
 * a fetched metadata document is not, and its problems are shown to whoever named its URL (no).
 */
export function readClientMetadata(doc: unknown, { echoValues }: { echoValues: boolean }): ClientMetadata {
  if (!isObject(doc)) throw new ClientMetadataProblem('the client metadata must be a JSON object');
  const quote = (value: string) => (echoValues ? ` ${JSON.stringify(value)}` : '');

  const uris = stringArray(doc, 'redirect_uris');
  if (uris === null || uris.length === 0) throw new ClientMetadataProblem('redirect_uris is required: at least one redirect URI', true);
  if (uris.length > MAX_REDIRECT_URIS) throw new ClientMetadataProblem(`at most ${MAX_REDIRECT_URIS} redirect URIs`, true);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new ClientMetadataProblem(`redirect URI${quote(uri)} ${problem}`, true);
  }
  const redirectUris = [...new Set(uris)];

  const name = optionalString(doc, 'client_name');
  if (name !== null && name.length > MAX_CLIENT_NAME) throw new ClientMetadataProblem(`client_name must be at most ${MAX_CLIENT_NAME} characters`);
  // Shown on the consent page: a name that displays as another (bidi overrides, controls) is refused.
  const unsafe = name !== null ? unsafeTextProblem(name) : undefined;
  if (unsafe) throw new ClientMetadataProblem(`client_name ${unsafe}`);
  const clientUri = optionalString(doc, 'client_uri');
  if (clientUri !== null && !/^https?:$/.test(urlOrNull(clientUri)?.protocol ?? '')) throw new ClientMetadataProblem('client_uri must be an http or https URL');
  if (clientUri !== null && clientUri.length > 2000) throw new ClientMetadataProblem('client_uri must be at most 2000 characters');

  const method = optionalString(doc, 'token_endpoint_auth_method');
  if (method !== null && !AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw new ClientMetadataProblem(`token_endpoint_auth_method${echoValues ? ` ${method}` : ''} is not supported (supported: ${AUTH_METHODS.join(', ')})`);
  }
  const grants = stringArray(doc, 'grant_types');
  if (grants !== null) {
    const unsupported = grants.filter((g) => !(SUPPORTED_GRANT_TYPES as readonly string[]).includes(g));
    if (unsupported.length > 0) throw new ClientMetadataProblem(`grant_types${echoValues ? ` ${unsupported.join(', ')}` : ''} not supported (supported: ${SUPPORTED_GRANT_TYPES.join(', ')})`);
    if (!grants.includes('authorization_code')) throw new ClientMetadataProblem('grant_types must include authorization_code');
  }
  const responses = stringArray(doc, 'response_types');
  if (responses !== null && (responses.length === 0 || responses.some((r) => r !== 'code'))) throw new ClientMetadataProblem('response_types must be ["code"]');
  const scope = optionalString(doc, 'scope');
  const unknownScopes = (scope ?? '').split(' ').filter((s) => s && !(SCOPES as readonly string[]).includes(s));
  if (unknownScopes.length > 0) throw new ClientMetadataProblem(`unknown scope${echoValues ? `: ${unknownScopes.join(' ')}` : ''} (supported: ${SCOPES.join(' ')})`);

  return {
    name,
    clientUri,
    redirectUris,
    loopbackAnyPort: redirectUris.every(isLoopbackHttp),
    authMethod: method as TokenEndpointAuthMethod | null,
    scope,
  };
}

function urlOrNull(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

/** The name shown for a client that gave none: its home page's host, else the given fallback. */
export function displayName(meta: Pick<ClientMetadata, 'name' | 'clientUri'>, fallback: string): string {
  return meta.name ?? (meta.clientUri ? urlOrNull(meta.clientUri)?.host : undefined) ?? fallback;
}
