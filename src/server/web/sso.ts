/**
 * Sign-in with the OpenID Connect provider (docs/sso.md): the login page's "Sign in with …" button posts here, the
 * browser goes to the provider and comes back to the callback, which signs the person in to the account the
 * provider's identity is (access/provider-accounts.ts) and returns to where they were going — a page, the consent
 * page of `docsearch login`, an application or an MCP client — through the same `return_to` as the password form.
 * Signing out ends the provider's session too, where it offers RP-initiated logout.
 */
import type Router from '@koa/router';
import { type ExternalIdentity, providerMfa } from '../../auth/sso/identity.js';
import { type OidcSignIn, SsoError } from '../../auth/sso/oidc.js';
import { openTransaction, sealTransaction, TRANSACTION_TTL_MS } from '../../auth/sso/transaction.js';
import { notFound } from '../../core/errors.js';
import { loginPage } from '../../web/pages/login.js';
import type { SsoSignIn } from '../../web/pages/sso-sign-in.js';
import type { Services } from '../services.js';
import { SSO_CALLBACK_PATH, type Sso } from '../sso.js';
import type { AppState } from '../state.js';
import { checkCsrf, requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { requireRecentProof } from './sudo.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { safeReturnTo, withReturn } from './return-to.js';
import { ensureSession, type WebContext } from './session.js';
import { backChannelLogout, providerLink } from './provider-session.js';
import { awaitSecondFactor, completeSignIn, SECOND_STEP_PATH } from './sign-in.js';

export const SSO_START_PATH = '/login/sso';
/** Where the provider posts back-channel logout tokens: <public-url> + this is registered there (docs/sso.md). */
export const SSO_BACKCHANNEL_PATH = '/login/sso/backchannel-logout';
/** The sealed transaction (auth/sso/transaction.ts), sent back only to the callback. */
const TRANSACTION_COOKIE = 'ds_sso';
const SETTINGS_SECURITY = '/settings/security';

/** What the login page offers besides (or instead of) the password form. */
export function ssoLoginOptions(s: Services): { sso?: SsoSignIn } {
  if (!s.sso) return {};
  return { sso: { name: s.sso.name, button: s.sso.oidc !== null, passwordLogin: s.config.passwordLogin !== 'off' } };
}

export function ssoRoutes(router: Router<AppState>, s: Services): void {
  router.post('login.sso', SSO_START_PATH, formBody(), async (ctx) => {
    const { sso, oidc } = configured(s);
    // Settings → Security's "Link": the signed-in person goes to sign in at the provider, to link the two.
    const linking = formField(ctx, 'link') === 'yes' ? await requireFormUser(ctx, s) : undefined;
    if (linking === null) return;
    // A link lets whoever holds the provider account in: a session left open is not proof enough (sudo mode).
    if (linking && !(await requireRecentProof(ctx, s, linking, `link your account with ${sso.name}`, SETTINGS_SECURITY))) return;
    const session = checkCsrf(ctx, s);
    const returnTo = linking ? SETTINGS_SECURITY : safeReturnTo(formField(ctx, 'return_to'));
    let begun: Awaited<ReturnType<OidcSignIn['begin']>>;
    try {
      begun = await oidc.begin(returnTo);
    } catch (err) {
      return failed(ctx, s, sso, err, returnTo);
    }
    const transaction = linking ? { ...begun.transaction, linkTo: linking.id } : begun.transaction;
    ctx.cookies.set(TRANSACTION_COOKIE, sealTransaction(session.id, transaction), {
      httpOnly: true,
      // Lax: the provider's redirect back is a top-level GET from its site, which Lax cookies go along with.
      sameSite: 'lax',
      secure: ctx.secure,
      path: SSO_CALLBACK_PATH,
      maxAge: TRANSACTION_TTL_MS,
      overwrite: true,
    });
    ctx.status = 303;
    ctx.redirect(begun.url.href);
  });

  router.get('login.sso.callback', SSO_CALLBACK_PATH, async (ctx) => {
    const { sso, oidc } = configured(s);
    const sealed = ctx.cookies.get(TRANSACTION_COOKIE);
    ctx.cookies.set(TRANSACTION_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: SSO_CALLBACK_PATH, maxAge: 0, overwrite: true });
    const session = ctx.state.session;
    const transaction = session ? openTransaction(session.id, sealed, s.now) : null;
    if (!transaction) {
      s.log.info({ event: 'sso.failed', failure: 'no_transaction' }, 'a sign-in came back from the provider without a sign-in started in this browser');
      return showError(ctx, s, 'This sign-in expired, or was started in another browser. Start it again.', 400);
    }
    let identity: Awaited<ReturnType<OidcSignIn['complete']>>;
    try {
      identity = await oidc.complete(transaction, ctx.querystring);
    } catch (err) {
      return failed(ctx, s, sso, err, transaction.returnTo);
    }
    if (transaction.linkTo) return linkSignedIn(ctx, s, sso, transaction.linkTo, identity);
    const outcome = await sso.accounts.signIn(identity);
    if (!outcome.ok) {
      s.log.info({ event: 'sso.refused', reason: outcome.reason, provider: identity.provider }, `a sign-in through ${sso.name} was refused: ${outcome.reason}`);
      return showError(ctx, s, outcome.message, 403, transaction.returnTo);
    }
    s.log.info(
      {
        event: 'sso.signed_in',
        user: outcome.user.id,
        provider: identity.provider,
        created: outcome.created,
        linked: outcome.linked,
        // "missing" is the first thing to look for when groups do not arrive (docs/sso.md, troubleshooting).
        groups_claim: identity.groups === null ? 'missing' : identity.groups.length,
        amr: identity.session?.amr,
        acr: identity.session?.acr,
      },
      `signed in through ${sso.name}`,
    );
    const mfa = providerMfa(identity.session, sso.mfaAcr);
    const provider = providerLink(sso, identity);
    // Without MFA at the provider, its sign-in stands for a password only: a factor the account set up here is asked
    // next, as after a password (docs/sso.md#second-factors).
    if (!mfa && (await s.twoFactor.hasSecondFactor(outcome.user.id))) {
      await awaitSecondFactor(ctx, s, outcome.user, 'sso', { provider });
      return ctx.redirect(withReturn(SECOND_STEP_PATH, transaction.returnTo));
    }
    // With MFA at the provider the sign-in passed a second factor; without, --require-2fa asks for one to be set up here.
    await completeSignIn(ctx, s, outcome.user, mfa ? 'sso+mfa' : 'sso', { provider });
    ctx.redirect(transaction.returnTo ?? '/');
  });

  // OpenID Connect Back-Channel Logout 1.0: the provider, not a browser, posts a logout token (no session, no CSRF:
  // the token's signature is the proof). 200 once the sessions it names are ended; 400 for a token that fails a check.
  router.post('login.sso.backchannel', SSO_BACKCHANNEL_PATH, formBody(), async (ctx) => {
    configured(s);
    ctx.set('Cache-Control', 'no-store');
    const token = formField(ctx, 'logout_token');
    try {
      if (!token) throw new SsoError('invalid', 'no logout_token in the request');
      await backChannelLogout(s, token);
    } catch (err) {
      if (!(err instanceof SsoError)) throw err;
      s.log.warn({ event: 'sso.backchannel_refused', failure: err.failure, reason: err.message }, `a back-channel logout was refused: ${err.message}`);
      const upstream = err.failure === 'unreachable' || err.failure === 'untrusted';
      ctx.status = upstream ? 502 : 400;
      ctx.body = { error: upstream ? 'temporarily_unavailable' : 'invalid_request', error_description: err.message };
      return;
    }
    ctx.status = 200;
    ctx.body = '';
  });
}

/**
 * Where the browser goes after signing out of docsearch: the provider's end_session_endpoint, when the account is
 * linked there and the provider has one (RP-initiated logout, back to our login page); else our login page.
 */
export async function afterSignOut(s: Services, userId: string | null | undefined): Promise<string> {
  const oidc = s.sso?.oidc;
  if (!userId || !oidc) return '/login';
  const server = await oidc.metadata();
  if (!server?.end_session_endpoint || !(await s.sso!.accounts.linked(userId, server.issuer))) return '/login';
  return (await oidc.signOutUrl(server, `${s.publicUrl()}/login`)).href;
}

/** The end of Settings → Security's "Link": the same account still signed in here, linked to who signed in there. */
async function linkSignedIn(ctx: WebContext, s: Services, sso: Sso, userId: string, identity: ExternalIdentity): Promise<void> {
  const user = ctx.state.session?.userId === userId ? await s.accounts.findUser(userId) : null;
  if (!user || user.disabledAt !== null) return showError(ctx, s, 'Sign in here first, then link your account from Settings → Security.', 400);
  const linked = await sso.accounts.linkSignedIn(user, identity);
  if (linked.ok) flash(ctx, linked.already ? `Your account was linked with ${sso.name} already.` : `Your account is linked with ${sso.name}: you can sign in with it from now on.`);
  else flash(ctx, linked.message, 'error');
  ctx.redirect(SETTINGS_SECURITY);
}

function configured(s: Services): { sso: Sso; oidc: OidcSignIn } {
  if (!s.sso?.oidc) throw notFound('page');
  return { sso: s.sso, oidc: s.sso.oidc };
}

/** A sign-in that did not complete: logged with why, and the login page saying what to do. */
function failed(ctx: WebContext, s: Services, sso: Sso, err: unknown, returnTo: string | undefined): Promise<void> {
  if (!(err instanceof SsoError)) throw err;
  s.log.warn({ event: 'sso.failed', failure: err.failure, reason: err.message }, `a sign-in through ${sso.name} failed: ${err.message}`);
  const passwords = s.config.passwordLogin !== 'off';
  const message = {
    unreachable: `${sso.name} cannot be reached right now, so signing in with it does not work. Try again in a while${passwords ? ', or log in with your password' : ''}.`,
    // Not "right now": no retry helps until the operator gives this server the provider's certificate authority.
    untrusted: `This server does not trust ${sso.name}'s certificate, so signing in with it does not work. Tell an administrator: the server needs ${sso.name}'s certificate authority (NODE_EXTRA_CA_CERTS; the server's log names the certificate error)${passwords ? '. Meanwhile, log in with your password' : ''}.`,
    denied: `${sso.name} did not sign you in. Try again.`,
    invalid: `The answer from ${sso.name} could not be verified, so you are not signed in. Try again; if it happens again, tell an administrator (the server's log says why).`,
    clock: `The answer from ${sso.name} carries times that do not fit this server's clock, so you are not signed in. Tell an administrator: the clocks of this server and of ${sso.name} differ.`,
  }[err.failure];
  return showError(ctx, s, message, err.failure === 'unreachable' || err.failure === 'untrusted' ? 502 : err.failure === 'denied' ? 403 : 400, returnTo);
}

async function showError(ctx: WebContext, s: Services, error: string, status: number, returnTo?: string): Promise<void> {
  const session = await ensureSession(ctx, s);
  render(ctx, loginPage({ csrfToken: session.csrfToken, error, returnTo, ...ssoLoginOptions(s) }), status);
}
