export const SCOPES = ['read:documents', 'write:documents'] as const;
export type Scope = (typeof SCOPES)[number];

export const DEFAULT_SCOPES: readonly Scope[] = SCOPES;

/** Plain-words descriptions, shown on the consent screen and the key form. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'read:documents': 'Search and read your documents and projects',
  'write:documents': 'Upload, change and delete your documents and projects',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Parses a space-separated scope string; unknown values are returned separately for the caller's error. */
export function parseScopes(value: string): { scopes: Scope[]; unknown: string[] } {
  const scopes: Scope[] = [];
  const unknown: string[] = [];
  for (const part of value.split(/[\s,]+/).filter(Boolean)) {
    if (isScope(part)) {
      if (!scopes.includes(part)) scopes.push(part);
    } else unknown.push(part);
  }
  return { scopes: SCOPES.filter((s) => scopes.includes(s)), unknown };
}
