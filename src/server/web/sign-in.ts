/**
 * How a sign-in ends, whatever proved who it was — a password (and its second factor), a passkey alone, a setup or
 * invitation link, the identity provider's callback or a forward-auth proxy's headers: every method calls `completeSignIn` once it is sure.
 * It starts a fresh session (no fixation) that records how it was signed in, records the audit event, and goes on
 * to where the person was going. A password whose account has a second factor calls `awaitSecondFactor` instead.
 */
import type { User } from '../../store/sql/users.js';
import type { ProviderLink } from '../../auth/web-sessions.js';
import { actingAs } from '../../core/audit.js';
import type { Services } from '../services.js';
import { startUserSession, type WebContext } from './session.js';

/** How a session was signed in (stored on it; `+` joins the factors). */
export type SignInMethod = 'password' | 'password+totp' | 'password+recovery' | 'password+passkey' | 'passkey' | 'sso' | 'trusted-header' | 'setup' | 'invite';

/** Where the second step of a password sign-in asks for its code or passkey. */
export const SECOND_STEP_PATH = '/login/verify';

export async function completeSignIn(ctx: WebContext, s: Services, user: Pick<User, 'id' | 'email'>, method: SignInMethod, opts: { provider?: Omit<ProviderLink, 'checkedAt'> | undefined } = {}): Promise<void> {
  await startUserSession(ctx, s, user.id, method, opts);
  actingAs({ id: user.id, email: user.email }, 'session');
  await s.audit.record({ type: 'sign_in.succeeded', details: { method } });
}

/** The password was right and the account has a second factor: the session waits (5 minutes) for it. */
export async function awaitSecondFactor(ctx: WebContext, s: Services, user: Pick<User, 'id'>): Promise<void> {
  await startUserSession(ctx, s, user.id, 'password', { pending: true });
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
  const details = { step: refusal.step, reason: refusal.reason, ...(refusal.email !== undefined ? { email: refusal.email.trim().slice(0, 254) } : {}) };
  await s.audit.record({ type: 'sign_in.failed', actor, details });
  if (refusal.locked?.length) await s.audit.record({ type: 'sign_in.locked_out', actor, details: { ...details, locked: refusal.locked } });
}
