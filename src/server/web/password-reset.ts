/**
 * Password resets (public pages): "Forgot password?" mails a one-time link (docs/mail.md), and the link's page sets a
 * new password once, ending every session of the account. The request page answers the same for any address, so it
 * tells no one who has an account here.
 */
import type Router from '@koa/router';
import { MIN_PASSWORD_LENGTH } from '../../auth/password.js';
import { isAppError } from '../../core/errors.js';
import { sentence } from '../../web/format.js';
import { messagePage } from '../../web/pages/message.js';
import { forgotPasswordPage, resetPasswordPage } from '../../web/pages/password-reset.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { ensureSession, type WebContext } from './session.js';
import { cutChars } from '../../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';

const NOT_VALID = {
  title: 'Reset link not valid',
  message: 'This link to set a new password has been used already, has expired or is not valid. Ask for a new one, or ask an administrator of this docsearch.',
  next: { href: '/forgot-password', label: 'Ask for a new link' },
};

export function passwordResetRoutes(router: Router<AppState>, s: Services): void {
  router.get('password.forgot', '/forgot-password', async (ctx) => {
    const session = await ensureSession(ctx, s);
    render(ctx, forgotPasswordPage({ csrfToken: session.csrfToken, canMail: s.mailer.enabled && s.config.passwordLogin !== 'off' }));
  });

  router.post('password.forgot.submit', '/forgot-password', formBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const email = cutChars(formField(ctx, 'email').trim(), MAX_EMAIL_CHARS);
    if (s.config.passwordLogin !== 'off') await s.teamAdmin.forgotPassword(email);
    render(ctx, forgotPasswordPage({ csrfToken: session.csrfToken, canMail: s.mailer.enabled, sent: s.mailer.enabled, email }));
  });

  const show = (ctx: WebContext, token: string, email: string, error?: string) =>
    render(ctx, resetPasswordPage({ csrfToken: ctx.state.session!.csrfToken, token, email, minPasswordLength: MIN_PASSWORD_LENGTH, ...(error ? { error } : {}) }), error ? 400 : 200);

  router.get('password.reset', '/reset-password', async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const user = await s.teamAdmin.resetFor(token);
    if (!user) return render(ctx, messagePage(NOT_VALID), 404);
    await ensureSession(ctx, s);
    show(ctx, token, user.email);
  });

  router.post('password.reset.submit', '/reset-password', formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    const token = formField(ctx, 'token');
    const user = await s.teamAdmin.resetFor(token);
    if (!user) return render(ctx, messagePage(NOT_VALID), 404);
    const password = formField(ctx, 'password');
    if (password !== formField(ctx, 'password2')) return show(ctx, token, user.email, 'The passwords do not match.');
    try {
      const done = await s.teamAdmin.completeReset(token, password);
      // Used up between the read above and here by another tab or person.
      if (!done) return render(ctx, messagePage(NOT_VALID), 404);
      flash(ctx, `Your new password is set, and every browser that was signed in to ${done.user.email} is signed out. Sign in with it now.`);
      ctx.status = 303;
      ctx.redirect('/login');
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      show(ctx, token, user.email, sentence(err.message));
    }
  });
}
