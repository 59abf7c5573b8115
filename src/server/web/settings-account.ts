import type Router from '@koa/router';
import type { AccountChangeResult } from '../../auth/accounts.js';
import { MIN_PASSWORD_LENGTH } from '../../auth/password.js';
import { plural } from '../../web/format.js';
import { type SettingsAccountData, settingsAccountPage } from '../../web/pages/settings-account.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { requireUser, type WebContext } from './session.js';
import { setShortcut, shortcutOn } from './search-shortcut.js';
import { setTheme, themeOf } from './theme.js';
import { THEMES } from '../../web/pages/layout.js';

type User = { id: string; email: string };

/** The page; a form's refusal (a status over 400) is that page after a 303 to it, so a reload posts nothing again. */
function showAccount(ctx: WebContext, user: User, extra: Partial<SettingsAccountData> = {}, status = 200): void {
  if (status >= 400) answerAsPage(ctx, '/settings/account');
  render(ctx, settingsAccountPage({ user, csrfToken: ctx.state.session!.csrfToken, minPasswordLength: MIN_PASSWORD_LENGTH, theme: themeOf(ctx), shortcut: shortcutOn(ctx), ...extra }), status);
}

/** The page again with why a change was refused: 401 for a wrong password, 429 (Retry-After) once throttled. */
function refused(ctx: WebContext, user: User, form: 'password' | 'email', result: Extract<AccountChangeResult, { ok: false }>, newEmail?: string): void {
  if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
  const status = result.reason === 'throttled' ? 429 : result.reason === 'invalid' ? 401 : 400;
  showAccount(ctx, user, { error: { form, message: result.message }, newEmail }, status);
}

/** Settings → Account: change the password (the current one required; other sessions end) and the email; the theme. */
export function settingsAccountRoutes(router: Router<AppState>, s: Services): void {
  router.get('settings.account', '/settings/account', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) showAccount(ctx, user);
  });

  router.post('settings.account.password', '/settings/account/password', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const next = formField(ctx, 'new_password');
    if (next !== formField(ctx, 'new_password_again')) {
      return showAccount(ctx, user, { error: { form: 'password', message: 'The new passwords do not match.' } }, 400);
    }
    const result = await s.accounts.changePassword(user.id, formField(ctx, 'current_password'), next, ctx.ip);
    if (!result.ok) return refused(ctx, user, 'password', result);
    const ended = await s.webSessions.endOthers(user.id, ctx.state.session!);
    await s.audit.record({ type: 'account.password_changed', target: { type: 'account', id: user.id, label: user.email }, details: { sessions_ended: ended } });
    flash(ctx, ended > 0 ? `Password changed. Signed out ${plural(ended, 'other session')}.` : 'Password changed.');
    ctx.status = 303;
    ctx.redirect('/settings/account');
  });

  router.post('settings.appearance', '/settings/appearance', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const theme = THEMES.find((t) => t === formField(ctx, 'theme'));
    if (!theme) return showAccount(ctx, user, { error: { form: 'appearance', message: 'Choose System, Light or Dark.' } }, 400);
    setTheme(ctx, theme);
    // Only a form that asks says which: one that sends the theme alone keeps the shortcut as it was.
    const shortcut = formField(ctx, 'shortcut');
    if (shortcut === 'on' || shortcut === 'off') setShortcut(ctx, shortcut === 'on');
    const said = shortcut === 'off' ? ' Pressing / no longer goes to the search box.' : shortcut === 'on' ? ' Pressing / goes to the search box.' : '';
    flash(ctx, `${theme === 'system' ? 'The pages now follow your system’s light or dark setting.' : `The pages are now ${theme}.`}${said}`);
    ctx.status = 303;
    ctx.redirect('/settings/account#appearance-heading');
  });

  router.post('settings.account.email', '/settings/account/email', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const email = formField(ctx, 'email');
    const result = await s.accounts.changeEmail(user.id, formField(ctx, 'password'), email, ctx.ip);
    if (!result.ok) return refused(ctx, user, 'email', result, email);
    await s.audit.record({ type: 'account.email_changed', target: { type: 'account', id: user.id, label: result.user.email }, details: { from: user.email, to: result.user.email } });
    flash(ctx, `E-mail changed to ${result.user.email}. Sign in with it from now on.`);
    ctx.status = 303;
    ctx.redirect('/settings/account');
  });
}
