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
import { afterSignOut, ssoLoginOptions } from './sso.js';

export function loginRoutes(router: Router<AppState>, s: Services): void {
  router.get('login', '/login', async (ctx) => {
    const returnTo = safeReturnTo(ctx.query.return_to as string | undefined);
    if (ctx.state.session?.userId) return ctx.redirect(returnTo ?? '/');
    if (!(await s.accounts.hasUsers())) {
      // With a provider, its first sign-in makes the first account (the admin): the page offers it.
      if (!s.sso) return render(ctx, loginPage({ csrfToken: (await ensureSession(ctx, s)).csrfToken, error: 'No account exists yet: open the setup link that `docsearch serve` printed, or run `docsearch users add <email>`.' }));
    }
    const session = await ensureSession(ctx, s);
    render(ctx, loginPage({ csrfToken: session.csrfToken, returnTo, ...ssoLoginOptions(s) }));
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
      const error =
        result.reason === 'throttled'
          ? throttledMessage(result.retryAfterMs ?? 0)
          : result.reason === 'disabled'
            ? 'This account is disabled. Ask an administrator of this docsearch to enable it.'
            : 'Wrong email or password.';
      if (result.retryAfterMs) ctx.set('Retry-After', String(Math.ceil(result.retryAfterMs / 1000)));
      return render(ctx, loginPage({ csrfToken: session.csrfToken, email, error, returnTo, ...ssoLoginOptions(s) }), result.reason === 'throttled' ? 429 : result.reason === 'disabled' ? 403 : 401);
    }
    await startUserSession(ctx, s, result.user.id);
    ctx.redirect(returnTo ?? '/');
  });

  router.post('logout', '/logout', formBody(), async (ctx) => {
    checkCsrf(ctx, s);
    const userId = ctx.state.session?.userId;
    await endSession(ctx, s);
    ctx.redirect(await afterSignOut(s, userId));
  });
}
