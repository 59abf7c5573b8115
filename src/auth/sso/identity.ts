/**
 * Who an identity provider says signed in: what an OpenID Connect sign-in (oidc.ts) and the trusted-header proxy
 * (server/web/trusted-header.ts) both hand to the accounts they sign in to (access/provider-accounts.ts).
 */
export interface ExternalIdentity {
  /** The provider: the OpenID Connect issuer (as its discovery document names it), or `trusted-header`. */
  provider: string;
  /** The provider's stable id of the person (`sub`; the proxy's user header). */
  subject: string;
  email: string | null;
  /** Whether the provider vouches for the e-mail (`email_verified: true`; the operator's proxy always does). */
  emailVerified: boolean;
  /** Their groups at the provider; null when it said nothing about groups at all (no such claim or header). */
  groups: string[] | null;
  /** What an OpenID Connect sign-in leaves to ask the provider again with (none for the trusted-header proxy). */
  session?: ProviderSession;
}

/**
 * A sign-in's session at the provider: the session id its ID token names (`sid`, for back-channel logout), the
 * tokens that let docsearch ask again whether the person may still be here (the periodic re-check), and how the
 * provider says it signed them in (`amr`, `acr`: for `--require-2fa`).
 */
export interface ProviderSession {
  sid: string | null;
  refreshToken: string | null;
  accessToken: string | null;
  /** When the access token expires (ms), if the provider said. */
  accessTokenExpiresAt: number | null;
  amr: string[];
  acr: string | null;
}

export const TRUSTED_HEADER_PROVIDER = 'trusted-header';

/**
 * Whether the provider says it asked more than one factor: its `amr` (RFC 8176) names `mfa`, or two or more methods;
 * or its `acr` is one the operator names as multi-factor (`--sso-mfa-acr`: acr values are each provider's own).
 */
export const providerMfa = (session: Pick<ProviderSession, 'amr' | 'acr'> | undefined, mfaAcr: readonly string[] = []): boolean =>
  !!session && (session.amr.includes('mfa') || new Set(session.amr).size >= 2 || (session.acr !== null && mfaAcr.includes(session.acr)));

/** A claim's value at a dotted path (`realm_access.roles`); a name that is itself a key wins over a path. */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (path in claims) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The groups claim as names: an array of strings, or one string; anything else is no groups claim. */
export function groupsFromClaim(claims: Record<string, unknown>, claim: string): string[] | null {
  const value = claimAt(claims, claim);
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return null;
}

/**
 * Microsoft Entra ID's issuer hosts (the public cloud, US Government, China; `sts.windows.net` is its v1 issuer):
 * `xms_edov` is Entra ID's claim, and from any other provider it is whatever that provider lets a person or an
 * admin put in a claim of that name.
 */
const ENTRA_HOSTS = new Set(['login.microsoftonline.com', 'login.microsoftonline.us', 'login.partner.microsoftonline.cn', 'sts.windows.net']);

function isEntraIssuer(issuer: string): boolean {
  try {
    const url = new URL(issuer);
    return url.protocol === 'https:' && ENTRA_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

const yes = (v: unknown) => v === true || v === 'true';

/** An identity from OpenID Connect claims (the ID token's, with userinfo's where the token lacks them). */
export function identityFromClaims(provider: string, claims: Record<string, unknown>, groupsClaim: string): ExternalIdentity {
  const email = typeof claims.email === 'string' && claims.email.trim() !== '' ? claims.email.trim() : null;
  return {
    provider,
    subject: String(claims.sub),
    email,
    // Some providers send the flag as the string "true"; Microsoft Entra ID sends none, and says with its optional
    // claim xms_edov that the address's domain is one the tenant has verified (believed from Entra ID only).
    emailVerified: email !== null && (yes(claims.email_verified) || (isEntraIssuer(provider) && yes(claims.xms_edov))),
    groups: groupsFromClaim(claims, groupsClaim),
  };
}
