/**
 * The web session: its cookie, loaded for pages, started, replaced at sign-in (no fixation) and ended; the secret a
 * form leaves for the next page; the signed-in user a page needs. Forms, CSRF, flash messages and rendering are in
 * their own files beside it.
 */
import type { Context, Middleware } from 'koa';
import { type Actor, sessionActor } from '../../access/access-control.js';
import { type OnceMessage, passedSecondFactor, type ProviderLink, type SeenFrom, type WebSession } from '../../auth/web-sessions.js';
import { actingAs } from '../../core/audit.js';
import type { Services } from '../services.js';
import { answeredAsPage } from './answer-as-page.js';
import type { AppState } from '../state.js';
import { checkProviderSession } from './provider-session.js';

export const SESSION_COOKIE = 'ds_session';

export type WebContext = Context & { state: AppState };

/** Loads the web session named by the cookie (if any) for pages; /api routes never see cookies. */
export function webSession(s: Services): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.session = await s.webSessions.load(ctx.cookies.get(SESSION_COOKIE), seenFrom(ctx));
    // A signed-in session slides (7 days from its last use): so does its cookie, or the browser would drop it 7 days
    // after the sign-in however busy the person is.
    if (ctx.state.session?.renewed && ctx.state.session.userId) setCookie(ctx, ctx.state.session);
    if (await sendKeptAnswer(ctx, s)) return;
    await next();
    const session = ctx.state.session;
    const page = answeredAsPage(ctx);
    // A role short (403) stays the answer itself, the "not allowed" page, as everywhere else (flash.ts `refused`).
    if (page && session && ctx.method === 'POST' && ctx.status !== 403 && typeof ctx.body === 'string' && ctx.response.is('html')) {
      const retryAfter = ctx.response.get('Retry-After');
      const answer = { status: ctx.status, html: ctx.body, ...(retryAfter ? { retryAfter } : {}) };
      // On a redirect, Retry-After would ask the browser to wait before following it (RFC 9110 §10.2.3): it goes with the page.
      ctx.remove('Retry-After');
      ctx.status = 303;
      ctx.redirect(page);
      // Kept for the address as the browser asks for it next: the Location as sent (encoded), without its fragment.
      const path = ctx.response.get('Location').split('#')[0]!;
      await s.webSessions.stashOnce(session, { kind: 'page', path, ...answer });
      return;
    }
    // A secret a form left for the next page is shown there or nowhere: the first page after it drops it.
    if (session?.onceSealed && ctx.method === 'GET' && ctx.status === 200 && ctx.response.is('html')) await s.webSessions.takeOnce(session);
  };
}

/** The GET a form's 303 sent here (see answer-as-page.ts): the form's answer, once, with its status. */
async function sendKeptAnswer(ctx: WebContext, s: Services): Promise<boolean> {
  const session = ctx.state.session;
  if (!session?.onceSealed || ctx.method !== 'GET') return false;
  const kept = s.webSessions.peekOnce(session);
  if (kept?.kind !== 'page' || kept.path !== ctx.originalUrl || (await s.webSessions.takeOnce(session)) === null) return false;
  ctx.status = kept.status;
  if (kept.retryAfter) ctx.set('Retry-After', kept.retryAfter);
  ctx.type = 'html';
  ctx.body = kept.html;
  return true;
}

/** Where a request comes from, as a session keeps it (Settings → Security lists it). */
export const seenFrom = (ctx: Context): SeenFrom => ({ clientIp: ctx.ip, userAgent: ctx.get('user-agent') || null });

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

/**
 * Replaces the session with a fresh one (no session fixation): signed in as `userId` (how: `signedInWith`, see
 * WebSession), or, with `pending`, still anonymous and owing that account's second factor (`signedInWith` is then the
 * first step it passed).
 */
export async function startUserSession(
  ctx: WebContext,
  s: Services,
  userId: string,
  signedInWith: string,
  opts: { pending?: boolean; provider?: Omit<ProviderLink, 'checkedAt'> | undefined } = {},
): Promise<WebSession> {
  if (ctx.state.session) await s.webSessions.end(ctx.state.session.id);
  const session = opts.pending
    ? await s.webSessions.start(null, { pendingUserId: userId, signedInWith, seen: seenFrom(ctx), ...(opts.provider ? { provider: opts.provider } : {}) })
    : await s.webSessions.start(userId, { signedInWith, seen: seenFrom(ctx), ...(opts.provider ? { provider: opts.provider } : {}) });
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
  /** Whether this session passed a second factor (a passkey alone counts). */
  secondFactor: boolean;
  /** Whether `--require-2fa` asks this account for a second factor it does not have yet. */
  mustEnrol: boolean;
}

/**
 * The most bytes of `return_to` a redirect to the login page carries. The whole answer's headers must fit a proxy's
 * buffer for them (nginx's proxy_buffer_size: 4 KiB on most machines, ~600 bytes of it our other headers; Apache's
 * 8 KiB a field) and a client's (Node's fetch: 16 KiB): a search link of a 2,000-character query, twice
 * percent-encoded, made a 40 KB Location the proxy answered with its own 502. An OAuth authorization request is
 * usually far shorter, and keeps its parameters through the sign-in.
 */
const MAX_RETURN_TO_BYTES = 3072;

/** Where the login page sends a person back to: this address, or its path alone when the whole would be too long. */
function returnAddress(ctx: WebContext): string {
  const whole = encodeURIComponent(ctx.originalUrl);
  return whole.length <= MAX_RETURN_TO_BYTES ? whole : encodeURIComponent(ctx.originalUrl.split('?')[0]!);
}

/** Why a request is not let through as a signed-in person, and where it is sent instead. */
export type Refused = { reason: 'signed_out' | 'second_factor' | 'enrol'; to: string };

/**
 * The one gate of every signed-in page and form (and of the OAuth consent): the session's account, live, and
 * through every factor it has.
 * - Signed out, or the account disabled: to the login page and back.
 * - A session that did not pass a second factor while the account has one (opened before it was set up): ended,
 *   and to the login page.
 * - An account `--require-2fa` asks a second factor of, without one: only pages that set one up (`enrolling`) let
 *   it through (with `mustEnrol`); every other page sends it to Settings → Security and back.
 */
export async function signedIn(ctx: WebContext, s: Services, opts: { enrolling?: boolean } = {}): Promise<WebUser | Refused> {
  const back = returnAddress(ctx);
  const session = ctx.state.session;
  let user = session?.userId ? await s.accounts.findUser(session.userId) : null;
  if (!session || !user || user.disabledAt !== null) return { reason: 'signed_out', to: `/login?return_to=${back}` };
  const provider = await checkProviderSession(s, session, user.id);
  if (provider === 'ended') {
    ctx.state.session = null;
    return { reason: 'signed_out', to: `/login?return_to=${back}` };
  }
  // The provider's answer may have changed the admin flag.
  if (provider === 'renewed') user = (await s.accounts.findUser(user.id)) ?? user;
  const passed = passedSecondFactor(session.signedInWith);
  const required = s.twoFactor.required(user);
  let mustEnrol = false;
  if (!passed) {
    const hasFactor = await s.twoFactor.hasSecondFactor(user.id);
    // Opened before the factor was set up (in another session), or before a provider's sign-in without MFA asked it.
    if (hasFactor) {
      await endSession(ctx, s);
      return { reason: 'second_factor', to: `/login?return_to=${back}` };
    }
    if (!hasFactor) {
      if (required && !opts.enrolling) return { reason: 'enrol', to: `/settings/security?return_to=${back}` };
      mustEnrol = required;
    }
  }
  actingAs({ id: user.id, email: user.email }, 'session');
  ctx.state.unreadNotices = await s.notices.unreadCount(user.id);
  return { id: user.id, email: user.email, isAdmin: user.isAdmin, actor: sessionActor(user.id), secondFactor: passed, mustEnrol };
}

/**
 * `requireUser` asked again, its session read again from the store: for a request that took long to arrive (an
 * upload), whose session may have ended, or its account been disabled, meanwhile.
 */
export async function stillSignedIn(ctx: WebContext, s: Services): Promise<WebUser | null> {
  ctx.state.session = await s.webSessions.load(ctx.cookies.get(SESSION_COOKIE), seenFrom(ctx));
  return requireUser(ctx, s);
}

/** The signed-in user for a page (see `signedIn`), or a redirect to where they must go first. */
export async function requireUser(ctx: WebContext, s: Services, opts: { enrolling?: boolean } = {}): Promise<WebUser | null> {
  const user = await signedIn(ctx, s, opts);
  if ('reason' in user) {
    ctx.redirect(user.to);
    return null;
  }
  return user;
}
