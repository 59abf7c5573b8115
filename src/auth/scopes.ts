/** What API keys and applications may hold: the spec's two scopes. */
export const SCOPES = ['read:documents', 'write:documents'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_SCOPES: readonly Scope[] = SCOPES;

/**
 * List, create and revoke API keys with an access token. Only the built-in CLI client may ask for it (see
 * FIRST_PARTY_SCOPES): an application must not mint a key that outlives the revocation of its own access.
 */
export const KEYS_SCOPE = 'manage:keys';

/** Every scope a grant (an authorization code, a token) can carry. */
export const GRANT_SCOPES = [...SCOPES, KEYS_SCOPE] as const;
export type GrantScope = (typeof GRANT_SCOPES)[number];

/**
 * Scopes only the named clients may request. Any other client asking for one gets the same `invalid_scope` as for a
 * scope that does not exist, so a third party cannot even learn it is there. The id is the CLI's built-in public
 * client (seeded by migration 003-oauth; CLI_CLIENT_ID in store/sql/oauth-clients.ts).
 */
export const FIRST_PARTY_SCOPES: Readonly<Record<typeof KEYS_SCOPE, readonly string[]>> = { [KEYS_SCOPE]: ['docsearch-cli'] };

/** Plain-words descriptions, shown on the consent screen and the key form. */
export const SCOPE_DESCRIPTIONS: Record<GrantScope, string> = {
  'read:documents': 'Search and read your documents and projects',
  'write:documents': 'Upload, change and delete your documents and projects',
  'manage:keys': 'List, create and revoke your API keys (only the docsearch command-line tool can ask for this)',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export const isGrantScope = (value: string): value is GrantScope => (GRANT_SCOPES as readonly string[]).includes(value);

function parse<S extends string>(value: string, known: readonly S[], is: (v: string) => v is S): { scopes: S[]; unknown: string[] } {
  const scopes: S[] = [];
  const unknown: string[] = [];
  for (const part of value.split(/[\s,]+/).filter(Boolean)) {
    if (is(part)) {
      if (!scopes.includes(part)) scopes.push(part);
    } else unknown.push(part);
  }
  return { scopes: known.filter((s) => scopes.includes(s)), unknown };
}

/** Parses a space-separated scope string of key scopes; unknown values are returned separately for the caller's error. */
export const parseScopes = (value: string) => parse(value, SCOPES, isScope);

/**
 * Parses what a client asks for: a scope only other clients may request (FIRST_PARTY_SCOPES) counts as unknown.
 */
export function parseGrantScopes(value: string, clientId: string): { scopes: GrantScope[]; unknown: string[] } {
  const { scopes, unknown } = parse(value, GRANT_SCOPES, isGrantScope);
  const allowed = (s: GrantScope) => !(s in FIRST_PARTY_SCOPES) || FIRST_PARTY_SCOPES[s as typeof KEYS_SCOPE].includes(clientId);
  return { scopes: scopes.filter(allowed), unknown: [...unknown, ...scopes.filter((s) => !allowed(s))] };
}
