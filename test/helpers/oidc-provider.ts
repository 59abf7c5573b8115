import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { type PrivateCa, privateCa } from './private-ca.js';

/**
 * A real OpenID Provider nobody here wrote: node's oidc-provider (OpenID Certified), on https at 127.0.0.1 with a
 * certificate from a private CA this helper makes. Its development sign-in pages take any login name with any
 * password; the login name is the account, whose claims the test sets (and changes between sign-ins) in `accounts`.
 */
export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  groups?: string[];
  name?: string;
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  /** Where the provider posts back-channel logout tokens (its session's `sid` in them with the next field). */
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  grant_types?: string[];
}

export interface TestIdp {
  issuer: string;
  ca: PrivateCa;
  /** Login name → the claims the provider gives for it (sub is the login name). */
  accounts: Map<string, TestAccount>;
  /** Login name → the authentication methods (RFC 8176 `amr`) its sign-ins report, as a provider that asked them. */
  amr: Map<string, string[]>;
  /** Login name → the authentication context class (`acr`) its sign-ins report, in the provider's own words. */
  acr: Map<string, string>;
  /** Registers the relying parties: a new provider instance (sign-ins at the old one are forgotten). */
  setClients(clients: TestClient[]): void;
  /** Stops accepting connections, as a provider that is down; `up` takes them again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
  /** A fetch that trusts the private CA (the test process was not started with NODE_EXTRA_CA_CERTS). */
  fetch: typeof fetch;
  /**
   * Signs in at the provider as `login` from an authorization URL, as a person does in a browser (the login form,
   * then consent): the URL the provider sends the browser back to. The provider's cookies are kept per login, so
   * that `endSession` can sign that person out there.
   */
  signIn(authorizationUrl: string | URL, login: string): Promise<URL>;
  /**
   * Signs `login` out at the provider, as its logout page does (RP-initiated logout, confirmed): the provider's
   * session ends, its grants are revoked, and it posts a logout token to every client that registered a
   * back-channel logout URI, before answering.
   */
  endSession(login: string): Promise<void>;
}

/**
 * `clientAuthMethods`: the token endpoint's client authentication methods (default: oidc-provider's own).
 * `refreshTokens`: give clients allowed the refresh_token grant a refresh token at every sign-in (as Keycloak does),
 * not only with the offline_access scope.
 * `groupsInIdTokenOnly`: the groups claim in the ID token and never in userinfo (as Entra ID sends it).
 */
export async function startIdp(opts: { clientAuthMethods?: string[]; refreshTokens?: boolean; groupsInIdTokenOnly?: boolean } = {}): Promise<TestIdp> {
  const ca = privateCa();
  let provider: Provider | null = null;
  const server: Server = createServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    if (provider) return provider.callback()(req, res);
    res.writeHead(503).end('no clients registered yet');
  });
  await listen(server, 0);
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://127.0.0.1:${port}`;
  const accounts = new Map<string, TestAccount>();
  const amr = new Map<string, string[]>();
  const acr = new Map<string, string>();
  const caFetch = fetchTrusting(ca.ca);
  /** The provider's cookies of each login's browser. */
  const jars = new Map<string, Map<string, string>>();
  const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keepCookies = (jar: Map<string, string>, res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  };

  const idp: TestIdp = {
    issuer,
    ca,
    accounts,
    amr,
    acr,
    fetch: caFetch,
    setClients(clients) {
      provider = new Provider(issuer, {
        clients: clients.map((c) => ({ token_endpoint_auth_method: opts.clientAuthMethods?.[0] ?? 'client_secret_basic', ...c })),
        ...(opts.clientAuthMethods ? { clientAuthMethods: opts.clientAuthMethods } : {}),
        findAccount: (_ctx, id) => ({
          accountId: id,
          claims: (use: string) => {
            const { groups, ...rest } = accounts.get(id) ?? {};
            return { sub: id, ...rest, ...(groups === undefined || (opts.groupsInIdTokenOnly && use === 'userinfo') ? {} : { groups }) };
          },
        }),
        // The ID token carries its scopes' claims even beside an access token (oidc-provider leaves them to userinfo).
        ...(opts.groupsInIdTokenOnly ? { conformIdTokenClaims: false } : {}),
        // amr with openid's claims, so the ID token carries it whenever the sign-in reported it (as Keycloak's does).
        claims: { openid: ['sub', 'amr', 'acr'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
        cookies: { keys: ['docsearch-test-provider-cookies'] },
        features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true }, backchannelLogout: { enabled: true } },
        ...(opts.refreshTokens ? { issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token') } : {}),
        // Its own fetch (the back-channel logout posts) refuses loopback addresses, where the daemons under test are.
        fetch: (url: string | URL, init: RequestInit & { dispatcher?: unknown }) => {
          const { dispatcher: _, ...rest } = init;
          return fetch(url, rest);
        },
        // An ID token lives an hour (the expiry test moves docsearch's clock past it).
        ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, IdToken: 3600 },
      });
      // The development sign-in finishes with the account alone; a provider that asked more factors says which in the
      // interaction's result (`login.amr`), which the ID token then carries.
      const Interaction = (provider as unknown as { Interaction: { prototype: { save(ttl: number): Promise<unknown>; result?: { login?: { accountId: string; amr?: string[]; acr?: string } } } } }).Interaction;
      const save = Interaction.prototype.save;
      Interaction.prototype.save = function (this: typeof Interaction.prototype, ttl: number) {
        const login = this.result?.login;
        if (login && amr.has(login.accountId)) login.amr = amr.get(login.accountId);
        if (login && acr.has(login.accountId)) login.acr = acr.get(login.accountId);
        return save.call(this, ttl);
      };
      // Its errors are answers to the client (what the tests look at); the logs would only be noise.
      provider.on('server_error', () => {});
    },
    async down() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
    up: () => listen(server, port),
    async stop() {
      if (server.listening) await idp.down();
      ca.remove();
    },
    async signIn(authorizationUrl, login) {
      const jar = new Map<string, string>();
      jars.set(login, jar);
      let url = new URL(authorizationUrl);
      let body: URLSearchParams | undefined;
      for (let step = 0; step < 12; step++) {
        if (url.origin !== issuer) return url;
        const headers: Record<string, string> = { cookie: cookieHeader(jar) };
        if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
        const res = await caFetch(url, { method: body ? 'POST' : 'GET', headers, body });
        keepCookies(jar, res);
        const location = res.headers.get('location');
        if (location) {
          url = new URL(location, url);
          body = undefined;
          continue;
        }
        const page = await res.text();
        const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&');
        const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
        if (!action || !prompt) throw new Error(`the provider answered ${res.status} without a sign-in form:\n${page.slice(0, 600)}`);
        body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt });
        url = new URL(action, url);
      }
      throw new Error('the provider did not send the browser back');
    },
    async endSession(login) {
      const jar = jars.get(login);
      if (!jar) throw new Error(`${login} has not signed in at the provider`);
      const page = await caFetch(new URL('/session/end', issuer), { headers: { cookie: cookieHeader(jar) } });
      keepCookies(jar, page);
      const text = await page.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1]?.replaceAll('&amp;', '&');
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(text)?.[1];
      if (!action || !xsrf) throw new Error(`the provider's logout page has no form:\n${text.slice(0, 600)}`);
      const done = await caFetch(new URL(action, issuer), {
        method: 'POST',
        headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xsrf, logout: 'yes' }),
      });
      if (done.status >= 400) throw new Error(`the provider's logout answered ${done.status}`);
      jars.delete(login);
    },
  };
  return idp;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** fetch over node:https with this CA trusted; no redirect is followed (every caller here reads them itself). */
function fetchTrusting(ca: Buffer): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const headers = new Headers(init.headers);
    let body: Buffer | undefined;
    if (init.body instanceof URLSearchParams) {
      body = Buffer.from(init.body.toString());
      if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    } else if (init.body != null) {
      body = Buffer.from(await new Response(init.body).arrayBuffer());
    }
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method: init.method ?? 'GET', headers: Object.fromEntries(headers), ca, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) for (const item of [v ?? []].flat()) out.append(k, item);
          const status = res.statusCode ?? 500;
          resolve(new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: out }));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }) as typeof fetch;
}
