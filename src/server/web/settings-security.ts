/**
 * Settings → Security (`/settings/security`): set up and turn off an authenticator app (TOTP), recovery codes,
 * passkeys (add, name, remove; whether one signs in alone), and the signed-in sessions (list, end one or all
 * others). An account `--require-2fa` sends here may use what sets up a factor, and nothing else, until it has one.
 *
 * Setting up a first factor from a session makes that session one that passed it (the code or passkey was just
 * proved in it) and ends the account's other sessions, which a password alone opened. Turning one off, removing a
 * passkey or making new recovery codes asks for the current password (counted like a sign-in).
 */
import type Router from '@koa/router';
import type { AccountChangeResult } from '../../auth/accounts.js';
import { throttledMessage } from '../../auth/accounts.js';
import { unsafeTextProblem } from '../../core/unsafe-text.js';
import { codePointCount } from '../../core/code-points.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { AppError } from '../../core/errors.js';
import { plural } from '../../web/format.js';
import { type SettingsSecurityData, settingsSecurityPage } from '../../web/pages/settings-security.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { answerAsPage } from './answer-as-page.js';
import { checkCsrf, requireFormUser } from './csrf.js';
import { requireRecentProof, requireRecentProofJson } from './sudo.js';
import { flash } from './flash.js';
import { formBody, formField, jsonBody, jsonFields } from './form.js';
import { relyingParty } from './relying-party.js';
import { render } from './render.js';
import { safeReturnTo } from './return-to.js';
import { redirectWithOnce, requireUser, signedIn, takeOnce, type WebContext, type WebUser } from './session.js';

const PAGE = '/settings/security';

async function show(ctx: WebContext, s: Services, user: WebUser, extra: Partial<SettingsSecurityData> = {}, status = 200): Promise<void> {
  const rp = s.relyingParty();
  const [factors, passkeys, sessions, pendingTotp] = await Promise.all([
    s.twoFactor.status(user.id),
    s.passkeys.list(user.id),
    s.webSessions.list(user.id, ctx.state.session!),
    s.twoFactor.pendingTotp(user),
  ]);
  const returnTo = safeReturnTo((ctx.query.return_to as string | undefined) ?? formField(ctx, 'return_to'));
  render(
    ctx,
    settingsSecurityPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      mustEnrol: user.mustEnrol,
      ...(returnTo ? { returnTo } : {}),
      totp: factors.totp,
      pendingTotp,
      recoveryCodesLeft: factors.recoveryCodesLeft,
      passkeysUnavailable: 'unavailable' in rp ? rp.unavailable : null,
      passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt, backedUp: p.backedUp })),
      passkeySignIn: factors.passkeySignIn,
      sessions,
      provider: await linkedProvider(s, user.id),
      ...extra,
    }),
    status,
  );
}

/** The OpenID Connect provider (when the server has one, and it answers) and whether the account is linked there. */
async function linkedProvider(s: Services, userId: string): Promise<SettingsSecurityData['provider']> {
  const server = s.sso?.oidc ? await s.sso.oidc.metadata() : null;
  return server ? { name: s.sso!.name, linked: await s.sso!.accounts.linked(userId, server.issuer) } : undefined;
}

/**
 * The page again with why a form was refused: 401 for a wrong password, 429 (Retry-After) once throttled. `typed`:
 * what the form held, kept in its field.
 */
async function refused(
  ctx: WebContext,
  s: Services,
  user: WebUser,
  form: NonNullable<SettingsSecurityData['error']>['form'],
  result: { reason: string; message: string; retryAfterMs?: number },
  typed: Pick<SettingsSecurityData, 'renaming'> = {},
): Promise<void> {
  if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
  const status = result.reason === 'throttled' ? 429 : result.reason === 'invalid' ? 401 : 400;
  // Shown after a 303 to the page (answer-as-page.ts), with the return_to it was opened with.
  const returnTo = safeReturnTo(formField(ctx, 'return_to'));
  answerAsPage(ctx, returnTo ? `${PAGE}?return_to=${encodeURIComponent(returnTo)}` : PAGE);
  await show(ctx, s, user, { error: { form, message: result.message }, ...typed }, status);
}

/** The current password, before a factor is turned off or codes replaced. */
function confirmPassword(ctx: WebContext, s: Services, user: WebUser): Promise<AccountChangeResult> {
  return s.accounts.checkCurrentPassword(user.id, formField(ctx, 'password'), ctx.ip);
}

/**
 * After a first factor was set up from this session: it passed that factor now, and the sessions a password alone
 * opened end. Returns how many ended.
 */
async function secured(ctx: WebContext, s: Services, user: WebUser, factor: 'totp' | 'passkey'): Promise<number> {
  // The session has the factor now, after the provider's sign-in or the password that opened it.
  if (!user.secondFactor) await s.webSessions.upgrade(ctx.state.session!, `${ctx.state.session!.signedInWith === 'sso' ? 'sso' : 'password'}+${factor}`);
  return s.webSessions.endOthers(user.id, ctx.state.session!);
}

/**
 * A sensitive change's proof: the current password when the form carries one (a wrong one is refused as before), else
 * a sign-in or confirmation within sudo mode's window (sudo.ts; else the Confirm access page answers).
 */
async function proved(ctx: WebContext, s: Services, user: WebUser, form: NonNullable<SettingsSecurityData['error']>['form'], what: string): Promise<boolean> {
  if (!formField(ctx, 'password')) return requireRecentProof(ctx, s, user, what, PAGE);
  const checked = await confirmPassword(ctx, s, user);
  if (checked.ok) return true;
  await refused(ctx, s, user, form, checked);
  return false;
}

/** Whether removing one factor would leave an account the policy asks a factor of with none. */
async function lastRequiredFactor(s: Services, user: WebUser, removing: 'totp' | 'passkey'): Promise<boolean> {
  if (!s.twoFactor.required(user)) return false;
  const f = await s.twoFactor.status(user.id);
  return (f.totp ? 1 : 0) + f.passkeys - 1 === 0 && (removing === 'totp' ? f.totp : f.passkeys > 0);
}

const LAST_FACTOR = 'This server requires a second factor for your account: set up another one before removing this one.';

export function settingsSecurityRoutes(router: Router<AppState>, s: Services): void {
  router.get('settings.security', PAGE, async (ctx) => {
    const user = await requireUser(ctx, s, { enrolling: true });
    if (!user) return;
    const fresh = await takeOnce(ctx, s, 'recovery-codes');
    await show(ctx, s, user, fresh ? { newRecoveryCodes: fresh.codes } : {});
  });

  router.post('settings.security.totp.start', `${PAGE}/totp/start`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s, { enrolling: true });
    if (!user || !(await proved(ctx, s, user, 'totp', 'set up an authenticator app'))) return;
    if (!(await s.twoFactor.startTotp(user))) flash(ctx, 'Your authenticator app is on already.');
    const returnTo = safeReturnTo(formField(ctx, 'return_to'));
    ctx.status = 303;
    ctx.redirect(returnTo ? `${PAGE}?return_to=${encodeURIComponent(returnTo)}#totp-heading` : `${PAGE}#totp-heading`);
  });

  router.post('settings.security.totp', `${PAGE}/totp`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s, { enrolling: true });
    if (!user) return;
    const result = await s.twoFactor.confirmTotp(user, formField(ctx, 'code'), ctx.ip);
    if (!result.ok) {
      const message = result.reason === 'throttled' ? throttledMessage(result.retryAfterMs ?? 0) : 'That code is not right: type the code your app shows now.';
      return refused(ctx, s, user, 'totp', { reason: result.reason, message, ...(result.retryAfterMs ? { retryAfterMs: result.retryAfterMs } : {}) });
    }
    const ended = await secured(ctx, s, user, 'totp');
    await s.audit.record({ type: 'totp.enabled', details: { sessions_ended: ended } });
    if (result.recoveryCodes) await s.audit.record({ type: 'recovery_codes.generated', details: { count: result.recoveryCodes.length } });
    flash(ctx, `Authenticator app on.${ended ? ` Signed out ${plural(ended, 'other session')}.` : ''}`);
    const returnTo = safeReturnTo(formField(ctx, 'return_to'));
    const to = returnTo ? `${PAGE}?return_to=${encodeURIComponent(returnTo)}` : PAGE;
    if (result.recoveryCodes) return redirectWithOnce(ctx, s, { kind: 'recovery-codes', codes: result.recoveryCodes }, `${to}#recovery-heading`);
    ctx.status = 303;
    ctx.redirect(returnTo ?? PAGE);
  });

  router.post('settings.security.totp.disable', `${PAGE}/totp/disable`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    if (await lastRequiredFactor(s, user, 'totp')) return refused(ctx, s, user, 'totp-disable', { reason: 'refused', message: LAST_FACTOR });
    if (!(await proved(ctx, s, user, 'totp-disable', 'turn off your authenticator app'))) return;
    if (await s.twoFactor.disableTotp(user.id)) await s.audit.record({ type: 'totp.disabled' });
    flash(ctx, 'Authenticator app off.');
    ctx.status = 303;
    ctx.redirect(PAGE);
  });

  router.post('settings.security.recovery', `${PAGE}/recovery-codes`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user || !(await proved(ctx, s, user, 'recovery', 'make new recovery codes'))) return;
    const codes = await s.twoFactor.newRecoveryCodes(user.id);
    await s.audit.record({ type: 'recovery_codes.generated', details: { count: codes.length } });
    await redirectWithOnce(ctx, s, { kind: 'recovery-codes', codes }, `${PAGE}#recovery-heading`);
  });

  router.post('settings.security.passkeys.options', `${PAGE}/passkeys/options`, jsonBody(), async (ctx) => {
    const user = await requireJsonUser(ctx, s);
    const rp = relyingParty(s);
    if (!rp) throw new AppError('conflict', 'this server does not offer passkeys: its public URL must name a host (not an IP address) on https or localhost');
    await requireRecentProofJson(ctx, s, `${PAGE}#passkeys-heading`);
    const options = await s.passkeys.registrationOptions(rp, user);
    await s.webSessions.setChallenge(ctx.state.session!, options.challenge, s.now());
    ctx.body = options;
  });

  router.post('settings.security.passkeys', `${PAGE}/passkeys`, jsonBody(), async (ctx) => {
    const user = await requireJsonUser(ctx, s);
    const body = jsonFields(ctx);
    const rp = relyingParty(s);
    const challenge = await s.webSessions.takeChallenge(ctx.state.session!);
    if (!rp || !challenge) throw new AppError('invalid_request', 'the passkey request expired: try again');
    const name = typeof body.name === 'string' ? body.name : '';
    const unsafe = unsafeTextProblem(name);
    if (unsafe) throw new AppError('invalid_request', `The name ${unsafe}.`);
    const first = !(await s.twoFactor.hasSecondFactor(user.id));
    const outcome = await s.passkeys.register(rp, user, body.response as never, challenge, name);
    if (!outcome.ok) throw new AppError('invalid_request', outcome.message);
    const ended = first ? await secured(ctx, s, user, 'passkey') : 0;
    await s.audit.record({ type: 'passkey.added', target: { type: 'passkey', id: outcome.value.id, label: outcome.value.name }, details: { sessions_ended: ended } });
    // A passkey signs in on its own unless the person chose otherwise (GitHub's default): `alone` from the form.
    const alone = body.alone !== false;
    if (alone !== (await s.twoFactor.status(user.id)).passkeySignIn) {
      await s.passkeys.setSignInAlone(user.id, alone);
      await s.audit.record({ type: 'passkey_sign_in.changed', details: { alone } });
    }
    // The first second factor of any kind comes with recovery codes, shown once: a lost laptop is not a locked account.
    const codes = await s.twoFactor.recoveryCodesIfNone(user.id);
    if (codes) await s.audit.record({ type: 'recovery_codes.generated', details: { count: codes.length } });
    flash(ctx, `Added the passkey “${outcome.value.name}”.${alone ? ' It signs you in without your password.' : ''}${ended ? ` Signed out ${plural(ended, 'other session')}.` : ''}`);
    const returnTo = safeReturnTo(typeof body.return_to === 'string' ? body.return_to : undefined);
    if (codes) {
      await s.webSessions.stashOnce(ctx.state.session!, { kind: 'recovery-codes', codes });
      ctx.body = { redirect: `${returnTo ? `${PAGE}?return_to=${encodeURIComponent(returnTo)}` : PAGE}#recovery-heading` };
      return;
    }
    ctx.body = { redirect: returnTo ?? PAGE };
  });

  router.post('settings.security.passkeys.rename', `${PAGE}/passkeys/:id/rename`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const name = formField(ctx, 'name');
    const typed = { renaming: { id: ctx.params.id!, name } };
    const unsafe = unsafeTextProblem(name);
    if (unsafe) return refused(ctx, s, user, 'passkey', { reason: 'refused', message: `The name ${unsafe}.` }, typed);
    // Refused as typed, not cut: the field lets through what may be a character longer (maxlengthFor).
    if (codePointCount(name.trim()) > MAX_NAME_CHARS) return refused(ctx, s, user, 'passkey', { reason: 'refused', message: `The name must be at most ${MAX_NAME_CHARS} characters.` }, typed);
    const renamed = await s.passkeys.rename(user.id, ctx.params.id!, name);
    if (!renamed) return refused(ctx, s, user, 'passkey', { reason: 'refused', message: 'No such passkey, or no name given.' }, typed);
    await s.audit.record({ type: 'passkey.renamed', target: { type: 'passkey', id: renamed.id, label: renamed.name } });
    flash(ctx, `Renamed the passkey to “${renamed.name}”.`);
    ctx.status = 303;
    ctx.redirect(PAGE);
  });

  router.post('settings.security.passkeys.remove', `${PAGE}/passkeys/:id/remove`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const passkey = (await s.passkeys.list(user.id)).find((p) => p.id === ctx.params.id);
    if (!passkey) return refused(ctx, s, user, 'passkey', { reason: 'refused', message: 'No such passkey.' });
    if (await lastRequiredFactor(s, user, 'passkey')) return refused(ctx, s, user, 'passkey', { reason: 'refused', message: LAST_FACTOR });
    if (!(await proved(ctx, s, user, 'passkey', `remove the passkey “${passkey.name}”`))) return;
    if (await s.passkeys.remove(user.id, passkey.id)) {
      await s.audit.record({ type: 'passkey.removed', target: { type: 'passkey', id: passkey.id, label: passkey.name } });
      // A passkey alone signs in only while there is one; recovery codes stay only while a second factor does.
      if ((await s.passkeys.list(user.id)).length === 0) await s.passkeys.setSignInAlone(user.id, false);
      await s.twoFactor.forgetRecoveryWithoutFactor(user.id);
    }
    flash(ctx, `Removed the passkey “${passkey.name}”.`);
    ctx.status = 303;
    ctx.redirect(PAGE);
  });

  router.post('settings.security.passkey_sign_in', `${PAGE}/passkey-sign-in`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const alone = formField(ctx, 'sign_in') === 'alone';
    if (!(await proved(ctx, s, user, 'passkey-sign-in', alone ? 'let your passkeys sign you in without your password' : 'ask for your password before your passkeys'))) return;
    if (alone && (await s.passkeys.list(user.id)).length === 0) return refused(ctx, s, user, 'passkey-sign-in', { reason: 'refused', message: 'Add a passkey first.' });
    // Choosing what is already set changes nothing, and records nothing.
    if (alone !== (await s.twoFactor.status(user.id)).passkeySignIn) {
      await s.passkeys.setSignInAlone(user.id, alone);
      await s.audit.record({ type: 'passkey_sign_in.changed', details: { alone } });
    }
    flash(ctx, alone ? 'Your passkeys now sign you in without your password.' : 'Your passkeys now sign you in after your password.');
    ctx.status = 303;
    ctx.redirect(PAGE);
  });

  router.post('settings.security.sessions.end', `${PAGE}/sessions/:handle/end`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s, { enrolling: true });
    if (!user) return;
    const current = (await s.webSessions.list(user.id, ctx.state.session!)).find((x) => x.current);
    const ended = current?.handle !== ctx.params.handle && (await s.webSessions.endListed(user.id, ctx.params.handle!));
    if (ended) await s.audit.record({ type: 'session.ended', details: { session: ctx.params.handle } });
    flash(ctx, ended ? 'Ended that session.' : 'That session had ended already.');
    ctx.status = 303;
    ctx.redirect(`${PAGE}#sessions-heading`);
  });

  router.post('settings.security.sessions.end_others', `${PAGE}/sessions/end-others`, formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s, { enrolling: true });
    if (!user) return;
    const ended = await s.webSessions.endOthers(user.id, ctx.state.session!);
    await s.audit.record({ type: 'session.ended', details: { sessions: ended, all_others: true } });
    flash(ctx, `Signed out ${plural(ended, 'other session')}.`);
    ctx.status = 303;
    ctx.redirect(`${PAGE}#sessions-heading`);
  });
}

/** A page script's JSON post from Settings → Security: signed in (a first factor may be being set up), CSRF checked. */
async function requireJsonUser(ctx: WebContext, s: Services): Promise<WebUser> {
  const user = await signedIn(ctx, s, { enrolling: true });
  if ('reason' in user) throw new AppError('unauthorized', 'sign in again: your session ended');
  checkCsrf(ctx, s);
  return user;
}
