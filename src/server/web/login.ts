/**
 * Signing in and out: the password form, its second step (a code, or a passkey) for accounts that have a second
 * factor — after a password, or after the provider's sign-in without MFA (sso.ts) —, and a passkey alone for
 * accounts that chose it. Each method ends in `completeSignIn` (sign-in.ts), which an
 * identity provider's callback can call too.
 */
import type Router from '@koa/router';
import { throttledMessage } from '../../auth/accounts.js';
import { AppError } from '../../core/errors.js';
import { loginPage, secondStepPage } from '../../web/pages/login.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { flash } from './flash.js';
import { endSession, ensureSession, type WebContext } from './session.js';
import { formBody, formField, jsonBody, jsonFields } from './form.js';
import { render } from './render.js';
import { relyingParty } from './relying-party.js';
import { safeReturnTo, withReturn } from './return-to.js';
import { afterSignOut, ssoLoginOptions } from './sso.js';
import { awaitSecondFactor, completeSecondStep, completeSignIn, recordRefusal, SECOND_STEP_PATH } from './sign-in.js';

/** Why a refused sign-in step is refused, in the page's words, and its status. */
function refusalPage(reason: 'invalid' | 'throttled' | 'disabled', retryAfterMs: number | undefined, wrong: string): { error: string; status: number } {
  if (reason === 'throttled') return { error: throttledMessage(retryAfterMs ?? 0), status: 429 };
  if (reason === 'disabled') return { error: 'This account is disabled. Ask an administrator of this docsearch to enable it.', status: 403 };
  return { error: wrong, status: 401 };
}

/** The account owing its second factor in this session, if it is still live. */
async function pendingUser(ctx: WebContext, s: Services) {
  const id = ctx.state.session?.pendingUserId;
  const user = id ? await s.accounts.findUser(id) : null;
  return user && user.disabledAt === null ? user : null;
}

async function showSecondStep(ctx: WebContext, s: Services, user: { id: string }, returnTo: string | null | undefined, error?: string, status = 200): Promise<void> {
  const factors = await s.twoFactor.status(user.id);
  const page = secondStepPage({ csrfToken: ctx.state.session!.csrfToken, ...(returnTo ? { returnTo } : {}), ...(error ? { error } : {}), totp: factors.totp, passkeys: factors.passkeys > 0 && relyingParty(s) !== null });
  render(ctx, page, status);
}

export function loginRoutes(router: Router<AppState>, s: Services): void {
  router.get('login', '/login', async (ctx) => {
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined);
    if (ctx.state.session?.userId) return ctx.redirect(returnTo ?? '/');
    if (!(await s.accounts.hasUsers())) {
      // With a provider, its first sign-in makes the first account (the admin): the page offers it.
      if (!s.sso) return render(ctx, loginPage({ csrfToken: (await ensureSession(ctx, s)).csrfToken, error: 'No account exists yet: open the setup link that `docsearch serve` printed, or run `docsearch users add <email>`.' }));
    }
    const session = await ensureSession(ctx, s);
    render(ctx, loginPage({ csrfToken: session.csrfToken, returnTo, passkeys: relyingParty(s) !== null, ...ssoLoginOptions(s) }));
  });

  router.post('login.submit', '/login', formBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const email = formField(ctx, 'email');
    const returnTo = safeReturnTo(formField(ctx, 'return_to'));
    if (s.config.passwordLogin === 'off') {
      return render(ctx, loginPage({ csrfToken: session.csrfToken, error: `Password sign-in is off here: sign in with ${s.sso?.name ?? 'the identity provider'}.`, returnTo, ...ssoLoginOptions(s) }), 403);
    }
    const result = await s.accounts.login(email, formField(ctx, 'password'), ctx.ip);
    if (!result.ok) {
      await recordRefusal(s, { step: 'password', reason: result.reason, email, user: result.user, locked: result.locked });
      const { error, status } = refusalPage(result.reason, result.retryAfterMs, 'Wrong e-mail or password.');
      if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return render(ctx, loginPage({ csrfToken: session.csrfToken, email, error, returnTo, passkeys: relyingParty(s) !== null, ...ssoLoginOptions(s) }), status);
    }
    if (await s.twoFactor.hasSecondFactor(result.user.id)) {
      await awaitSecondFactor(ctx, s, result.user, 'password');
      ctx.status = 303;
      return ctx.redirect(withReturn(SECOND_STEP_PATH, returnTo));
    }
    await completeSignIn(ctx, s, result.user, 'password');
    ctx.redirect(returnTo ?? '/');
  });

  router.get('login.verify', SECOND_STEP_PATH, async (ctx) => {
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined);
    const user = await pendingUser(ctx, s);
    if (!user) return ctx.redirect(withReturn('/login', returnTo));
    await showSecondStep(ctx, s, user, returnTo);
  });

  router.post('login.verify.submit', SECOND_STEP_PATH, formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    const returnTo = safeReturnTo(formField(ctx, 'return_to'));
    const user = await pendingUser(ctx, s);
    // The five minutes are over (or it never began): the password again.
    if (!user) return ctx.redirect(withReturn('/login', returnTo));
    const result = await s.twoFactor.verifyCode(user, formField(ctx, 'code'), ctx.ip);
    if (!result.ok) {
      await recordRefusal(s, { step: 'code', reason: result.reason, user, locked: result.locked });
      const { error, status } = refusalPage(result.reason, result.retryAfterMs, 'That code is not valid (a code works once). Try the next one.');
      if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return showSecondStep(ctx, s, user, returnTo, error, status);
    }
    await completeSecondStep(ctx, s, user, result.method === 'totp' ? 'totp' : 'recovery');
    if (result.method === 'recovery') {
      const left = result.recoveryCodesLeft ?? 0;
      await s.audit.record({ type: 'recovery_code.used', details: { left } });
      // Said on the next page, whatever it is: a code is gone, and how many are left decides when to make new ones.
      flash(ctx, `You signed in with a recovery code: ${left === 0 ? 'none is' : left === 1 ? '1 is' : `${left} are`} left (each works once). ${left < 3 ? 'Make new ones now in Settings → Security.' : 'New ones are made in Settings → Security.'}`, left < 3 ? 'error' : 'notice');
    }
    ctx.status = 303;
    ctx.redirect(result.method === 'recovery' && (result.recoveryCodesLeft ?? 0) < 3 ? '/settings/security?recovery=low' : (returnTo ?? '/'));
  });

  // A passkey: the second step of a password sign-in (this session owes one), or the whole sign-in.
  router.post('login.passkey.options', '/login/passkey/options', jsonBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const rp = relyingParty(s);
    if (!rp) throw new AppError('conflict', 'this server does not offer passkeys: its public URL must name a host (not an IP address) on https or localhost');
    const user = await pendingUser(ctx, s);
    // A passkey alone signs a local account in, as a password does: off with passwords (--password-login off).
    if (!user && s.config.passwordLogin === 'off') throw new AppError('forbidden', `sign in with ${s.sso?.name ?? 'the identity provider'}: signing in here without it is off`);
    const options = await s.passkeys.authenticationOptions(rp, user?.id ?? null);
    await s.webSessions.setChallenge(session, options.challenge, s.now());
    ctx.body = options;
  });

  router.post('login.passkey', '/login/passkey', jsonBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const body = jsonFields(ctx);
    const returnTo = safeReturnTo(typeof body.return_to === 'string' ? body.return_to : undefined);
    const rp = relyingParty(s);
    const challenge = await s.webSessions.takeChallenge(session);
    if (!rp || !challenge) throw new AppError('invalid_request', 'the passkey request expired: try again');
    const pending = await pendingUser(ctx, s);
    if (!pending && s.config.passwordLogin === 'off') throw new AppError('forbidden', `sign in with ${s.sso?.name ?? 'the identity provider'}: signing in here without it is off`);
    const outcome = await s.passkeys.authenticate(rp, body.response as never, challenge, pending?.id ?? null);
    if (!outcome.ok) {
      await recordRefusal(s, { step: 'passkey', reason: 'invalid', ...(pending ? { user: pending } : {}) });
      throw new AppError('unauthorized', outcome.message);
    }
    if (pending) await completeSecondStep(ctx, s, outcome.value.user, 'passkey');
    else await completeSignIn(ctx, s, outcome.value.user, 'passkey');
    ctx.body = { redirect: returnTo ?? '/' };
  });

  router.post('logout', '/logout', formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    const userId = ctx.state.session?.userId;
    await endSession(ctx, s);
    // On a browser people share, the thumbnails and originals it kept of this person go with the session.
    ctx.set('Clear-Site-Data', '"cache"');
    // The person signing out did it (the request reached us through their session, not as nobody).
    if (userId) await s.audit.record({ type: 'sign_out', actor: { id: userId }, by: 'user' });
    ctx.redirect(await afterSignOut(s, userId));
  });
}
