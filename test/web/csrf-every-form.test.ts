/**
 * CSRF on every state-changing web route, not on one form (an audit found a single form tested): each POST the page
 * router serves to browsers is sent with the browser's session cookie and no CSRF token, and with wrong ones (another
 * session's token, the right one with a character changed; in the `_csrf` field and in X-CSRF-Token), and must answer
 * 403 "the form expired or did not come from this site" and change nothing; then the very same request with the
 * right token must do what the route does, so that "changed nothing" is not the emptiness of a request that would
 * have done nothing anyway.
 *
 * Which routes: read from the page router itself (`mountPages`, with OAuth's pages, as the daemon mounts them; the
 * permission matrix lists them the same way), so that a form added later is covered or fails this file. Each is
 * sent, in that order of preference:
 * - by the permission matrix's own request for it (test/access/matrix-rows.ts: every route with a row in
 *   docs/permissions.md has one, built on the matrix's library), as a principal its row allows (`✓`), the right-token
 *   request judged by the row's documented status and effect;
 * - by a request written here (OWN, SSO), for the routes the matrix has no row for (signing in and out, setup,
 *   invitations, password resets, sudo mode, passkey sign-in, the OAuth consent, the theme);
 * - or it is EXEMPT, with why: the OAuth client endpoints and the provider's back-channel logout authenticate by what
 *   the body carries, never by the session, which is shown by the session cookie making no difference to them.
 * A route in none of these fails the first test. The forgeries written here are by hand because each needs its own
 * precondition that no table holds (a browser waiting for its second step, a challenge, a link, a first-run daemon);
 * POST /login/sso and POST /setup exist only on a daemon with an identity provider and no account yet, so they run
 * on one. The REST API and /mcp are routers of their own that take bearer credentials only: the last test shows a
 * session cookie gets nothing there.
 *
 * "Changed nothing" is read back three ways: the daemon's whole database (the permission matrix's reader: every
 * table, a table added later too, without what any request changes by design, test/access/matrix-state.ts); the
 * mail outbox as an admin reads it on the REST API (the database reader leaves the outbox to the sender); and, per
 * route, what the database cannot show — whether a browser is signed in or waits for a second step, a theme cookie,
 * a WebAuthn challenge waiting in an anonymous session, an invitation or reset link still working — read through
 * the pages as the browser would.
 */
import Router from '@koa/router';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthProvider } from '../../src/auth/oauth/provider.js';
import { mountPages } from '../../src/server/app.js';
import { oauthRouters } from '../../src/server/oauth/index.js';
import type { Services } from '../../src/server/services.js';
import type { AppState } from '../../src/server/state.js';
import { SPECS } from '../access/matrix-rows.js';
import { changes, rows, type State, type StateReader, stateReader } from '../access/matrix-state.js';
import { type Principal, readMatrix } from '../access/matrix-table.js';
import { type Answer, Matrix, type WebRequest } from '../access/matrix-world.js';
import { authorizePath, consentFields, post as oauthPost, pkce } from '../auth/oauth-flow.js';
import { registerDaemons, ssoDaemon } from '../auth/sso/sso-flow.js';
import { enrolTotp } from '../auth/two-factor/totp.js';
import { addUser, api, type Daemon, removeDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { SigningPasskey } from '../helpers/soft-passkey.js';
import { startIdp, type TestIdp } from '../helpers/oidc-provider.js';
import { loggedIn, WebClient } from '../server/web-client.js';

const REFUSAL = 'the form expired or did not come from this site';
const PASSWORD = 'correct horse battery staple';

// ---------------------------------------------------------------------------------------------------------------
// The routes

/** Every state-changing route of the page router, as `METHOD /path` (GET and HEAD change nothing by design). */
function stateChangingRoutes(): string[] {
  const pages = new Router<AppState>();
  mountPages(pages, {} as Services, [oauthRouters({} as OAuthProvider)]);
  const out: string[] = [];
  for (const layer of pages.stack) for (const method of layer.methods) if (!['GET', 'HEAD', 'OPTIONS'].includes(method)) out.push(`${method} ${String(layer.path)}`);
  return [...new Set(out)];
}

const ROUTES = stateChangingRoutes();

/**
 * Routes a browser's session gives no authority to, so a forged post from another site has nothing to borrow: the
 * OAuth 2.0 endpoints authenticate the client by what the request carries (an authorization code with its PKCE
 * verifier, a client secret, a refresh token; registration is open by design and binds the new client to nobody),
 * and the back-channel logout by a logout token the identity provider signed. Their handlers never read the session;
 * the last test below checks that the cookie makes no difference to their answer.
 */
const EXEMPT: Record<string, string> = {
  'POST /api/oauth/token': 'OAuth 2.0 token endpoint: the client authenticates with the code and PKCE verifier, a client secret or a refresh token',
  'POST /api/oauth/revoke': 'OAuth 2.0 revocation (RFC 7009): the token to revoke and the client credentials are the authority',
  'POST /api/oauth/register': 'OAuth 2.0 dynamic client registration (RFC 7591): open, the client made belongs to no account',
  'POST /login/sso/backchannel-logout': "the identity provider's back-channel logout: a logout token it signed, no browser involved",
};

const WEB_ROWS = new Map(readMatrix().filter((r) => r.surface === 'Web pages and forms').map((r) => [r.operation, r]));
/** Whose browser sends a matrix route's forgery: the first principal its row allows. */
const PREFERRED: Principal[] = ['owner', 'admin', 'editor', 'group member', 'viewer', 'non-member'];
const allowedPrincipal = (route: string): Principal | undefined => PREFERRED.find((p) => WEB_ROWS.get(route)?.expected[p] === '✓');

// ---------------------------------------------------------------------------------------------------------------
// Sending a forgery

/** A state-changing request as a page sends it: a form, a page script's JSON, or a multipart upload. */
type Req = { path: string } & ({ form: Record<string, string | string[]>; accept?: 'json' } | { json: Record<string, unknown> } | { multipart: FormData });

/** How the token is (not) sent: in the body (`_csrf`), in X-CSRF-Token, or neither. */
interface Variant {
  name: string;
  field?: string;
  header?: string;
}

/** The refused variants of a request whose right token is `right`; `other` is another session's real token. */
function forgeries(right: string, other: string): Variant[] {
  const changed = (right[0] === 'A' ? 'B' : 'A') + right.slice(1);
  return [
    { name: 'no token' },
    { name: "another session's token in _csrf", field: other },
    { name: 'the token with one character changed, in _csrf', field: changed },
    { name: "another session's token in X-CSRF-Token", header: other },
    { name: 'the token with one character changed, in X-CSRF-Token', header: changed },
  ];
}

/** The right token where the page sends it: a form's field, a script's header. */
const rightly = (req: Req, token: string): Variant => ('form' in req ? { name: 'the right token', field: token } : { name: 'the right token', header: token });

/** Keeps a response's cookies in the client, as WebClient.request does. */
function keepCookies(client: WebClient, headers: Headers): void {
  for (const line of headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) client.cookies.delete(name);
    else client.cookies.set(name, value);
  }
}

/** A page script's JSON post with the client's cookies (WebClient sends forms and multipart only). */
async function postJson(d: Daemon, client: WebClient, path: string, body: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...extra };
  if (client.cookies.size > 0) headers.cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(d.url + path, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual' });
  keepCookies(client, res.headers);
  return answer(res.status, await res.text(), res.headers.get('location'));
}

function answer(status: number, text: string, location: string | null): Answer {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* a page */
  }
  return { status, body, text, location };
}

async function send(d: Daemon, client: WebClient, req: Req, v: Variant): Promise<Answer> {
  const header: Record<string, string> = v.header === undefined ? {} : { 'x-csrf-token': v.header };
  if ('json' in req) return postJson(d, client, req.path, v.field === undefined ? req.json : { ...req.json, _csrf: v.field }, header);
  let body: URLSearchParams | FormData;
  let accept: Record<string, string> = {};
  if ('multipart' in req) {
    body = new FormData();
    for (const [k, value] of req.multipart.entries()) body.append(k, value);
    if (v.field !== undefined) body.append('_csrf', v.field);
    accept = { accept: 'application/json' };
  } else {
    body = new URLSearchParams();
    for (const [k, value] of Object.entries(req.form)) for (const item of Array.isArray(value) ? value : [value]) body.append(k, item);
    if (v.field !== undefined) body.append('_csrf', v.field);
    if (req.accept === 'json') accept = { accept: 'application/json' };
  }
  const res = await client.request('POST', req.path, body, { ...accept, ...header });
  return answer(res.status, res.text, res.location);
}

/** What the right-token request did, for its check. */
interface Control {
  answer: Answer;
  before: State;
  after: State;
  /** The database's changes, a line each (matrix-state.ts `changes`). */
  changed: string[];
}

/** A request ready to forge: whose browser, its right token, and how to tell what it would change. */
interface Forged {
  client: WebClient;
  token: string;
  req: Req;
  /** What the route changes that the database does not show, read through the pages (or the REST API). */
  observe?: () => Promise<unknown>;
  /** Throws unless the right-token request did what the route does. */
  allowed(c: Control): void | Promise<void>;
  /** Puts back what must not stay changed for the routes after it. */
  undo?(c: Control): Promise<void>;
}

/** Where forgeries are sent: the daemon, its database, another session's token, and an admin's REST key (the outbox). */
interface Site {
  d: Daemon;
  state: StateReader;
  other: string;
  adminKey?: string;
}

/** The outbox as an admin reads it (which mail there is, not how its sending goes: the sender changes that). */
async function outbox(site: Site): Promise<string[] | null> {
  if (!site.adminKey) return null;
  const res = await api(site.d, '/api/v1/admin/mail?limit=200', { token: site.adminKey });
  expect(res.status, 'the outbox on the REST API').toBe(200);
  return (res.body.mail as { id: string; kind: string; to: string }[]).map((m) => `${m.kind} to ${m.to} (${m.id})`).sort();
}

async function readBack(site: Site, f: Forged): Promise<unknown> {
  return { outbox: await outbox(site), route: (await f.observe?.()) ?? null };
}

/** Sends every forgery of `f` and checks each is refused and nothing changed; then the right token, and its effect. */
async function refusedThenAllowed(site: Site, f: Forged): Promise<void> {
  await site.state.settle();
  const seen = await readBack(site, f);
  const before = await site.state.snapshot();
  for (const v of forgeries(f.token, site.other)) {
    const a = await send(site.d, f.client, f.req, v);
    expect(a.status, `${v.name}: ${a.status} ${a.location ?? ''} ${a.text.slice(0, 300)}`).toBe(403);
    expect(a.text, v.name).toContain(REFUSAL);
  }
  // Whatever a refused request might have queued (an indexing job, a source pass) has run by now.
  await site.state.settle();
  const after = await site.state.snapshot();
  expect(changes(before, after), 'what the refused requests changed in the database').toEqual([]);
  expect(await readBack(site, f), 'what the refused requests changed, read back through the pages and the REST API').toEqual(seen);

  const ok = await send(site.d, f.client, f.req, rightly(f.req, f.token));
  await site.state.settle();
  const done = await site.state.snapshot();
  const control = { answer: ok, before: after, after: done, changed: changes(after, done) };
  try {
    await f.allowed(control);
  } catch (err) {
    throw new Error(`the same request with the right token did not do what the route does: ${(err as Error).message}\nanswer: ${ok.status} ${ok.location ?? ''} ${ok.text.slice(0, 300)}\nchanged: ${control.changed.join('; ') || 'nothing'}`);
  }
  await f.undo?.(control);
}

// ---------------------------------------------------------------------------------------------------------------
// Read-backs through the pages

/** Whether the browser is signed in: a signed-in page answers, else it is sent to the login page. */
const signedIn = async (web: WebClient) => (await web.get('/settings/keys')).status === 200;

/**
 * Whether a WebAuthn challenge waits in the session, asked of the route that would use it (`verify`) with the right
 * token and an assertion of no passkey: "expired" when none waits (and none is taken), else a refusal of the passkey.
 */
async function challenge(d: Daemon, web: WebClient, token: string, verify: string): Promise<'none' | 'waiting'> {
  const a = await postJson(d, web, verify, { response: { id: 'no-such-passkey', rawId: 'no-such-passkey', type: 'public-key', response: {} } }, { 'x-csrf-token': token });
  if (a.text.includes('the passkey request expired')) return 'none';
  expect(a.status, `probing ${verify}: ${a.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  return 'waiting';
}



// ---------------------------------------------------------------------------------------------------------------
// The routes the permission matrix has a request for

/** A matrix request as one of ours. */
function fromMatrix(req: WebRequest): Req {
  if (req.multipart) return { path: req.path, multipart: req.multipart };
  if (req.jsonBody !== undefined) return { path: req.path, json: req.jsonBody as Record<string, unknown> };
  return { path: req.path, form: req.form ?? {}, ...(req.json ? { accept: 'json' as const } : {}) };
}

/** The queued mails not due for a while: what "retry now" makes due at once (the sender leaves them alone meanwhile). */
async function mailDueLater(site: Site, notBefore: number): Promise<string[]> {
  const res = await api(site.d, '/api/v1/admin/mail?status=queued&limit=200', { token: site.adminKey! });
  return (res.body.mail as { id: string; attempts: number; next_attempt_at: string | null }[])
    .filter((m) => m.next_attempt_at !== null && Date.parse(m.next_attempt_at) > notBefore)
    .map((m) => `${m.id} attempt ${m.attempts} at ${m.next_attempt_at}`)
    .sort();
}

/**
 * What the database reader cannot see of a matrix route, or what its row has no `effect` for (the effect, when there
 * is one, is read from the database): a WebAuthn challenge (a session's, left out as volatile), the outbox (the
 * sender's), and the bell's notices (the matrix's world holds none to mark read).
 */
const MATRIX_EXTRA: Record<string, (m: Matrix, site: Site, web: WebClient, token: string) => Promise<Pick<Forged, 'observe'> & { allowed?: (seen: unknown, now: unknown) => void }>> = {
  'POST /settings/security/passkeys/options': async (m, _site, web, token) => ({
    observe: () => challenge(m.d, web, token, '/settings/security/passkeys'),
    allowed: (_seen, now) => expect(now, 'a registration challenge waits').toBe('waiting'),
  }),
  'POST /admin/mail/test': async (_m, site) => {
    const tests = async () => ((await outbox(site)) ?? []).filter((x) => x.startsWith('test '));
    return { observe: tests, allowed: (seen, now) => expect((now as string[]).length, 'a test mail queued').toBe((seen as string[]).length + 1) };
  },
  'POST /notices/read': async (m, site, web) => {
    // A notice to mark read: a source its project's quota pauses tells the project's owner (server/source-alerts.ts).
    const dir = join(dirname(m.sourceDir), `csrf-capped-${m.next()}`);
    mkdirSync(dir);
    for (const name of ['a', 'b']) writeFileSync(join(dir, `${name}.txt`), `Capped memo ${name} about the budget of the harbour works. `.repeat(200));
    const owner = m.users.alice.apiKey;
    const project = (await api(m.d, '/api/v1/projects', { token: owner, body: { name: `CSRF capped ${m.next()}` } })).body.id as string;
    expect((await api(m.d, `/api/v1/admin/projects/${project}`, { method: 'PATCH', token: site.adminKey!, body: { quota_bytes: 16 * 1024 } })).status).toBe(200);
    expect((await api(m.d, `/api/v1/projects/${project}/sources`, { token: owner, body: { url: `file://${dir}`, every: '1d' } })).status).toBe(201);
    // The bell's count of unread notices, on any signed-in page.
    const unread = async () => Number(/aria-label="(\d+) unread"/.exec((await web.get('/projects')).text)?.[1] ?? 0);
    await waitFor(async () => (await unread()) > 0, 60_000, 'the paused source to leave its owner a notice');
    return {
      observe: unread,
      allowed: (seen, now) => {
        expect(seen, 'unread notices before').toBeGreaterThan(0);
        expect(now, 'unread notices after').toBe(0);
      },
    };
  },
  'POST /admin/mail/retry': async (m, site) => {
    // A mail the sender has tried once (the matrix's mail server is not there): due again in 30 seconds.
    const queued = await api(m.d, '/api/v1/admin/mail/test', { token: site.adminKey!, body: {} });
    expect(queued.status).toBe(202);
    const id = queued.body.id as string;
    const tried = async () => ((await api(m.d, '/api/v1/admin/mail?status=queued&limit=200', { token: site.adminKey! })).body.mail as { id: string; attempts: number }[]).find((x) => x.id === id);
    await waitFor(async () => ((await tried())?.attempts ?? 0) >= 1, 30_000, 'the test mail tried once and queued again');
    const notBefore = Date.now() + 10_000;
    return {
      observe: () => mailDueLater(site, notBefore),
      allowed: (seen, now) => expect((seen as string[]).filter((x) => !(now as string[]).includes(x)), 'queued mail made due now').not.toEqual([]),
    };
  },
};

async function matrixForgery(m: Matrix, site: Site, route: string): Promise<Forged> {
  const spec = SPECS.web[route]!;
  const principal = allowedPrincipal(route)!;
  const as = m.as(principal);
  const t = spec.on && spec.on !== 'shared' ? await m.fixture(spec.on) : m.shared;
  const req = fromMatrix(await spec.request(t, as, m));
  const extra = await MATRIX_EXTRA[route]?.(m, site, as.web, as.csrf);
  let seen: unknown;
  const observe = extra?.observe;
  return {
    client: as.web,
    token: as.csrf,
    req,
    ...(observe
      ? {
          observe: async () => {
            seen = await observe();
            return seen;
          },
        }
      : {}),
    async allowed(c) {
      expect(c.answer.status, `${principal}: the documented success status`).toBe(spec.ok);
      expect(c.answer.location ?? '', 'not sent to sign in').not.toMatch(/^\/login/);
      const cell = { m, t, as, answer: c.answer, before: c.before, after: c.after };
      await spec.effect?.(cell);
      if (extra?.allowed) extra.allowed(seen, await observe!());
    },
    async undo(c) {
      await spec.undo?.({ m, t, as, answer: c.answer, before: c.before, after: c.after });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The routes the matrix has no row for, on the matrix's library

interface Person {
  email: string;
  password: string;
  id: string;
  /** Their browser, signed in (joining signs in). */
  web: WebClient;
}

/** A new account, invited by the admin on the REST API and joined in a browser of its own. */
async function person(m: Matrix, what: string): Promise<Person> {
  const email = `csrf-${what}-${m.next()}-${process.pid}@example.com`;
  const made = await api(m.d, '/api/v1/admin/invitations', { token: m.users.frank.apiKey, body: { emails: [email], send: false } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const link = new URL(made.body.invitations[0].link as string);
  const web = new WebClient(m.d);
  await web.get(link.pathname + link.search);
  const joined = await web.post('/invite', { _csrf: web.csrf, token: link.searchParams.get('token')!, password: PASSWORD, password2: PASSWORD });
  expect(joined.status).toBe(303);
  await web.get('/settings/keys');
  const id = rows(await m.state.snapshot(), 'users').find((u) => u.email === email)!.id as string;
  return { email, password: PASSWORD, id, web };
}

/** A passkey registered through Settings → Security (signing in alone, the default). */
async function withPasskey(m: Matrix, p: Person): Promise<SigningPasskey> {
  const key = new SigningPasskey(m.publicUrl);
  await p.web.get('/settings/security');
  const token = p.web.csrf;
  const options = await postJson(m.d, p.web, '/settings/security/passkeys/options', {}, { 'x-csrf-token': token });
  expect(options.status, options.text).toBe(200);
  const made = await postJson(m.d, p.web, '/settings/security/passkeys', { response: key.register(options.body as never), name: 'CSRF key' }, { 'x-csrf-token': token });
  expect(made.status, made.text).toBe(200);
  return key;
}

/** A signed-out browser on a page with a form (its anonymous session and token). */
async function anonymous(d: Daemon, path = '/login'): Promise<{ web: WebClient; token: string }> {
  const web = new WebClient(d);
  const page = await web.get(path);
  expect(page.status, `${path}: ${page.text.slice(0, 200)}`).toBe(200);
  return { web, token: web.csrf };
}

const sessionConfirmed = (c: Control) => c.changed.some((line) => /^sessions\[[^\]]+\]\.confirmed_at: /.test(line));

const OWN: Record<string, (m: Matrix) => Promise<Forged>> = {
  'POST /settings/appearance': async (m) => {
    const p = await person(m, 'theme');
    const theme = async () => ({
      cookie: p.web.cookies.get('docsearch_theme') ?? null,
      page: /<html[^>]*data-theme="(\w+)"/.exec((await p.web.get('/settings/account')).text)?.[1] ?? 'system',
    });
    return {
      client: p.web,
      token: p.web.csrf,
      req: { path: '/settings/appearance', form: { theme: 'dark' } },
      observe: theme,
      allowed: async (c) => {
        expect(c.answer.status).toBe(303);
        expect(await theme()).toEqual({ cookie: 'dark', page: 'dark' });
      },
    };
  },

  'POST /login': async (m) => {
    const p = await person(m, 'login');
    const { web, token } = await anonymous(m.d);
    return {
      client: web,
      token,
      req: { path: '/login', form: { email: p.email, password: p.password, return_to: '' } },
      observe: () => signedIn(web),
      allowed: async (c) => {
        expect(c.answer.status).toBe(302);
        expect(await signedIn(web)).toBe(true);
      },
    };
  },

  'POST /login/verify': async (m) => {
    const p = await person(m, 'second-step');
    const { recoveryCodes } = await enrolTotp(p.web);
    const web = new WebClient(m.d);
    const first = await web.login(p.email, p.password);
    expect(first.location).toBe('/login/verify');
    await web.get('/login/verify');
    return {
      client: web,
      token: web.csrf,
      req: { path: '/login/verify', form: { code: recoveryCodes[0]!, return_to: '' } },
      // Waiting for the second step: its page is shown (not the login page), and nothing signed-in opens.
      observe: async () => ({ waiting: (await web.get('/login/verify')).status, signedIn: await signedIn(web) }),
      allowed: async (c) => {
        expect(c.answer.status).toBe(303);
        expect(await signedIn(web)).toBe(true);
      },
    };
  },

  'POST /login/passkey/options': async (m) => {
    const { web, token } = await anonymous(m.d);
    const waiting = () => challenge(m.d, web, token, '/login/passkey');
    return {
      client: web,
      token,
      req: { path: '/login/passkey/options', json: {} },
      observe: waiting,
      allowed: async (c) => {
        expect(c.answer.status).toBe(200);
        expect(typeof (c.answer.body as { challenge?: unknown }).challenge).toBe('string');
        expect(await waiting()).toBe('waiting');
      },
    };
  },

  'POST /login/passkey': async (m) => {
    const p = await person(m, 'passkey-sign-in');
    const key = await withPasskey(m, p);
    const { web, token } = await anonymous(m.d);
    const options = await postJson(m.d, web, '/login/passkey/options', {}, { 'x-csrf-token': token });
    expect(options.status, options.text).toBe(200);
    return {
      client: web,
      token,
      req: { path: '/login/passkey', json: { response: key.assert(options.body as never), return_to: '' } },
      observe: () => signedIn(web),
      allowed: async (c) => {
        expect(c.answer.status).toBe(200);
        expect(await signedIn(web)).toBe(true);
      },
    };
  },

  'POST /logout': async (m) => {
    const p = await person(m, 'logout');
    return {
      client: p.web,
      token: p.web.csrf,
      req: { path: '/logout', form: {} },
      observe: () => signedIn(p.web),
      allowed: async (c) => {
        expect(c.answer.status).toBe(302);
        expect(await signedIn(p.web)).toBe(false);
      },
    };
  },

  // Sudo mode: the session's confirmed_at (in the database) is what a confirmation changes.
  'POST /settings/confirm': async (m) => {
    const p = await person(m, 'confirm');
    await p.web.get('/settings/confirm');
    return {
      client: p.web,
      token: p.web.csrf,
      req: { path: '/settings/confirm', form: { password: p.password, return_to: '/settings/security' } },
      allowed: (c) => {
        expect(c.answer.status).toBe(303);
        expect(sessionConfirmed(c), 'the session confirmed anew').toBe(true);
      },
    };
  },

  'POST /settings/confirm/passkey/options': async (m) => {
    const p = await person(m, 'confirm-options');
    await withPasskey(m, p);
    const token = p.web.csrf;
    const waiting = () => challenge(m.d, p.web, token, '/settings/confirm/passkey');
    return {
      client: p.web,
      token,
      req: { path: '/settings/confirm/passkey/options', json: {} },
      observe: waiting,
      allowed: async (c) => {
        expect(c.answer.status).toBe(200);
        expect(await waiting()).toBe('waiting');
      },
    };
  },

  'POST /settings/confirm/passkey': async (m) => {
    const p = await person(m, 'confirm-passkey');
    const key = await withPasskey(m, p);
    const token = p.web.csrf;
    const options = await postJson(m.d, p.web, '/settings/confirm/passkey/options', {}, { 'x-csrf-token': token });
    expect(options.status, options.text).toBe(200);
    return {
      client: p.web,
      token,
      req: { path: '/settings/confirm/passkey', json: { response: key.assert(options.body as never), return_to: '' } },
      allowed: (c) => {
        expect(c.answer.status).toBe(200);
        expect(sessionConfirmed(c), 'the session confirmed anew').toBe(true);
      },
    };
  },

  'POST /invite': async (m) => {
    const email = `csrf-invited-${m.next()}-${process.pid}@example.com`;
    const made = await api(m.d, '/api/v1/admin/invitations', { token: m.users.frank.apiKey, body: { emails: [email], send: false } });
    expect(made.status).toBe(201);
    const link = new URL(made.body.invitations[0].link as string);
    const { web, token } = await anonymous(m.d, link.pathname + link.search);
    return {
      client: web,
      token,
      req: { path: '/invite', form: { token: link.searchParams.get('token')!, password: PASSWORD, password2: PASSWORD } },
      // The link still works (its page, not "not valid"), and this browser is signed in to nothing.
      observe: async () => ({ link: (await web.get(link.pathname + link.search)).status, signedIn: await signedIn(web) }),
      allowed: async (c) => {
        expect(c.answer.status).toBe(303);
        expect(await signedIn(web)).toBe(true);
        expect(c.changed.some((line) => line.startsWith('users[') && line.includes(email)), 'the account made').toBe(true);
      },
    };
  },

  'POST /forgot-password': async (m) => {
    const p = await person(m, 'forgot');
    const { web, token } = await anonymous(m.d, '/forgot-password');
    return {
      client: web,
      token,
      req: { path: '/forgot-password', form: { email: p.email } },
      allowed: async (c) => {
        expect(c.answer.status).toBe(200);
        expect(c.changed.some((line) => line.startsWith('password_resets[') && line.includes(p.id)), 'a reset link made').toBe(true);
        const mail = await api(m.d, '/api/v1/admin/mail?limit=200', { token: m.users.frank.apiKey });
        expect((mail.body.mail as { kind: string; to: string }[]).some((x) => x.kind === 'password_reset' && x.to === p.email), 'the link mailed').toBe(true);
      },
    };
  },

  'POST /reset-password': async (m) => {
    const p = await person(m, 'reset');
    const issued = await api(m.d, `/api/v1/admin/users/${p.id}/reset-link`, { token: m.users.frank.apiKey, body: { send: false } });
    expect(issued.status).toBe(201);
    const link = new URL(issued.body.link as string);
    const { web, token } = await anonymous(m.d, link.pathname + link.search);
    const fresh = 'a brand new password 42';
    return {
      client: web,
      token,
      req: { path: '/reset-password', form: { token: link.searchParams.get('token')!, password: fresh, password2: fresh } },
      // The link still works; the account's password (its hash) is in the database.
      observe: async () => (await web.get(link.pathname + link.search)).status,
      allowed: async (c) => {
        expect(c.answer.status).toBe(303);
        expect((await new WebClient(m.d).login(p.email, fresh)).status, 'signing in with the new password').toBe(302);
      },
    };
  },

  'POST /oauth/consent': async (m) => {
    const p = await person(m, 'consent');
    const redirect = 'http://127.0.0.1:9/callback';
    const registered = await api(m.d, '/api/oauth/register', {
      body: { client_name: `CSRF app ${m.next()}`, redirect_uris: [redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] },
    });
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id as string;
    const { verifier, challenge: codeChallenge } = pkce();
    const page = await p.web.get(authorizePath({ response_type: 'code', client_id: clientId, redirect_uri: redirect, scope: 'read:documents', state: 's', code_challenge: codeChallenge, code_challenge_method: 'S256' }));
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    const { _csrf: token, ...fields } = consentFields(page.text);
    const connected = async () => (await p.web.get('/settings/connected')).text.includes(`/settings/connected/${clientId}/revoke`);
    return {
      client: p.web,
      token: token!,
      req: { path: '/oauth/consent', form: { ...fields, decision: 'approve' } },
      // An approval mints a code (in the database); the application's access, once it redeems the code, is listed on
      // Settings → Connected apps.
      observe: connected,
      allowed: async (c) => {
        expect(c.answer.status).toBe(303);
        const code = new URL(c.answer.location!).searchParams.get('code');
        expect(code, 'a code for the application').toBeTruthy();
        const token = await oauthPost(m.d, '/api/oauth/token', { grant_type: 'authorization_code', code: code!, client_id: clientId, redirect_uri: redirect, code_verifier: verifier });
        expect(token.status, JSON.stringify(token.body)).toBe(200);
        expect(await connected(), 'the application listed under Connected apps').toBe(true);
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------
// The routes only a first-run daemon with an identity provider has

interface SsoSite extends Site {
  idp: TestIdp;
}

const SSO: Record<string, { name: string; forge: (s: SsoSite) => Promise<Forged> }[]> = {
  'POST /setup': [
    {
      name: 'first-run setup',
      forge: async ({ d }) => {
        const setup = new URL(d.setupUrl!);
        const { web, token } = await anonymous(d, setup.pathname + setup.search);
        return {
          client: web,
          token,
          req: { path: '/setup', form: { token: setup.searchParams.get('token')!, email: 'first@example.com', password: PASSWORD, password2: PASSWORD } },
          // The link still works, and this browser is signed in to nothing.
          observe: async () => ({ link: (await web.get(setup.pathname + setup.search)).status, signedIn: await signedIn(web) }),
          allowed: async (c) => {
            expect(c.answer.status).toBe(302);
            expect(await signedIn(web)).toBe(true);
            expect(c.changed.some((line) => line.startsWith('users[') && line.includes('first@example.com')), 'the first account made').toBe(true);
          },
        };
      },
    },
  ],
  // The sign-in starts in a sealed cookie (no server state) and a redirect to the provider: neither may happen.
  'POST /login/sso': [
    {
      name: 'signing in',
      forge: async ({ d, idp }) => {
        const { web, token } = await anonymous(d);
        return {
          client: web,
          token,
          req: { path: '/login/sso', form: { return_to: '' } },
          observe: async () => web.cookies.has('ds_sso'),
          allowed: (c) => {
            expect(c.answer.status).toBe(303);
            expect(c.answer.location!.startsWith(idp.issuer), 'to the provider').toBe(true);
            expect(web.cookies.has('ds_sso'), 'the sign-in under way').toBe(true);
          },
        };
      },
    },
    {
      name: 'linking the signed-in account (Settings → Security)',
      forge: async ({ d, idp }) => {
        const web = await loggedIn(d, await addUser(d));
        await web.get('/settings/security');
        return {
          client: web,
          token: web.csrf,
          req: { path: '/login/sso', form: { link: 'yes' } },
          observe: async () => web.cookies.has('ds_sso'),
          allowed: (c) => {
            expect(c.answer.status).toBe(303);
            expect(c.answer.location!.startsWith(idp.issuer), 'to the provider').toBe(true);
            expect(web.cookies.has('ds_sso'), 'the link under way').toBe(true);
          },
        };
      },
    },
  ],
};

// ---------------------------------------------------------------------------------------------------------------

describe('CSRF on every state-changing web route', () => {
  it('has a forgery here, or a reason for none, for every state-changing route of the page router', () => {
    expect(ROUTES.length, 'the router lists its routes').toBeGreaterThan(50);
    const own = [...Object.keys(OWN), ...Object.keys(SSO), ...Object.keys(EXEMPT)];
    const byMatrix = ROUTES.filter((r) => SPECS.web[r] && !own.includes(r));
    expect(
      ROUTES.filter((r) => !own.includes(r) && !byMatrix.includes(r)),
      'routes with no forgery: give them a row in docs/permissions.md (the matrix request is used) or an entry in OWN, SSO or EXEMPT here',
    ).toEqual([]);
    expect(byMatrix.filter((r) => !allowedPrincipal(r)), 'matrix routes no principal is allowed to post (no right-token control)').toEqual([]);
    expect(own.filter((r) => !ROUTES.includes(r)), 'entries here for routes no router has').toEqual([]);
    expect(own.filter((r) => SPECS.web[r]), 'routes the matrix has a request for, written here again').toEqual([]);
    expect(new Set(own).size, 'a route in two of OWN, SSO and EXEMPT').toBe(own.length);
  });

  describe("on the permission matrix's library", () => {
    const m = new Matrix(SPECS);
    let site: Site;

    beforeAll(async () => {
      await m.start();
      const { token } = await anonymous(m.d);
      site = { d: m.d, state: m.state, other: token, adminKey: m.users.frank.apiKey };
    }, 300_000);
    afterAll(() => m.stop());

    for (const route of ROUTES.filter((r) => SPECS.web[r] && !OWN[r] && !SSO[r] && !EXEMPT[r])) {
      it(`${route} (the matrix's request, as ${allowedPrincipal(route) ?? 'nobody'})`, async () => {
        await refusedThenAllowed(site, await matrixForgery(m, site, route));
      });
    }
    for (const [route, forge] of Object.entries(OWN)) {
      it(route, async () => {
        await refusedThenAllowed(site, await forge(m));
      });
    }
  });

  describe('on a first-run daemon that signs in with an identity provider', () => {
    let site: SsoSite;

    beforeAll(async () => {
      const idp = await startIdp();
      const d = await ssoDaemon(idp);
      registerDaemons(idp, [d]);
      site = { d, idp, state: await stateReader(d), other: (await anonymous(d)).token };
    }, 180_000);
    afterAll(async () => {
      await site?.state.close();
      if (site?.d) {
        expect(await site.d.stop()).toBe(0);
        removeDir(site.d.dataDir);
      }
      await site?.idp.stop();
    });

    for (const [route, cases] of Object.entries(SSO)) {
      for (const c of cases) {
        it(`${route} (${c.name})`, async () => {
          await refusedThenAllowed(site, await c.forge(site));
        });
      }
    }

    it('the exempt routes answer the same with a signed-in session cookie as without one', async () => {
      const web = await loggedIn(site.d, await addUser(site.d));
      const normalised = (a: { status: number; text: string }) => `${a.status} ${a.text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{request_id}')}`;
      for (const route of Object.keys(EXEMPT)) {
        const path = route.replace(/^POST /, '');
        const form = new URLSearchParams({ token: 'nothing', logout_token: 'nothing' });
        const withCookie = await web.request('POST', path, form, { accept: 'application/json' });
        const without = await new WebClient(site.d).request('POST', path, form, { accept: 'application/json' });
        expect(normalised(withCookie), route).toBe(normalised(without));
      }
      // Nor do the REST API and /mcp take a session cookie for a credential: their routers are not the pages'.
      const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const rest = await fetch(`${site.d.url}/api/v1/projects`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'forged' }) });
      expect(rest.status).toBe(401);
      const mcp = await fetch(`${site.d.url}/mcp`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'csrf', version: '1' } } }),
      });
      expect(mcp.status).toBe(401);
    });
  });
});
