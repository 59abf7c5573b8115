/**
 * The client against a server that answers oddly or not at all, through the built binary: one that accepts the
 * connection and never answers (whoami still answers within its deadline, docs/cli.md "Client state and
 * credentials"; every other request gives up after DOCSEARCH_TIMEOUT instead of the HTTP stack's five minutes), a 429 with Retry-After, and 5xx answers with and without docsearch's error body (docs/cli.md
 * "Errors and exit codes": server failures keep the request and its id).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

const TOKEN = `dsk_${'a'.repeat(43)}`;

describe('the CLI against a server that answers oddly', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  /** A local HTTP server answering every request with `answer` (or never, when it does nothing). */
  async function serve(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const s = createServer(answer);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }
  const env = (url: string) => cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: TOKEN });

  it('whoami --json against a server that never answers: exit 0 within its deadline, "verified": false, the warning on stderr', { timeout: 60_000 }, async () => {
    const url = await serve(() => undefined);
    const started = Date.now();
    const res = await runCli(['whoami', '--json'], { env: env(url), timeoutMs: 40_000 });
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe(`warning: ${url} did not answer within 10 s; showing what this machine knows (the account is not verified)\n`);
    expect(JSON.parse(res.stdout)).toEqual({
      server: url,
      server_source: 'DOCSEARCH_URL',
      verified: false,
      account: null,
      method: 'API key',
      credential_source: 'DOCSEARCH_TOKEN',
      scopes: null,
      admin: null,
      project_ids: null,
      expires_at: null,
    });
  });

  it('whoami against another service that answers JSON at /api/v1/me is no verified account: exit 1, nothing on stdout', async () => {
    const other = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    });
    const res = await runCli(['whoami', '--json'], { env: env(other) });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`error: GET /api/v1/me: ${other} did not answer as a docsearch server does (no "id")\nhint: is ${other} a docsearch server? A proxy or another service may be answering at that address\n`);
  });

  it('search against a server that takes the connection and never answers fails after DOCSEARCH_TIMEOUT, exit 1, nothing on stdout', { timeout: 60_000 }, async () => {
    const url = await serve(() => undefined);
    const started = Date.now();
    const res = await runCli(['search', 'otters', '--json'], { env: { ...env(url), DOCSEARCH_TIMEOUT: '2' }, timeoutMs: 40_000 });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      `error: ${url} did not answer POST /api/v1/search within 2 s\nhint: the server may be hung or overloaded; DOCSEARCH_TIMEOUT sets how many seconds to wait (0: no limit)\n`,
    );
    const bad = await runCli(['projects', 'list'], { env: { ...env(url), DOCSEARCH_TIMEOUT: 'soon' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: DOCSEARCH_TIMEOUT must be a number of seconds, not "soon"\nhint: e.g. DOCSEARCH_TIMEOUT=30 (0: no limit; default 120)\n');
  });

  it('a 429 says when to retry; 5xx keep the request and its id, and a proxy\'s page without an id is not sent looking for one', async () => {
    const limited = await serve((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'too many requests', request_id: 'req_limit' } }));
    });
    const r429 = await runCli(['search', 'otters', '--json'], { env: env(limited) });
    expect(r429.code).toBe(1);
    expect(r429.stdout).toBe('');
    expect(r429.stderr).toBe('error: POST /api/v1/search: too many requests (request req_limit)\nhint: slow down and retry in 7 s\n');

    const failed = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: 'internal error', request_id: 'req_boom' } }));
    });
    const r500 = await runCli(['projects', 'list'], { env: env(failed) });
    expect(r500.code).toBe(1);
    expect(r500.stdout).toBe('');
    expect(r500.stderr).toBe('error: GET /api/v1/projects: internal error (request req_boom)\nhint: the server failed; its log has details under the request id\n');

    const proxy = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html><body>Internal Server Error</body></html>');
    });
    const rHtml = await runCli(['projects', 'list'], { env: env(proxy) });
    expect(rHtml.code).toBe(1);
    expect(rHtml.stdout).toBe('');
    expect(rHtml.stderr).toBe(
      'error: GET /api/v1/projects: 500 Internal Server Error\nhint: the server failed without saying why (no docsearch error, no request id): a proxy in front of it, or its log, may say more\n',
    );
  });
});
