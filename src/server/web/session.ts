/**
 * The web session: its cookie, loaded for pages, started, replaced at sign-in (no fixation) and ended; the secret a
 * form leaves for the next page; the signed-in user a page needs. Forms, CSRF, flash messages and rendering are in
 * their own files beside it.
 */
import type { Context, Middleware } from 'koa';
import { type Actor, sessionActor } from '../../access/access-control.js';
import type { OnceMessage, WebSession } from '../../auth/web-sessions.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';

export const SESSION_COOKIE = 'ds_session';

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

/** Who a page is for: the signed-in person, and what access/ knows them by (a browser holds every document scope). */
export interface WebUser {
  id: string;
  email: string;
  isAdmin: boolean;
  actor: Actor;
}

/** The signed-in user for a page, or a redirect to the login page and back. */
export async function requireUser(ctx: WebContext, s: Services): Promise<WebUser | null> {
  const userId = ctx.state.session?.userId;
  const user = userId ? await s.accounts.findUser(userId) : null;
  if (!user || user.disabledAt !== null) {
    ctx.redirect(`/login?return_to=${encodeURIComponent(ctx.originalUrl)}`);
    return null;
  }
  return { id: user.id, email: user.email, isAdmin: user.isAdmin, actor: sessionActor(user.id) };
}
