import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/sql/open-database.js';
import { addUser, api, type Daemon } from '../../helpers/daemon.js';
import { rssMiB } from '../../helpers/rss-sampler.js';
import { selfSigned } from '../../helpers/self-signed.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import type { WebClient } from '../../server/web-client.js';
import { authorizePath, decide, HEX64, loggedIn, pkce, post, signedInSuite } from '../oauth-flow.js';

/**
 * Client ID metadata documents, served over real https on 127.0.0.1 with a certificate made here (openssl) and
 * trusted by the daemon through NODE_EXTRA_CA_CERTS. One daemon may fetch from private addresses (as an operator
 * of a private network would allow), one may not (the default).
 */
const tls = selfSigned();
const REDIRECT = 'http://127.0.0.1:7777/callback';
const MB = 1024 * 1024;

let server: Server;
let base: string;
const held = new Set<import('node:net').Socket>();

function document(path: string, extra: Record<string, unknown> = {}) {
  return { client_id: `${base}${path}`, client_name: 'Metadata Doc Client', client_uri: 'https://cimd-client.example.org/', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...extra };
}

beforeAll(async () => {
  server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const json = (body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    switch (req.url) {
      case '/client.json':
        return json(document('/client.json'), { 'cache-control': 'max-age=600' });
      case '/localhost.json':
        return json(document('/localhost.json', { client_id: `https://localhost:${new URL(base).port}/localhost.json`, client_name: 'Named Host Client' }));
      case '/mismatch.json':
        return json(document('/mismatch.json', { client_id: 'https://someone-else.example.org/client.json' }));
      case '/secret.json':
        return json(document('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' }));
      case '/object-id.json':
        // Whatever the fetched document holds is not shown back to whoever named its URL (probe finding 7).
        return json(document('/object-id.json', { client_id: { note: 'LEAKED-FIELD-VALUE' } }));
      case '/bad-uri.json':
        return json(document('/bad-uri.json', { redirect_uris: ['http://LEAKED-REDIRECT.example/cb'] }));
      case '/bad-method.json':
        return json(document('/bad-method.json', { token_endpoint_auth_method: 'LEAKED-METHOD' }));
      case '/html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html></html>');
      case '/redirect.json':
        res.writeHead(302, { location: `${base}/client.json` });
        return res.end();
      case '/slow.json':
        held.add(req.socket); // never answers
        return;
      case '/huge.json': {
        // 50 MB, streamed as fast as the reader takes it, without a length: the reader has to cut it off itself.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(MB, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 50 * MB) {
            sent += MB;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (sent = Number.POSITIVE_INFINITY));
        return pump();
      }
      default:
        if (req.url?.startsWith('/flood/')) return json(document(req.url));
        res.writeHead(404);
        res.end();
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of held) s.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  tls.remove();
});


/** The authorize path for a client_id, with a fresh PKCE challenge. */
function authorizeFor(clientId: string): string {
  const { challenge } = pkce();
  return authorizePath({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' });
}

/** The authorize page for a client_id, as a signed-in user sees it. */
const open = (web: WebClient, clientId: string) => web.get(authorizeFor(clientId));

describe('client ID metadata documents (private addresses allowed)', () => {
  let d: Daemon;
  let web: WebClient;

  daemonForSuite(
    async (started) => {
      d = started;
      web = await loggedIn(d, await addUser(d));
    },
    { args: ['--client-metadata-allow-private'], env: { NODE_EXTRA_CA_CERTS: tls.certFile } },
  );

  it('runs the whole flow for a client known by its document, and the consent page says it registered itself', async () => {
    const clientId = `${base}/client.json`;
    const { verifier, challenge } = pkce();
    const params = { client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', resource: `${d.url}/mcp` };
    const { consent, redirect } = await decide(web, params, 'approve');
    expect(consent.text).toContain('Metadata Doc Client');
    expect(consent.text).toContain(`identified by its metadata document at <code>${clientId}</code>`);
    expect(consent.text).toContain('docsearch has not verified it');
    expect(consent.text).toContain('<code class="client-uri-host">cimd-client.example.org</code>');
    expect(consent.text).toContain('<code class="redirect-host">127.0.0.1:7777</code>');
    const code = redirect.searchParams.get('code')!;
    const tokens = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toMatch(HEX64);
    const refreshed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    const revoked = await post(d, '/api/oauth/revoke', { token: refreshed.body.refresh_token, client_id: clientId });
    expect(revoked.status).toBe(200);
    expect((await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId })).body.error).toBe('invalid_grant');
  });

  it('resolves a host name once and connects to the address it checked (TLS still verifies the name)', async () => {
    const page = await open(web, `https://localhost:${new URL(base).port}/localhost.json`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Named Host Client');
  });

  it('refuses documents that are not acceptable, each with what was wrong', async () => {
    const cases: [string, string][] = [
      ['/mismatch.json', `the client metadata document at ${base}/mismatch.json is not valid: its client_id must equal the URL it was fetched from`],
      ['/object-id.json', `the client metadata document at ${base}/object-id.json is not valid: its client_id must equal the URL it was fetched from`],
      ['/bad-uri.json', `the client metadata document at ${base}/bad-uri.json is not valid: redirect URI must use https (http is allowed only for 127.0.0.1, [::1] and localhost)`],
      ['/bad-method.json', `the client metadata document at ${base}/bad-method.json is not valid: token_endpoint_auth_method is not supported (supported: none, client_secret_post, client_secret_basic)`],
      ['/secret.json', `the client metadata document at ${base}/secret.json is not valid: token_endpoint_auth_method must be none`],
      ['/redirect.json', `the client metadata document at ${base}/redirect.json could not be fetched: it answered with a redirect (302), and redirects are not followed`],
      ['/html', `the client metadata document at ${base}/html could not be fetched: its content type is text/html, not application/json`],
      ['/missing.json', `the client metadata document at ${base}/missing.json could not be fetched: it answered HTTP 404`],
    ];
    for (const [path, message] of cases) {
      const page = await open(web, base + path);
      expect(page.status, path).toBe(400);
      expect(page.location).toBeNull();
      expect(page.text).toContain(message);
      expect(page.text).toContain('invalid_client');
      expect(page.text).not.toMatch(/LEAKED|someone-else/i);
    }
    const http = await open(web, 'http://127.0.0.1:1/client.json');
    expect(http.text).toContain('client_id http://127.0.0.1:1/client.json is not a usable client metadata document URL: it must use https');
    const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code: 'x', client_id: `${base}/mismatch.json`, redirect_uri: REDIRECT });
    expect(token.status).toBe(401);
    expect(token.body.error).toBe('invalid_client');
    expect(token.body.error_description).toContain('must equal the URL it was fetched from');
  });

  it('never fetches from a link-local address (cloud metadata), even with private addresses allowed', async () => {
    // Refused by its address before any connection (a connection attempt would time out, saying so instead).
    const page = await open(web, 'https://169.254.169.254/latest/meta-data/client.json');
    expect(page.text).toContain('could not be fetched: the address 169.254.169.254 is a link-local address');
  });

  it('never fetches from an IPv6 address that carries an IPv4 one (this machine, 127.0.0.1, among them)', async () => {
    const port = new URL(base).port;
    for (const host of ['[::7f00:1]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::1]', '[2001::1]']) {
      const page = await open(web, `https://${host}:${port}/client.json`);
      expect(page.status, host).toBe(400);
      expect(page.text, host).toContain(`is an address that embeds an IPv4 address (NAT64, 6to4, Teredo or IPv4-compatible)`);
    }
  });

  it('cuts off a 50 MB document at 64 KiB without buffering it, and stays up', async () => {
    const before = rssMiB(d.proc.pid!);
    const page = await open(web, `${base}/huge.json`);
    expect(page.text).toContain(`the client metadata document at ${base}/huge.json could not be fetched: it is larger than 64 KiB`);
    expect(rssMiB(d.proc.pid!) - before).toBeLessThan(20);
    expect((await api(d, '/api/v1/health')).status).toBe(200);
  });

  it('gives up on a server that never answers after the 5 s limit', async () => {
    const t0 = performance.now();
    const page = await open(web, `${base}/slow.json`);
    const took = performance.now() - t0;
    // It waited the limit out (a load on the machine can only lengthen this); that it then gave up, the words say.
    expect(took).toBeGreaterThan(4500);
    expect(page.text).toContain(`the client metadata document at ${base}/slow.json could not be fetched: no complete answer within 5 s`);
    expect((await api(d, '/api/v1/health')).status).toBe(200);
  }, 60_000);
});

describe('client ID metadata documents (default: private addresses refused)', () => {
  let d: Daemon;
  let web: WebClient;

  daemonForSuite(
    async (started) => {
      d = started;
      web = await loggedIn(d, await addUser(d));
    },
    { env: { NODE_EXTRA_CA_CERTS: tls.certFile } },
  );

  it('refuses a document on a loopback address, naming the address', async () => {
    const page = await open(web, `${base}/client.json`);
    expect(page.status).toBe(400);
    expect(page.text).toContain(`the client metadata document at ${base}/client.json could not be fetched: the address 127.0.0.1 is a loopback address`);
    const named = await open(web, `https://localhost:${new URL(base).port}/client.json`);
    expect(named.text).toMatch(/the address (127\.0\.0\.1|::1) \(of localhost\) is a loopback address/);
  });
});

/** The metadata-document client rows of a daemon's database (SQLite file or PostgreSQL), counted. */
async function metadataDocumentRows(d: Daemon): Promise<number> {
  const handle = await openDatabase({ url: d.databaseUrl, dataDir: d.dataDir, migrate: false });
  try {
    const row = await handle.db.selectFrom('oauth_clients').where('registration', '=', 'metadata_document').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await handle.close();
  }
}

describe('client ID metadata documents under a flood (security probe, finding 1)', () => {
  const suite = signedInSuite({ args: ['--client-metadata-allow-private'], env: { NODE_EXTRA_CA_CERTS: tls.certFile } });
  const authorizeSignedOut = (clientId: string) => fetch(suite.d.url + authorizeFor(clientId), { redirect: 'manual' });

  it('stores no row for a signed-out flood, limits new documents per address like registration, on every endpoint', async () => {
    // 20 new documents an hour per address, as for RFC 7591 registration: each is a fetch this server makes.
    for (let i = 0; i < 20; i++) {
      const res = await authorizeSignedOut(`${base}/flood/${i}.json`);
      expect(res.status, `document ${i}`).toBe(302); // a valid request: on to the login page
      expect(res.headers.get('location')).toMatch(/^\/login\?/);
    }
    const limited = await authorizeSignedOut(`${base}/flood/20.json`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('too many client registrations (or unrecorded client metadata documents) from this address');
    for (const path of ['/api/oauth/token', '/api/oauth/revoke'] as const) {
      const body = path === '/api/oauth/token' ? { grant_type: 'authorization_code', code: 'x', client_id: `${base}/flood/t.json`, redirect_uri: REDIRECT } : { token: 'x', client_id: `${base}/flood/r.json` };
      const res = await post(suite.d, path, body);
      expect(res.status, path).toBe(429);
      expect(res.body.error, path).toBe('too_many_requests');
      expect(res.headers.get('retry-after'), path).toMatch(/^\d+$/);
    }
    expect(await metadataDocumentRows(suite.d)).toBe(0);

    // A document already fetched costs nothing more; its row is written when a signed-in user approves it.
    const { verifier, challenge } = pkce();
    const clientId = `${base}/flood/3.json`;
    const { redirect } = await decide(suite.web, { client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }, 'approve');
    expect(await metadataDocumentRows(suite.d)).toBe(1);
    const tokens = await post(suite.d, '/api/oauth/token', { grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(tokens.status).toBe(200);
  });
});
