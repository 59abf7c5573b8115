/**
 * The relying party's checks (src/auth/sso/oidc.ts, openid-client underneath) against a real OpenID Provider
 * (oidc-provider on https with a private CA): a sign-in completes, and an answer with a wrong state, nonce, issuer
 * or audience, or an expired ID token, is refused. Run in-process, because the clock is one of the seams (the
 * daemon takes none from outside); the provider's answers are real, and where an attack needs a second party (the
 * issuer and audience cases) a second real provider or client plays it, with the test standing in for a network
 * that carries one party's answer to the other.
 */
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OidcSignIn, type OidcSeams, SsoError } from '../../../src/auth/sso/oidc.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';

const REDIRECT = 'http://127.0.0.1:9/login/sso/callback';
const CLIENT = { client_id: 'docsearch', client_secret: 'docsearch-secret-0123456789', redirect_uris: [REDIRECT] };
const OTHER = { client_id: 'another-app', client_secret: 'another-secret-0123456789', redirect_uris: [REDIRECT] };

describe('OpenID Connect sign-in checks (oidc-provider, private CA)', () => {
  let idp: TestIdp;
  let evil: TestIdp;

  beforeAll(async () => {
    idp = await startIdp();
    idp.setClients([CLIENT, OTHER]);
    idp.accounts.set('alice', { email: 'alice@example.org', email_verified: true, groups: ['engineering', 'docs-admins'] });
    // Another provider, where the same client is registered: the issuer docsearch does not trust.
    evil = await startIdp();
    evil.setClients([CLIENT]);
    evil.accounts.set('alice', { email: 'alice@example.org', email_verified: true, groups: ['docs-admins'] });
  });
  afterAll(async () => {
    await idp?.stop();
    await evil?.stop();
  });

  const rp = (seams: OidcSeams = {}) =>
    new OidcSignIn(
      { issuer: idp.issuer, clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret, scopes: 'openid email profile groups', groupsClaim: 'groups', redirectUri: () => REDIRECT },
      { fetch: idp.fetch, ...seams },
    );

  /** The failure `work` ends in (an SsoError's kind), with its message. */
  async function refusal(work: Promise<unknown>): Promise<{ failure: string; message: string }> {
    const err = await work.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the sign-in was accepted').toBeInstanceOf(SsoError);
    return { failure: (err as SsoError).failure, message: (err as SsoError).message };
  }

  it('completes a sign-in: PKCE, state and nonce sent, the identity and its groups read', async () => {
    const signIn = rp();
    const { url, transaction } = await signIn.begin('/projects');
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBe(transaction.state);
    expect(url.searchParams.get('nonce')).toBe(transaction.nonce);
    expect(transaction.returnTo).toBe('/projects');
    const back = await idp.signIn(url, 'alice');
    expect(back.origin + back.pathname).toBe(REDIRECT);
    const identity = await signIn.complete(transaction, back.search);
    expect(identity).toEqual({
      provider: idp.issuer,
      subject: 'alice',
      email: 'alice@example.org',
      emailVerified: true,
      groups: ['engineering', 'docs-admins'],
      // What the re-check asks with; no refresh token (not asked for), no sid (no back-channel logout registered).
      session: { sid: null, refreshToken: null, accessToken: expect.any(String), accessTokenExpiresAt: expect.any(Number), amr: expect.any(Array), acr: null },
    });
  });

  it('refuses an answer whose state is not the one this sign-in sent', async () => {
    const signIn = rp();
    const first = await signIn.begin();
    const second = await signIn.begin();
    const back = await idp.signIn(first.url, 'alice');
    const { failure, message } = await refusal(signIn.complete(second.transaction, back.search));
    expect(failure).toBe('invalid');
    expect(message).toMatch(/state/);
  });

  it('refuses an ID token whose nonce is not the one this sign-in sent', async () => {
    const signIn = rp();
    const { url, transaction } = await signIn.begin();
    url.searchParams.set('nonce', 'a-nonce-someone-else-chose');
    const back = await idp.signIn(url, 'alice');
    const { failure, message } = await refusal(signIn.complete(transaction, back.search));
    expect(failure).toBe('invalid');
    expect(message).toMatch(/nonce/);
  });

  it('refuses an ID token from another issuer, even when the answer claims to be from ours', async () => {
    const { url, transaction } = await rp().begin();
    const atEvil = new URL(url.pathname + url.search, evil.issuer);
    const back = await evil.signIn(atEvil, 'alice');
    back.searchParams.set('iss', idp.issuer);
    // The code exchange reaches the other provider, as through a hijacked name or a compromised proxy.
    const ours = (await (await idp.fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const hijacked = rp({
      fetch: (input, init) => {
        const target = String(input) === ours.token_endpoint ? String(input).replace(idp.issuer, evil.issuer) : input;
        return (String(target).startsWith(evil.issuer) ? evil.fetch : idp.fetch)(target, init);
      },
    });
    const { failure, message } = await refusal(hijacked.complete(transaction, back.search));
    expect(failure).toBe('invalid');
    expect(message).toMatch(/"iss"/);
  });

  it("refuses a logout token that names our issuer and the provider's key but is signed by another key", async () => {
    // The provider's real key id and algorithm, from an ID token it issued in a sign-in.
    const { url, transaction } = await rp().begin();
    const back = await idp.signIn(url, 'alice');
    const ours = (await (await idp.fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    let idToken = '';
    const watched = rp({
      fetch: async (input, init) => {
        const res = await idp.fetch(input, init);
        if (String(input) === ours.token_endpoint) idToken = ((await res.clone().json()) as { id_token: string }).id_token;
        return res;
      },
    });
    await watched.complete(transaction, back.search);
    const { alg, kid } = decodeProtectedHeader(idToken);
    // A logout token as the provider would send it (an ID token is trusted through TLS from the token endpoint; a
    // logout token arrives from anyone, so its signature is what counts), signed by a key the provider never published.
    const { privateKey } = await generateKeyPair(alg!, { extractable: true });
    const claims = { iss: idp.issuer, aud: CLIENT.client_id, sub: decodeJwt(idToken).sub, jti: 'forged-1', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } };
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: alg!, kid: kid!, typ: 'logout+jwt' }).setIssuedAt().sign(privateKey);
    const { failure, message } = await refusal(rp().verifyLogoutToken(forged));
    expect(failure).toBe('invalid');
    expect(message).toMatch(/signature verification failed/);
  });

  it('refuses an ID token issued to another client (its audience)', async () => {
    const { url, transaction } = await rp().begin();
    url.searchParams.set('client_id', OTHER.client_id);
    const back = await idp.signIn(url, 'alice');
    // The code is the other client's: a token endpoint answer for it, carried to docsearch.
    const substituted = rp({
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        if (headers.get('authorization')?.startsWith('Basic ')) headers.set('authorization', `Basic ${Buffer.from(`${OTHER.client_id}:${OTHER.client_secret}`).toString('base64')}`);
        return idp.fetch(input, { ...init, headers });
      },
    });
    const { failure, message } = await refusal(substituted.complete(transaction, back.search));
    expect(failure).toBe('invalid');
    expect(message).toMatch(/"aud"/);
  });

  it('refuses an expired ID token (this server\'s clock two hours on), saying it is about the clock', async () => {
    const { url, transaction } = await rp().begin();
    const back = await idp.signIn(url, 'alice');
    const late = rp({ now: () => Date.now() + 2 * 3600_000 });
    const { failure, message } = await refusal(late.complete(transaction, back.search));
    expect(failure).toBe('clock');
    expect(message).toMatch(/exp|timestamp/i);
  });

  it('says so when the person does not sign in at the provider', async () => {
    const signIn = rp();
    const { transaction } = await signIn.begin();
    const { failure, message } = await refusal(signIn.complete(transaction, new URLSearchParams({ error: 'access_denied', error_description: 'End-User aborted interaction', state: transaction.state, iss: idp.issuer }).toString()));
    expect(failure).toBe('denied');
    expect(message).toContain('access_denied');
  });

  it('says the provider cannot be reached when it is down, and works again when it is back', async () => {
    await idp.down();
    try {
      const { failure, message } = await refusal(rp().begin());
      expect(failure).toBe('unreachable');
      expect(message).toContain(idp.issuer);
    } finally {
      await idp.up();
    }
    expect((await rp().begin()).url.origin).toBe(idp.issuer);
  });

  it('sends the secret in the body to a provider that takes it only there (client_secret_post)', async () => {
    const postOnly = await startIdp({ clientAuthMethods: ['client_secret_post'] });
    // How each token request authenticated: oidc-provider takes either way, as strict providers (Authelia) do not.
    const sent: string[] = [];
    try {
      postOnly.setClients([CLIENT]);
      const signIn = new OidcSignIn(
        { issuer: postOnly.issuer, clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret, scopes: 'openid email', groupsClaim: 'groups', redirectUri: () => REDIRECT },
        {
          fetch: (input, init) => {
            if (String(input).endsWith('/token')) sent.push(new Headers(init?.headers).has('authorization') ? 'basic' : String(init?.body).includes('client_secret=') ? 'post' : 'none');
            return postOnly.fetch(input, init);
          },
        },
      );
      expect((await signIn.discover()).token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
      const { url, transaction } = await signIn.begin();
      const back = await postOnly.signIn(url, 'quinn');
      expect((await signIn.complete(transaction, back.search)).subject).toBe('quinn');
      expect(sent).toEqual(['post']);
    } finally {
      await postOnly.stop();
    }
  });

  it('names what is wrong with the issuer: one the discovery document does not name, a CA not trusted', async () => {
    const slash = new OidcSignIn({ ...rp().settings, issuer: `${idp.issuer}/x` }, { fetch: idp.fetch });
    expect((await refusal(slash.begin())).message).toContain('404');
    const mismatch = rp({ fetch: async (input, init) => {
      const res = await idp.fetch(input, init);
      if (!String(input).endsWith('/.well-known/openid-configuration')) return res;
      return Response.json({ ...((await res.json()) as object), issuer: `${idp.issuer}/other` });
    } });
    expect((await refusal(mismatch.begin())).message).toContain('does not match the expected');
    // Node's own fetch, without the private CA: what an operator sees without NODE_EXTRA_CA_CERTS.
    const untrusted = rp({ fetch: globalThis.fetch });
    const { failure, message } = await refusal(untrusted.begin());
    expect(failure).toBe('untrusted');
    expect(message).toMatch(/unable to verify the first certificate|unable to get local issuer certificate|self-signed certificate/);
  });

  it('signs out at the provider: its end_session_endpoint, our client id and where to come back', async () => {
    const signIn = rp();
    const server = (await signIn.metadata())!;
    const out = await signIn.signOutUrl(server, 'http://127.0.0.1:9/login');
    expect(out.href.startsWith(server.end_session_endpoint!)).toBe(true);
    expect(out.searchParams.get('client_id')).toBe(CLIENT.client_id);
    expect(out.searchParams.get('post_logout_redirect_uri')).toBe('http://127.0.0.1:9/login');
  });
});
