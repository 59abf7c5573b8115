import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import type { OnceMessage, WebSession } from '../../auth/web-sessions.js';
import { AppError } from '../../core/errors.js';
import type { Html } from '../../web/html.js';
import { type Flash, withFlash } from '../../web/pages/layout.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';

export const SESSION_COOKIE = 'ds_session';
/** One message for the next page (what a form just did), read and cleared by that page's render. */
const FLASH_COOKIE = 'ds_flash';
const FLASH_MAX_CHARS = 600;

export type WebContext = Context & { state: AppState };

/** Loads the web session named by the cookie (if any) for pages; /api routes never see cookies. */
export function webSession(s: Services): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.session = await s.webSessions.load(ctx.cookies.get(SESSION_COOKIE));
    await next();
    // A secret a form left for the next page is shown there or nowhere: the first page after it drops it.
    const session = ctx.state.session;
    if (session?.onceSealed && ctx.method === 'GET' && ctx.status === 200 && ctx.response.is('html')) await s.webSessions.takeOnce(session);
  };
}

function setCookie(ctx: WebContext, session: WebSession): void {
  ctx.cookies.set(SESSION_COOKIE, session.id, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.secure,
    path: '/',
    overwrite: true,
    ...(session.userId ? { maxAge: 7 * 24 * 3600_000 } : {}),
  });
}

/** The current session, starting an anonymous one when a form needs a CSRF token. */
export async function ensureSession(ctx: WebContext, s: Services): Promise<WebSession> {
  if (ctx.state.session) return ctx.state.session;
  const session = await s.webSessions.start(null);
  setCookie(ctx, session);
  ctx.state.session = session;
  return session;
}

/** Replaces the session with a fresh authenticated one (no session fixation). */
export async function startUserSession(ctx: WebContext, s: Services, userId: string): Promise<WebSession> {
  if (ctx.state.session) await s.webSessions.end(ctx.state.session.id);
  const session = await s.webSessions.start(userId);
  setCookie(ctx, session);
  ctx.state.session = session;
  return session;
}

export async function endSession(ctx: WebContext, s: Services): Promise<void> {
  if (ctx.state.session) await s.webSessions.end(ctx.state.session.id);
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, overwrite: true });
  ctx.state.session = null;
}

/**
 * Post/Redirect/Get for a form that created a secret: keeps it in the session for the next page, and redirects
 * there with 303, so reloading that page shows it (once) and re-posts nothing.
 */
export async function redirectWithOnce(ctx: WebContext, s: Services, message: OnceMessage, to: string): Promise<void> {
  await s.webSessions.stashOnce(ctx.state.session!, message);
  ctx.status = 303;
  ctx.redirect(to);
}

/** What a form left for this page with `redirectWithOnce`, when it is of this kind; gone after this page. */
export async function takeOnce<K extends OnceMessage['kind']>(ctx: WebContext, s: Services, kind: K): Promise<Extract<OnceMessage, { kind: K }> | null> {
  const session = ctx.state.session;
  const message = session ? await s.webSessions.takeOnce(session) : null;
  return message?.kind === kind ? (message as Extract<OnceMessage, { kind: K }>) : null;
}

/** Parses an urlencoded form (small, no files). */
export function formBody(): Middleware {
  const parse = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: '64kb' });
  return parse as unknown as Middleware;
}

export function formField(ctx: WebContext, name: string): string {
  const value = (ctx.request as { body?: Record<string, unknown> }).body?.[name];
  if (Array.isArray(value)) return String(value[0] ?? '');
  return typeof value === 'string' ? value : '';
}

export function formFields(ctx: WebContext, name: string): string[] {
  const value = (ctx.request as { body?: Record<string, unknown> }).body?.[name];
  if (Array.isArray(value)) return value.map(String);
  return typeof value === 'string' ? [value] : [];
}

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

/** Only same-site paths may be returned to after login (no open redirects). */
export function safeReturnTo(value: string | undefined): string | undefined {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  return value;
}

/**
 * Says what a form did on the page it redirects to ("Deleted “notes.pdf”."). A cookie rather than a query
 * parameter, so nobody can put words on someone else's page through a link.
 */
export function flash(ctx: WebContext, text: string, kind: Flash['kind'] = 'notice'): void {
  const value = `${kind === 'error' ? 'e' : 'n'}${encodeURIComponent(text.slice(0, FLASH_MAX_CHARS))}`;
  ctx.cookies.set(FLASH_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: 60_000, overwrite: true });
}

function takeFlash(ctx: WebContext): Flash | null {
  const raw = ctx.cookies.get(FLASH_COOKIE);
  if (!raw) return null;
  ctx.cookies.set(FLASH_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, overwrite: true });
  try {
    return { kind: raw.startsWith('e') ? 'error' : 'notice', text: decodeURIComponent(raw.slice(1)).slice(0, FLASH_MAX_CHARS) };
  } catch {
    return null;
  }
}

export function render(ctx: WebContext, page: Html, status = 200): void {
  const message = status < 400 ? takeFlash(ctx) : null;
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = (message ? withFlash(page, message) : page).value;
}

/** The signed-in user for a settings page, or a redirect to the login page and back. */
export async function requireUser(ctx: WebContext, s: Services): Promise<{ id: string; email: string } | null> {
  const userId = ctx.state.session?.userId;
  const user = userId ? await s.accounts.findUser(userId) : null;
  if (!user) {
    ctx.redirect(`/login?return_to=${encodeURIComponent(ctx.originalUrl)}`);
    return null;
  }
  return { id: user.id, email: user.email };
}
