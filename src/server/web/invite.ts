import type Router from '@koa/router';
import { MIN_PASSWORD_LENGTH } from '../../auth/password.js';
import { isAppError } from '../../core/errors.js';
import { sentence } from '../../web/format.js';
import { invitePage } from '../../web/pages/invite.js';
import { messagePage } from '../../web/pages/message.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { completeSignIn } from './sign-in.js';
import { ensureSession, type WebContext } from './session.js';

const NOT_VALID = {
  title: 'Invitation link not valid',
  message: 'This invitation link has been used already, has expired or is not valid. Ask an administrator of this docsearch for a new one.',
};

/** Accepting an invitation (public): the link's address, a password, and the new account signed in. */
export function inviteRoutes(router: Router<AppState>, s: Services): void {
  const show = (ctx: WebContext, token: string, email: string, error?: string) =>
    render(ctx, invitePage({ csrfToken: ctx.state.session!.csrfToken, token, email, minPasswordLength: MIN_PASSWORD_LENGTH, ...(error ? { error } : {}) }), error ? 400 : 200);

  router.get('invite', '/invite', async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    const email = await s.teamAdmin.invitation(token);
    if (!email) return render(ctx, messagePage(NOT_VALID), 404);
    await ensureSession(ctx, s);
    show(ctx, token, email);
  });

  router.post('invite.accept', '/invite', formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    const token = formField(ctx, 'token');
    const email = await s.teamAdmin.invitation(token);
    if (!email) return render(ctx, messagePage(NOT_VALID), 404);
    const password = formField(ctx, 'password');
    if (password !== formField(ctx, 'password2')) return show(ctx, token, email, 'The passwords do not match.');
    try {
      const user = await s.teamAdmin.acceptInvite(token, password);
      // Used up between the two reads above and here by another tab or person.
      if (!user) return render(ctx, messagePage(NOT_VALID), 404);
      s.log.info({ user: user.id }, 'account created through an invitation');
      await completeSignIn(ctx, s, user, 'invite');
      // The page after says the account was made (an empty search page alone did not).
      flash(ctx, `Welcome: your account ${user.email} is made, and you are signed in.`);
      ctx.status = 303;
      ctx.redirect('/');
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      show(ctx, token, email, sentence(err.message));
    }
  });
}
