import type Router from '@koa/router';
import { throttledMessage } from '../../auth/accounts.js';
import { loginPage } from '../../web/pages/login.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf } from './csrf.js';
import { endSession, ensureSession, startUserSession } from './session.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { safeReturnTo } from './return-to.js';

export function loginRoutes(router: Router<AppState>, s: Services): void {
  router.get('login', '/login', async (ctx) => {
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined);
    if (ctx.state.session?.userId) return ctx.redirect(returnTo ?? '/');
    if (!(await s.accounts.hasUsers())) {
      return render(ctx, loginPage({ csrfToken: (await ensureSession(ctx, s)).csrfToken, error: 'No account exists yet: open the setup link that `docsearch serve` printed, or run `docsearch users add <email>`.' }));
    }
    const session = await ensureSession(ctx, s);
    render(ctx, loginPage({ csrfToken: session.csrfToken, returnTo }));
  });

  router.post('login.submit', '/login', formBody(), async (ctx) => {
    const session = checkCsrf(ctx, s);
    const email = formField(ctx, 'email');
    const returnTo = safeReturnTo(formField(ctx, 'return_to'));
    const result = await s.accounts.login(email, formField(ctx, 'password'), ctx.ip);
    if (!result.ok) {
      const error =
        result.reason === 'throttled'
          ? throttledMessage(result.retryAfterMs ?? 0)
          : result.reason === 'disabled'
            ? 'This account is disabled. Ask an administrator of this docsearch to enable it.'
            : 'Wrong email or password.';
      if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return render(ctx, loginPage({ csrfToken: session.csrfToken, email, error, returnTo }), result.reason === 'throttled' ? 429 : result.reason === 'disabled' ? 403 : 401);
    }
    await startUserSession(ctx, s, result.user.id);
    ctx.redirect(returnTo ?? '/');
  });

  router.post('logout', '/logout', formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    await endSession(ctx, s);
    ctx.redirect('/login');
  });
}
