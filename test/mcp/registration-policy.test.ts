/**
 * docs/mcp.md's "Who may register" table, its `users` row for Client ID Metadata Documents: on a server where only
 * accounts may register clients by Dynamic Client Registration, an MCP client known by an https metadata document
 * still registers itself (the document is served here over https on 127.0.0.1, which the operator allows), is
 * approved by a signed-in user and reaches /mcp with the token.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { type SelfSigned, selfSigned } from '../helpers/self-signed.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { decide, loggedIn, pkce, post } from '../auth/oauth-flow.js';
import { httpClient } from './mcp-client.js';

const REDIRECT = 'http://127.0.0.1:38555/callback';

describe('client registration policy users: metadata-document clients', () => {
  let d: Daemon;
  let alice: TestUser;
  const tls: SelfSigned = selfSigned();
  let metadata: Server;
  let clientId: string;

  beforeAll(async () => {
    metadata = createServer({ cert: tls.cert, key: tls.key }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: clientId, client_name: 'Policy Assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }));
    });
    metadata.listen(0, '127.0.0.1');
    await new Promise((r) => metadata.once('listening', r));
    clientId = `https://127.0.0.1:${(metadata.address() as AddressInfo).port}/assistant.json`;
  });
  afterAll(async () => {
    metadata.closeAllConnections();
    await new Promise((r) => metadata.close(r));
    tls.remove();
  });

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    { args: ['--client-registration', 'users', '--client-metadata-allow-private'], env: { NODE_EXTRA_CA_CERTS: tls.certFile } },
  );

  it('takes an https client_id with no account behind it, and its token serves /mcp', async () => {
    const server = (await (await fetch(`${d.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(server.client_id_metadata_document_supported).toBe(true);
    // Dynamic Client Registration without an account's credential: refused under this policy.
    const anonymous = await fetch(`${d.url}/api/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'x', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) });
    expect(anonymous.status).toBe(401);

    const { verifier, challenge } = pkce();
    const resource = `${d.url}/mcp`;
    const { consent, redirect } = await decide(await loggedIn(d, alice), { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource }, 'approve');
    expect(consent.text).toContain('Policy Assistant');
    const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier, resource });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const client = await httpClient(d, token.body.access_token);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('search');
    } finally {
      await client.close();
    }
  });
});
