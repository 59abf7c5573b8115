/**
 * Sudo mode (GitHub's name for it): a sensitive change — a second factor added or removed, passwordless sign-in,
 * new recovery codes, a new API key or application secret — needs a proof of who is at the keyboard from the last
 * SUDO_WINDOW_MS: the sign-in itself, or a confirmation on the Confirm access page (the password, or a passkey). A
 * borrowed session cookie, or a laptop left signed in, then cannot add its own passkey or key.
 *
 * The proof's time is kept on the session (`confirmed_at`: set at sign-in, and by each confirmation). The form that
 * waited is posted again by the browser itself: the confirmation answers 307, which repeats a POST with its body, and
 * the Confirm access page's form carries the waiting form's fields and token.
 */
import type Router from '@koa/router';
import { AppError } from '../../core/errors.js';
import { confirmAccessPage } from '../../web/pages/confirm-access.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf, requireFormUser } from './csrf.js';
import { formBody, formField, jsonBody, jsonFields } from './form.js';
import { relyingParty } from './relying-party.js';
import { render } from './render.js';
import { safeReturnTo } from './return-to.js';
import { signedIn, type WebContext, type WebUser } from './session.js';

/** How long a sign-in or a confirmation lets sensitive changes through. */
export const SUDO_WINDOW_MS = 15 * 60_000;

const CONFIRM_PATH = '/settings/confirm';

/** The forms a confirmation may post again: the ones that ask for it (each calls `requireRecentProof`). */
const WAITING_FORMS = [
  /^\/settings\/keys$/,
  /^\/settings\/applications$/,
  /^\/settings\/applications\/app_[0-9A-Za-z]+\/rotate$/,
  /^\/settings\/security\/(totp\/start|totp\/disable|recovery-codes|passkey-sign-in)$/,
  /^\/settings\/security\/passkeys\/[0-9A-Za-z_-]+\/remove$/,
];

/** Whether this session's person proved who they are within the window. */
export async function recentlyProved(ctx: WebContext, s: Services): Promise<boolean> {
  const at = ctx.state.session?.confirmedAt ?? null;
  return at !== null && s.now() - at <= SUDO_WINDOW_MS;
}

/** Whether the account can confirm with a passkey here. */
async function passkeysFor(s: Services, user: WebUser): Promise<boolean> {
  return relyingParty(s) !== null && (await s.passkeys.list(user.id)).length > 0;
}

/** The fields of the posted form worth posting again (not its token, nor a password typed into it). */
function waitingFields(ctx: WebContext): [string, string][] {
  const body = ((ctx.request as { body?: Record<string, unknown> }).body ?? {}) as Record<string, unknown>;
  return Object.entries(body)
    .filter(([name]) => name !== '_csrf' && name !== 'password')
    .flatMap(([name, v]) => (Array.isArray(v) ? v : [v]).map((x): [string, string] => [name, String(x)]));
}

/**
 * For a sensitive form's POST: true when its person proved who they are lately; else answers with the Confirm access
 * page (which posts this form again once they confirm) and returns false.
 */
export async function requireRecentProof(ctx: WebContext, s: Services, user: WebUser, what: string, returnTo: string): Promise<boolean> {
  if (await recentlyProved(ctx, s)) return true;
  render(ctx, confirmAccessPage({ user, csrfToken: ctx.state.session!.csrfToken, what, then: { action: ctx.path, fields: waitingFields(ctx) }, returnTo, passkeys: await passkeysFor(s, user) }));
  return false;
}

/** For a page script's JSON post (adding a passkey): refused with where to confirm, which passkeys.js opens. */
export async function requireRecentProofJson(ctx: WebContext, s: Services, returnTo: string): Promise<void> {
  if (await recentlyProved(ctx, s)) return;
  throw new AppError('forbidden', 'confirm it is you first: your password or a passkey', { details: { confirm: `${CONFIRM_PATH}?return_to=${encodeURIComponent(returnTo)}` } });
}

/** The person proved who they are: the window runs from now. */
async function confirmed(ctx: WebContext, s: Services, how: 'password' | 'passkey'): Promise<void> {
  await s.webSessions.confirm(ctx.state.session!, s.now());
  await s.audit.record({ type: 'session.confirmed', details: { method: how } });
}

export function sudoRoutes(router: Router<AppState>, s: Services): void {
  router.get('settings.confirm', CONFIRM_PATH, async (ctx) => {
    const user = await signedIn(ctx, s, { enrolling: true });
    if ('reason' in user) return ctx.redirect(user.to);
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined) ?? '/settings/security';
    render(ctx, confirmAccessPage({ user, csrfToken: ctx.state.session!.csrfToken, what: 'go on', then: null, returnTo, passkeys: await passkeysFor(s, user) }));
  });

  router.post('settings.confirm.submit', CONFIRM_PATH, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s, { enrolling: true });
    if (!user) return;
    const then = formField(ctx, 'then');
    const waiting = WAITING_FORMS.some((re) => re.test(then)) ? { action: then, fields: waitingFields(ctx).filter(([name]) => !['then', 'username', 'return_to'].includes(name)) } : null;
    const returnTo = safeReturnTo(formField(ctx, 'return_to')) ?? '/settings/security';
    const checked = await s.accounts.checkCurrentPassword(user.id, formField(ctx, 'password'), ctx.ip);
    if (!checked.ok) {
      if (checked.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(checked.retryAfterMs / 1000)));
      const page = confirmAccessPage({ user, csrfToken: ctx.state.session!.csrfToken, what: 'go on', then: waiting, returnTo, passkeys: await passkeysFor(s, user), error: checked.message });
      return render(ctx, page, checked.reason === 'throttled' ? 429 : 401);
    }
    await confirmed(ctx, s, 'password');
    // 307: the browser posts this form's body (the waiting form's fields and token) to the waiting form's action.
    ctx.status = waiting ? 307 : 303;
    ctx.redirect(waiting ? waiting.action : returnTo);
  });

  router.post('settings.confirm.passkey.options', `${CONFIRM_PATH}/passkey/options`, jsonBody(), async (ctx) => {
    const user = await signedIn(ctx, s, { enrolling: true });
    if ('reason' in user) throw new AppError('unauthorized', 'sign in again: your session ended');
    checkCsrf(ctx, s);
    const rp = relyingParty(s);
    if (!rp) throw new AppError('conflict', 'this server does not offer passkeys');
    const options = await s.passkeys.authenticationOptions(rp, user.id);
    await s.webSessions.setChallenge(ctx.state.session!, options.challenge, s.now());
    ctx.body = options;
  });

  router.post('settings.confirm.passkey', `${CONFIRM_PATH}/passkey`, jsonBody(), async (ctx) => {
    const user = await signedIn(ctx, s, { enrolling: true });
    if ('reason' in user) throw new AppError('unauthorized', 'sign in again: your session ended');
    checkCsrf(ctx, s);
    const body = jsonFields(ctx);
    const rp = relyingParty(s);
    const challenge = await s.webSessions.takeChallenge(ctx.state.session!);
    if (!rp || !challenge) throw new AppError('invalid_request', 'the passkey request expired: try again');
    const outcome = await s.passkeys.authenticate(rp, body.response as never, challenge, user.id);
    if (!outcome.ok) throw new AppError('unauthorized', outcome.message);
    await confirmed(ctx, s, 'passkey');
    ctx.body = { redirect: safeReturnTo(typeof body.return_to === 'string' ? body.return_to : undefined) ?? '/settings/security' };
  });
}
