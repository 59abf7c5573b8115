import { ProviderAccounts } from '../access/provider-accounts.js';
import { type ProviderSession, TRUSTED_HEADER_PROVIDER } from '../auth/sso/identity.js';
import { OidcSignIn, type OidcSeams } from '../auth/sso/oidc.js';
import type { AuditLog } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { SecretSealer } from '../core/sealed-secret.js';
import type { Db } from '../store/sql/database.js';
import { GroupStore } from '../store/sql/groups.js';
import { openNewAccountStores } from '../store/sql/identities.js';
import type { ServeConfig } from './config.js';

/** Sign-in through the identity provider (docs/sso.md): what the login pages and the trusted-header sign-in use. */
export interface Sso {
  /** On the "Sign in with …" button, and the source of the provider's groups. */
  name: string;
  /** OpenID Connect, when --oidc-issuer is set. */
  oidc: OidcSignIn | null;
  accounts: ProviderAccounts;
  /** The provider ids its accounts are linked under (identities.provider): the issuer, the trusted-header proxy. */
  providers: string[];
  /** Seals a sign-in's tokens at the provider for its session row (the periodic re-check asks with them). */
  sealTokens(subject: string, session: ProviderSession): string | null;
  openTokens(subject: string, sealed: string | null): ProviderSession | null;
  /** `acr` values that mean the provider asked more than one factor (--sso-mfa-acr, as given: they are case-sensitive). */
  mfaAcr: string[];
}

/** Where the provider sends people back: <public-url> + this is the redirect URI registered there. */
export const SSO_CALLBACK_PATH = '/login/sso/callback';

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter(Boolean);

/** The provider's name: --sso-name, else the issuer's host, else (trusted headers alone) the proxy. */
export function ssoName(config: Pick<ServeConfig, 'ssoName' | 'oidcIssuer'>): string {
  return config.ssoName?.trim() || (config.oidcIssuer ? new URL(config.oidcIssuer).host : 'the sign-in proxy');
}

/**
 * How the links of `--oidc-issuer` may name it: as its discovery document does, which for a bare host may differ from
 * the setting by the trailing slash (one URL: openid-client takes either).
 */
function issuerForms(issuer: string): string[] {
  const url = new URL(issuer);
  return url.pathname === '/' ? [url.origin, `${url.origin}/`] : [issuer];
}

/** The sign-in through the provider that the configuration asks for; null when it asks for none. */
export function openSso(config: ServeConfig, deps: { db: Db; now: Clock; log: Logger; audit: AuditLog; sealer: SecretSealer; publicUrl: () => string; seams?: OidcSeams }): Sso | null {
  if (!config.oidcIssuer && !config.trustedHeaderLogin) return null;
  const name = ssoName(config);
  const { db, now, log } = deps;
  const accounts = new ProviderAccounts(
    {
      ...openNewAccountStores(db, now),
      groups: new GroupStore(db, now),
      warn: (message, fields) => log.warn({ event: 'sso.group_skipped', ...fields }, message),
      audit: deps.audit,
    },
    {
      source: name,
      allowedDomains: list(config.ssoAllowedDomains),
      requiredGroup: config.ssoRequiredGroup?.trim() || null,
      adminGroup: config.ssoAdminGroup?.trim() || null,
      linkAccounts: config.ssoLinkAccounts,
    },
  );
  const oidc =
    config.oidcIssuer && config.oidcClientId
      ? new OidcSignIn(
          {
            issuer: config.oidcIssuer,
            clientId: config.oidcClientId,
            clientSecret: config.oidcClientSecret,
            scopes: config.oidcScopes,
            groupsClaim: config.oidcGroupsClaim,
            redirectUri: () => `${deps.publicUrl()}${SSO_CALLBACK_PATH}`,
          },
          { now, ...deps.seams },
        )
      : null;
  const providers = [...(config.oidcIssuer ? issuerForms(config.oidcIssuer) : []), ...(config.trustedHeaderLogin ? [TRUSTED_HEADER_PROVIDER] : [])];
  // Bound to the person at the provider: a sealed value moved to another's session does not open.
  const context = (subject: string) => `sso-tokens:${subject}`;
  return {
    name,
    oidc,
    accounts,
    providers,
    mfaAcr: (config.ssoMfaAcr ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    sealTokens: (subject, session) =>
      session.refreshToken || session.accessToken ? deps.sealer.seal(JSON.stringify({ r: session.refreshToken, a: session.accessToken, e: session.accessTokenExpiresAt }), context(subject)) : null,
    openTokens(subject, sealed) {
      const opened = sealed ? deps.sealer.open(sealed, context(subject)) : null;
      if (!opened) return null;
      const t = JSON.parse(opened) as { r: string | null; a: string | null; e: number | null };
      return { sid: null, refreshToken: t.r, accessToken: t.a, accessTokenExpiresAt: t.e, amr: [], acr: null };
    },
  };
}
