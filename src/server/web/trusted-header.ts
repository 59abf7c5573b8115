/**
 * Trusted-header sign-in (docs/sso.md), for a forward-auth proxy in front of docsearch (Authelia, Authentik's
 * outpost, oauth2-proxy): the proxy signs the person in and names them in request headers (Remote-User,
 * Remote-Email, Remote-Groups by default). Those headers are believed only from the --trust-proxy addresses —
 * anyone else could type them — and only for the web pages: /api keeps its bearer credentials.
 *
 * A request that names someone other than the session's person (or no session) signs them in: the account is
 * found or made, and its groups synced, as a sign-in through OpenID Connect does (access/provider-accounts.ts).
 * A person the proxy names but docsearch refuses ends the browser's session.
 * While the headers stay the same nothing more happens; when the proxy's groups for the person change, they are
 * synced at the next page.
 */
import type { Middleware } from 'koa';
import { type ExternalIdentity, TRUSTED_HEADER_PROVIDER } from '../../auth/sso/identity.js';
import { sha256Hex } from '../../core/secrets.js';
import { messagePage } from '../../web/pages/message.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { peerMatcher } from '../trusted-proxies.js';
import { render } from './render.js';
import { endSession, type WebContext } from './session.js';
import { completeSignIn } from './sign-in.js';

/** Whose session it is and what the headers said when it was signed in from them (a digest: nothing to keep). */
const SEEN_COOKIE = 'ds_header_seen';

export function trustedHeaderSignIn(s: Services): Middleware<AppState> | null {
  const { config } = s;
  if (!config.trustedHeaderLogin || typeof config.trustProxy !== 'string' || !s.sso) return null;
  const sso = s.sso;
  const fromProxy = peerMatcher(config.trustProxy);
  return async (ctx, next) => {
    if (ctx.path.startsWith('/api/') || ctx.path.startsWith('/static/')) return next();
    const identity = fromProxy(ctx.req.socket.remoteAddress) ? headerIdentity(ctx, config) : null;
    if (!identity) return next();
    const seen = (userId: string) => sha256Hex(JSON.stringify([userId, identity.subject, identity.email, identity.groups]));
    const session = ctx.state.session;
    if (session?.userId && ctx.cookies.get(SEEN_COOKIE) === seen(session.userId)) return next();
    // A form too (any method): sent under a session the proxy no longer vouches for, it would act as that
    // session's person. Followed like a page, its CSRF token is the old session's, and it is refused.
    const outcome = await sso.accounts.signIn(identity);
    if (!outcome.ok) {
      s.log.info({ event: 'sso.refused', reason: outcome.reason, provider: TRUSTED_HEADER_PROVIDER }, `a sign-in through ${sso.name} was refused: ${outcome.reason}`);
      // The browser's earlier session (this person's, or whoever the proxy named before) ends with the refusal.
      if (session) await endSession(ctx as WebContext, s);
      return render(ctx as WebContext, messagePage({ title: 'Not signed in', message: outcome.message }), 403);
    }
    // Another person than the session's: a new session (no fixation). The same person with new groups keeps theirs.
    if (session?.userId !== outcome.user.id) {
      await completeSignIn(ctx as WebContext, s, outcome.user, 'trusted-header');
      s.log.info({ event: 'sso.signed_in', user: outcome.user.id, provider: TRUSTED_HEADER_PROVIDER, created: outcome.created, linked: outcome.linked }, `signed in through ${sso.name}`);
    }
    ctx.cookies.set(SEEN_COOKIE, seen(outcome.user.id), { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', overwrite: true });
    return next();
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header's text as the proxy wrote it: Node reads header bytes as Latin-1, and proxies send a name such as "Zoë"
 * or "Équipe" in UTF-8. Bytes that are not UTF-8 stay as read. The user header is not decoded: it keys the accounts'
 * links (identities), which hold it as read since trusted-header sign-in began.
 */
function utf8(value: string): string {
  try {
    return strictUtf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

/** The person the proxy names, or null when it names nobody. */
function headerIdentity(ctx: WebContext, config: Services['config']): ExternalIdentity | null {
  const user = ctx.get(config.trustedHeaderUser).trim();
  if (!user) return null;
  const email = utf8(ctx.get(config.trustedHeaderEmail)).trim() || (/^[^\s@]+@[^\s@]+$/.test(user) ? user : '');
  const groups = utf8(ctx.get(config.trustedHeaderGroups));
  return {
    provider: TRUSTED_HEADER_PROVIDER,
    subject: user,
    email: email || null,
    // The operator trusts the proxy with who people are: its e-mail is as good as verified.
    emailVerified: email !== '',
    groups: ctx.headers[config.trustedHeaderGroups.toLowerCase()] === undefined ? null : groups.split(/[,|]/).map((g) => g.trim()).filter(Boolean),
  };
}
