import { type Daemon, type StartOptions, startDaemon } from '../../helpers/daemon.js';
import type { TestIdp } from '../../helpers/oidc-provider.js';
import { hiddenFields, type PageResponse, type WebClient } from '../../server/web-client.js';

export const CLIENT_ID = 'docsearch';
export const CLIENT_SECRET = 'docsearch-client-secret-0123456789';
export const PROVIDER_NAME = 'Acme SSO';

/**
 * A daemon that signs people in with the test provider: its issuer, our client, the groups scope, the name on the
 * button; the secret comes through the environment (DOCSEARCH_OIDC_CLIENT_SECRET) and the provider's private CA
 * through NODE_EXTRA_CA_CERTS, as an operator sets them. The provider learns the daemon's redirect URI after.
 */
export async function ssoDaemon(idp: TestIdp, args: string[] = [], opts: StartOptions = {}): Promise<Daemon> {
  return startDaemon({
    ...opts,
    args: ['--oidc-issuer', idp.issuer, '--oidc-client-id', CLIENT_ID, '--oidc-scopes', 'openid email profile groups', '--sso-name', PROVIDER_NAME, ...args, ...(opts.args ?? [])],
    env: { DOCSEARCH_OIDC_CLIENT_SECRET: CLIENT_SECRET, NODE_EXTRA_CA_CERTS: idp.ca.caFile, ...opts.env },
  });
}

/** The provider's registration of these daemons: their callbacks, and their login pages for after signing out. */
export function registerDaemons(idp: TestIdp, daemons: Daemon[]): void {
  idp.setClients([
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: daemons.map((d) => `${d.url}/login/sso/callback`),
      post_logout_redirect_uris: daemons.map((d) => `${d.url}/login`),
    },
  ]);
}

/** The login page's "Sign in with …" form posted: where the browser is sent (the provider), and that answer. */
export async function startSso(web: WebClient, returnTo = ''): Promise<PageResponse> {
  const page = await web.get(`/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`);
  return web.post('/login/sso', hiddenFields(page.text, '/login/sso'));
}

/** A whole sign-in through the provider as `login`: the daemon's answer to the provider's redirect back. */
export async function ssoSignIn(web: WebClient, idp: TestIdp, login: string, returnTo = ''): Promise<PageResponse> {
  const started = await startSso(web, returnTo);
  if (started.status !== 303 || !started.location?.startsWith(idp.issuer)) throw new Error(`the sign-in did not go to the provider: ${started.status} ${started.text.slice(0, 400)}`);
  const back = await idp.signIn(started.location, login);
  return web.get(back.pathname + back.search);
}
