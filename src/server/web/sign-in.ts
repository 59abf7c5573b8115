/**
 * How a sign-in ends, whatever proved who it was — a password (and its second factor), a passkey alone, a setup or
 * invitation link, the identity provider's callback or a forward-auth proxy's headers: every method calls `completeSignIn` once it is sure.
 * It starts a fresh session (no fixation) that records how it was signed in, records the audit event, and goes on
 * to where the person was going. A password whose account has a second factor calls `awaitSecondFactor` instead.
 */
import type { User } from '../../store/sql/users.js';
import type { ProviderLink } from '../../auth/web-sessions.js';
import { isEmailAddress } from '../../auth/accounts.js';
import { actingAs } from '../../core/audit.js';
import { randomUrlToken, sha256Hex } from '../../core/secrets.js';
import { signInNoticeMail } from '../../mail/messages.js';
import { deviceOf } from '../../web/device.js';
import type { Services } from '../services.js';
import { startUserSession, type WebContext } from './session.js';

/** How a session was signed in (stored on it; `+` joins the factors). */
export type SignInMethod = `${FirstStep}+${LocalFactor}` | 'password' | 'passkey' | 'sso' | 'sso+mfa' | 'trusted-header' | 'setup' | 'invite';

/** What proved who it was before the account's own second factor was asked: a password, or the provider's sign-in without MFA. */
type FirstStep = 'password' | 'sso';
type LocalFactor = 'totp' | 'recovery' | 'passkey';

/** Where the second step of a sign-in asks for its code or passkey. */
export const SECOND_STEP_PATH = '/login/verify';

export async function completeSignIn(ctx: WebContext, s: Services, user: Pick<User, 'id' | 'email'>, method: SignInMethod, opts: { provider?: Omit<ProviderLink, 'checkedAt'> | undefined } = {}): Promise<void> {
  await startUserSession(ctx, s, user.id, method, opts);
  actingAs({ id: user.id, email: user.email }, 'session');
  await s.audit.record({ type: 'sign_in.succeeded', details: { method } });
  const before = await s.users.signedIn(user.id);
  await noticeNewBrowser(ctx, s, user, method, before);
}

/** The cookie that tells this browser apart (a random value; only its hash with the account id is stored). */
const DEVICE_COOKIE = 'docsearch_device';
const DEVICE_COOKIE_DAYS = 400;

/**
 * Remembers this browser for the account, and when the account signed in before but never from it, mails the account
 * a notice (with a mail server): what browser, from where, when, and what to do if it was not them. A first sign-in,
 * or one through a setup or invitation link, is no news.
 */
async function noticeNewBrowser(ctx: WebContext, s: Services, user: Pick<User, 'id' | 'email'>, method: SignInMethod, before: number | null): Promise<void> {
  let token = ctx.cookies.get(DEVICE_COOKIE);
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) {
    token = randomUrlToken(32);
    ctx.cookies.set(DEVICE_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: DEVICE_COOKIE_DAYS * 24 * 3600_000, overwrite: true });
  }
  const userAgent = ctx.get('user-agent') || null;
  const fresh = await s.devices.seen(sha256Hex(`${user.id}:${token}`), user.id, userAgent);
  if (!fresh || before === null || method === 'setup' || method === 'invite' || !s.mailer.enabled) return;
  await s.mailer.send(signInNoticeMail({ to: user.email, publicUrl: s.publicUrl(), browser: deviceOf(userAgent), ip: ctx.ip || null, at: s.now() }));
}

/**
 * The first step passed and the account has a second factor set up here: the session waits (5 minutes) for it. After
 * the provider's sign-in (without MFA there) the pending session keeps the provider link, for the session it becomes.
 */
export async function awaitSecondFactor(ctx: WebContext, s: Services, user: Pick<User, 'id'>, first: FirstStep, opts: { provider?: Omit<ProviderLink, 'checkedAt'> | undefined } = {}): Promise<void> {
  await startUserSession(ctx, s, user.id, first, { pending: true, ...opts });
}

/** The pending account passed its own second factor: signed in with both steps (and the provider link the first left). */
export async function completeSecondStep(ctx: WebContext, s: Services, user: Pick<User, 'id' | 'email'>, factor: LocalFactor): Promise<void> {
  const pending = ctx.state.session;
  const first: FirstStep = pending?.signedInWith === 'sso' ? 'sso' : 'password';
  const link = pending?.provider;
  const provider = link ? { provider: link.provider, subject: link.subject, sid: link.sid, tokensSealed: link.tokensSealed } : undefined;
  await completeSignIn(ctx, s, user, `${first}+${factor}`, { provider });
}

/**
 * A refused sign-in step, for the audit log: the account tried (when there is one), why ('throttled' while locked
 * out), and, when this attempt began a lockout, that too.
 */
export async function recordRefusal(
  s: Services,
  refusal: { reason: string; email?: string; user?: Pick<User, 'id' | 'email'> | undefined; locked?: readonly string[] | undefined; step: 'password' | 'code' | 'passkey' },
): Promise<void> {
  const actor = refusal.user ? { id: refusal.user.id, email: refusal.user.email } : { id: null, email: null };
  const typed = refusal.email?.trim();
  // Kept only when it is an address: a password typed into the e-mail field must not reach the audit log.
  const details = { step: refusal.step, reason: refusal.reason, ...(typed !== undefined && isEmailAddress(typed) ? { email: typed } : {}) };
  await s.audit.record({ type: 'sign_in.failed', actor, details });
  if (refusal.locked?.length) await s.audit.record({ type: 'sign_in.locked_out', actor, details: { ...details, locked: refusal.locked } });
}
