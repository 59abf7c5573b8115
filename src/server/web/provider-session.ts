/**
 * Web sessions signed in through the OpenID Connect provider stay tied to it (docs/sso.md, "Sessions that follow
 * the provider"):
 * - a back-channel logout from the provider (OpenID Connect Back-Channel Logout 1.0) ends the sessions it names at
 *   once, on every replica (they are rows of the database they share);
 * - every `--sso-recheck` seconds, the next page of such a session asks the provider again (its refresh token, else
 *   userinfo) and signs the person in anew there (ProviderAccounts: groups, admin flag, a required group, a disabled
 *   account): a session the provider ended, or a person it no longer lets in, ends.
 * A provider that cannot be reached keeps the session for another interval (logged): an outage there must not sign
 * out a whole team. One re-check per session at a time: the first request past the interval claims it.
 */
import type { ExternalIdentity } from '../../auth/sso/identity.js';
import { SsoError } from '../../auth/sso/oidc.js';
import type { ProviderLink, WebSession } from '../../auth/web-sessions.js';
import type { Services } from '../services.js';
import type { Sso } from '../sso.js';
import { cutUnits } from '../../core/code-points.js';

/** What a sign-in through OpenID Connect keeps on its session: the provider, the person, its session there, its tokens. */
export function providerLink(sso: Sso, identity: ExternalIdentity): Omit<ProviderLink, 'checkedAt'> | undefined {
  if (!identity.session) return undefined;
  return { provider: identity.provider, subject: identity.subject, sid: identity.session.sid, tokensSealed: sso.sealTokens(identity.subject, identity.session) };
}

/**
 * What became of a session at its page: it `stands` as it was; it was `renewed` by a re-check (the account's admin
 * flag and groups may have changed); it `ended` (the provider or the account rules said no: recorded, and over).
 */
export type ProviderCheck = 'stands' | 'renewed' | 'ended';

/** Sessions whose re-check runs in this process now: a page's images and scripts do not each ask the provider. */
const checking = new Map<string, Promise<ProviderCheck>>();

/** Re-checks the session with the provider when it is signed in through it and due (see the file's comment). */
export function checkProviderSession(s: Services, session: WebSession, userId: string): Promise<ProviderCheck> {
  const link = session.provider;
  const oidc = s.sso?.oidc;
  const every = s.config.ssoRecheck * 1000;
  if (!link || !oidc || every <= 0 || s.now() - link.checkedAt < every) return Promise.resolve('stands');
  const running = checking.get(session.id);
  if (running) return running;
  const check = recheck(s, session, link, userId).finally(() => checking.delete(session.id));
  checking.set(session.id, check);
  return check;
}

async function recheck(s: Services, session: WebSession, link: ProviderLink, userId: string): Promise<ProviderCheck> {
  const sso = s.sso!;
  // Another request (here or on another replica) is asking already: this one goes on.
  if (!(await s.webSessions.claimProviderCheck(session, s.now()))) return 'stands';
  const tokens = sso.openTokens(link.subject, link.tokensSealed) ?? { sid: link.sid, refreshToken: null, accessToken: null, accessTokenExpiresAt: null, amr: [], acr: null };
  let answer: Awaited<ReturnType<NonNullable<Sso['oidc']>['recheck']>>;
  try {
    answer = await sso.oidc!.recheck(link.subject, tokens);
  } catch (err) {
    if (!(err instanceof SsoError)) throw err;
    s.log.warn({ event: 'sso.recheck_failed', reason: err.message }, `could not ask ${sso.name} whether a session still stands: it goes on, and is asked again in ${s.config.ssoRecheck} s`);
    await s.webSessions.providerChecked(session, link.tokensSealed, s.now());
    return 'stands';
  }
  if (answer.ended) return end(s, session, userId, answer.why);
  const outcome = await sso.accounts.signIn(answer.identity, { recheck: true });
  if (!outcome.ok) return end(s, session, userId, outcome.message);
  if (outcome.user.id !== userId) return end(s, session, userId, 'the provider now names another account');
  await s.webSessions.providerChecked(session, sso.sealTokens(link.subject, answer.identity.session!), s.now());
  return 'renewed';
}

/** Records sessions of an account the provider's word ended (`by: sso`). */
async function recordEnded(s: Services, userId: string, details: Record<string, unknown>): Promise<void> {
  const user = await s.accounts.findUser(userId);
  const email = user?.email ?? null;
  await s.audit.record({ type: 'session.ended', by: 'sso', actor: { id: userId, email }, target: { type: 'account', id: userId, label: email }, details: { provider: s.sso!.name, ...details } });
}

async function end(s: Services, session: WebSession, userId: string, why: string): Promise<'ended'> {
  await s.webSessions.end(session.id);
  await recordEnded(s, userId, { reason: 'recheck', why: cutUnits(why, 300), sessions: 1 });
  s.log.info({ event: 'sso.session_ended', user: userId, reason: 'recheck', why }, `a session signed in through ${s.sso!.name} ended: ${why}`);
  return 'ended';
}

/**
 * A back-channel logout: the provider's logout token checked (auth/sso/oidc.ts), then the sessions it names
 * ended — those of its session `sid`, or every one of the person `sub`. How many ended, per account.
 */
export async function backChannelLogout(s: Services, logoutToken: string): Promise<number> {
  const sso = s.sso!;
  const named = await sso.oidc!.verifyLogoutToken(logoutToken);
  const ended = await s.webSessions.endForProvider(named.issuer, { subject: named.sub, sid: named.sid });
  let total = 0;
  for (const [userId, sessions] of ended) {
    total += sessions;
    await recordEnded(s, userId, { reason: 'back-channel logout', sessions });
  }
  s.log.info({ event: 'sso.backchannel_logout', sessions: total, by_sid: named.sid !== null }, `${sso.name} ended ${total} session(s) by back-channel logout`);
  return total;
}
