import type { WebSession } from '../../auth/web-sessions.js';
import { AppError } from '../../core/errors.js';
import type { Services } from '../services.js';
import { formField } from './form.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

/**
 * Every state-changing form carries the session's CSRF token; anything else is refused. Script calls
 * (uploads) send it in X-CSRF-Token instead, which another site can't set without a CORS preflight.
 */
export function checkCsrf(ctx: WebContext, s: Services, token = formField(ctx, '_csrf') || ctx.get('x-csrf-token')): WebSession {
  checkSameOrigin(ctx, s);
  const session = ctx.state.session;
  if (!session || !s.webSessions.checkCsrf(session, token)) {
    throw new AppError('forbidden', 'the form expired or did not come from this site — reload the page and try again', {
      details: { reason: 'csrf' },
    });
  }
  return session;
}

/**
 * The signed-in user sending a state-changing form, its CSRF token checked (refused with 403 otherwise); null
 * when nobody is signed in, after a redirect to the login page and back.
 */
export async function requireFormUser(ctx: WebContext, s: Services, opts: { enrolling?: boolean } = {}): Promise<WebUser | null> {
  const user = await requireUser(ctx, s, opts);
  if (user) checkCsrf(ctx, s);
  return user;
}

/**
 * Beside the token, what the browser says about where a post comes from: an `Origin` other than this site's, or
 * `Sec-Fetch-Site: cross-site`, is refused. Absent headers pass (form clients that are no browser, old
 * browsers): the token still holds. This site is the public URL's origin, or the origin the request itself was
 * addressed to (a daemon reached by another name than its public URL, e.g. behind a proxy not yet configured):
 * a page of another site cannot make its browser send our Host with its own Origin.
 */
function checkSameOrigin(ctx: WebContext, s: Services): void {
  const site = ctx.get('sec-fetch-site').toLowerCase();
  // Our pages are served with Referrer-Policy: no-referrer, under which Chromium sends `Origin: null` on their own
  // form posts, with Sec-Fetch-Site: same-origin; `null` from anywhere else (a sandboxed frame) stays refused.
  const origin = ctx.get('origin') === 'null' && site === 'same-origin' ? '' : ctx.get('origin');
  let publicOrigin = '';
  try {
    publicOrigin = new URL(s.publicUrl()).origin;
  } catch {
    /* no public URL yet: only the request's own origin */
  }
  // Spelt out: `ctx.origin` is not always Koa's own here (a middleware may set it from the Origin header).
  const ownOrigin = `${ctx.request.protocol}://${ctx.request.host}`;
  const foreign = origin !== '' && origin !== publicOrigin && origin !== ownOrigin;
  if (foreign || site === 'cross-site') {
    throw new AppError('forbidden', 'this form was sent from another site — open the page on this site and try again', {
      details: { reason: 'origin', ...(origin ? { origin } : {}), ...(site ? { sec_fetch_site: site } : {}) },
    });
  }
}
