import type Router from '@koa/router';
import { MIN_PASSWORD_LENGTH } from '../../auth/password.js';
import { isAppError } from '../../core/errors.js';
import { sentence } from '../../web/format.js';
import { messagePage } from '../../web/pages/message.js';
import { setupPage } from '../../web/pages/setup.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { ensureSession } from './session.js';
import { completeSignIn } from './sign-in.js';
import { formBody, formField, formFields } from './form.js';
import { render } from './render.js';

const USED = { title: 'Setup link not valid', message: 'This setup link has already been used or is not valid. Sign in instead, or ask the operator to run `docsearch users add <email>`.' };

export function setupRoutes(router: Router<AppState>, s: Services): void {
  router.get('setup', '/setup', async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    if (!(await s.accounts.setupTokenValid(token))) return render(ctx, messagePage(USED), 404);
    const session = await ensureSession(ctx, s);
    render(ctx, setupPage({ csrfToken: session.csrfToken, token, minPasswordLength: MIN_PASSWORD_LENGTH }));
  });

  router.post('setup.submit', '/setup', formBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const token = formField(ctx, 'token');
    const email = formField(ctx, 'email');
    if (!(await s.accounts.setupTokenValid(token))) return render(ctx, messagePage(USED), 404);
    // The page asks for the password twice; a post without the second (a script, a page from before) is taken as it is.
    if (formFields(ctx, 'password2').length > 0 && formField(ctx, 'password2') !== formField(ctx, 'password')) {
      return render(ctx, setupPage({ csrfToken: session.csrfToken, token, email, error: 'The passwords do not match.', minPasswordLength: MIN_PASSWORD_LENGTH }), 400);
    }
    try {
      const user = await s.accounts.completeSetup(token, email, formField(ctx, 'password'));
      s.log.info({ user: user.id }, 'first account created through the setup link');
      await s.audit.record({ type: 'account.created', actor: { id: user.id, email: user.email }, target: { type: 'account', id: user.id, label: user.email }, details: { how: 'setup link' } });
      await completeSignIn(ctx, s, user, 'setup');
      ctx.redirect('/documents'); // the library: empty, it says where to upload
    } catch (err) {
      if (!isAppError(err) || err.status >= 500) throw err;
      render(ctx, setupPage({ csrfToken: session.csrfToken, token, email, error: sentence(err.message), minPasswordLength: MIN_PASSWORD_LENGTH }), 400);
    }
  });
}
