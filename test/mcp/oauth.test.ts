/**
 * An MCP client that knows the daemon only by its URL, through the official SDK's client and its OAuth client
 * provider: the 401, the resource and authorization server metadata, registration (once by Dynamic Client
 * Registration, once by a Client ID Metadata Document served here over https on 127.0.0.1), login and consent
 * through the real pages, the token exchange bound to /mcp, then the tools. Also mcp-remote, an independent
 * client from npm that bridges stdio to the remote endpoint and runs the same OAuth flow.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { type SelfSigned, selfSigned } from '../helpers/self-signed.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { consentFields, getCode, loggedIn, pkce, post } from '../auth/oauth-flow.js';
import type { WebClient } from '../server/web-client.js';
import { HostProvider } from './host-provider.js';
import { call } from './mcp-client.js';

const MARKER = 'The vault of the Hallam archive opens only at the spring equinox.';

/** The user's part, in their browser: the consent page for the URL the client opened, then Allow; returns the page and the code. */
async function consent(web: WebClient, authorizationUrl: URL): Promise<{ page: string; code: string; redirect: URL }> {
  const page = await web.get(authorizationUrl.pathname + authorizationUrl.search);
  expect(page.status, page.text.slice(0, 400)).toBe(200);
  const res = await web.post('/oauth/consent', { ...consentFields(page.text), decision: 'approve' });
  expect(res.status).toBe(303);
  const redirect = new URL(res.location!);
  return { page: page.text, code: redirect.searchParams.get('code')!, redirect };
}

/** Connects the SDK client with OAuth as a host does: the first try ends in UnauthorizedError once the browser is needed. */
async function connectWithOAuth(url: string, provider: HostProvider, web: WebClient): Promise<{ client: Client; consentPage: string }> {
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(new Client({ name: 'test-assistant', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const { page, code } = await consent(web, provider.authorizationUrl!);
  await first.finishAuth(code);
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return { client, consentPage: page };
}

describe('MCP with OAuth, through real clients', () => {
  let d: Daemon;
  let alice: TestUser;
  let docId: string;
  const tls: SelfSigned = selfSigned();
  let metadataServer: Server;
  let metadataUrl: string;
  const cimdRedirect = 'http://127.0.0.1:38211/callback';

  beforeAll(async () => {
    metadataServer = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      if (req.url !== '/assistant.json') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      res.end(JSON.stringify({ client_id: metadataUrl, client_name: 'Metadata Assistant', client_uri: 'https://assistant.example.org/', redirect_uris: [cimdRedirect], token_endpoint_auth_method: 'none' }));
    });
    metadataServer.listen(0, '127.0.0.1');
    await new Promise((r) => metadataServer.once('listening', r));
    metadataUrl = `https://127.0.0.1:${(metadataServer.address() as AddressInfo).port}/assistant.json`;
  });
  afterAll(async () => {
    metadataServer.closeAllConnections();
    await new Promise((r) => metadataServer.close(r));
    tls.remove();
  });

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'archive.txt', bytes: Buffer.from(`Hallam archive notes\n\n${MARKER}\n\nThe reading room closes at dusk.`) }], { query: '?wait=true' });
      expect(up.status).toBe(200);
      docId = up.body.documents[0].id;
    },
    // The metadata document lives on 127.0.0.1 with a certificate made here: the operator allows both.
    { args: ['--client-metadata-allow-private'], env: { NODE_EXTRA_CA_CERTS: tls.certFile } },
  );

  it('registers itself by Dynamic Client Registration, is approved in the browser, and searches', async () => {
    const provider = new HostProvider(`http://127.0.0.1:${await freePort()}/callback`);
    const web = await loggedIn(d, alice);
    const { client, consentPage } = await connectWithOAuth(`${d.url}/mcp`, provider, web);
    try {
      // Registered by RFC 7591: a client_id the server made, not a URL.
      expect(provider.info?.client_id).toMatch(/^app_/);
      expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${d.url}/mcp`);
      expect(provider.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
      expect(consentPage).toContain('Test Assistant');
      expect(consentPage).toMatch(/registered itself/i);
      expect(consentPage).toContain('127.0.0.1');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('search');
      const found = await call(client, 'search', { query: 'when does the vault open', mode: 'keyword' });
      expect(found.results[0]).toMatchObject({ document_id: docId, filename: 'archive.txt' });
      expect(found.results[0].text).toContain('spring equinox');
      const read = await call(client, 'get_document', { document_id: docId });
      expect(read.text).toContain(MARKER);
    } finally {
      await client.close();
    }
    // The token is bound to /mcp: the REST API refuses it.
    const rest = await api(d, '/api/v1/projects', { token: provider.stored!.access_token });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });

  it('identifies itself by a Client ID Metadata Document fetched over https', async () => {
    const provider = new HostProvider(cimdRedirect, metadataUrl);
    const web = await loggedIn(d, alice);
    const { client, consentPage } = await connectWithOAuth(`${d.url}/mcp`, provider, web);
    try {
      // No registration: the client_id is the document's URL.
      expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(metadataUrl);
      expect(consentPage).toContain('Metadata Assistant');
      expect(consentPage).toContain(metadataUrl.replace(/&/g, '&amp;'));
      const found = await call(client, 'search', { query: 'Hallam vault equinox', mode: 'keyword' });
      expect(found.results[0].document_id).toBe(docId);
    } finally {
      await client.close();
    }
  });

  it('refuses a token minted for another resource', async () => {
    // An application's token for the REST API (no `resource`): valid there, refused at /mcp.
    const reg = await fetch(`${d.url}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'REST app', redirect_uris: ['http://127.0.0.1:39999/cb'], token_endpoint_auth_method: 'none' }),
    });
    expect(reg.status).toBe(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkce();
    const web = await loggedIn(d, alice);
    const code = await getCode(web, { client_id: clientId, redirect_uri: 'http://127.0.0.1:39999/cb', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: 'http://127.0.0.1:39999/cb', code_verifier: verifier });
    expect(token.status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: token.body.access_token })).status).toBe(200);
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const challengeHeader = res.headers.get('www-authenticate')!;
    expect(challengeHeader).toContain(`resource_metadata="${d.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(challengeHeader).toContain('error="invalid_token"');
  });

  it('mcp-remote, an independent bridge from npm, completes the OAuth flow and searches', { timeout: 120_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'mcp-remote-home-'));
    const port = await freePort();
    const transport = new StdioClientTransport({
      command: join(REPO, 'node_modules/.bin/mcp-remote'),
      args: [`${d.url}/mcp`, String(port), '--host', '127.0.0.1', '--transport', 'http-only'],
      // Its own config and token folder; no desktop to open a browser on: the test reads the URL it prints.
      env: { PATH: process.env.PATH ?? '', HOME: home, MCP_REMOTE_CONFIG_DIR: join(home, '.mcp-auth'), BROWSER: 'true' },
      stderr: 'pipe',
    });
    let stderr = '';
    const authorizationUrl = new Promise<URL>((resolve) => {
      transport.stderr!.on('data', (b: Buffer) => {
        stderr += b.toString();
        const m = /Please authorize this client by visiting:\s*(\S+)/.exec(stderr);
        if (m) resolve(new URL(m[1]!));
      });
    });
    const client = new Client({ name: 'stdio-host', version: '1.0.0' });
    const connected = client.connect(transport);
    try {
      const url = await Promise.race([authorizationUrl, connected.then(() => Promise.reject(new Error(`connected without authorizing:\n${stderr}`)))]);
      expect(url.searchParams.get('resource')).toBe(`${d.url}/mcp`);
      const web = await loggedIn(d, alice);
      const { redirect, page } = await consent(web, url);
      expect(page).toMatch(/registered itself/i);
      // The browser follows the redirect to mcp-remote's callback server, which may still be starting: a browser
      // would be slower than this test, so try until it listens.
      expect(redirect.origin).toBe(`http://127.0.0.1:${port}`);
      const callback = await vi.waitFor(() => fetch(redirect), { timeout: 15_000, interval: 100 });
      expect(callback.status, stderr).toBeLessThan(400);
      await connected;
      const found = await call(client, 'search', { query: 'archive reading room vault', mode: 'keyword' });
      expect(found.results.map((r: { document_id: string }) => r.document_id)).toContain(docId);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nmcp-remote stderr:\n${stderr}`);
    } finally {
      await client.close().catch(() => undefined);
      (transport as unknown as { _process?: ChildProcess })._process?.kill();
    }
  });
});
