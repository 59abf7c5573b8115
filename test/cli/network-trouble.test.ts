/**
 * Network trouble the CLI must name for what it is, in one line and a hint, never a stack trace (docs/cli.md,
 * "Errors and exit codes"). Real local servers misbehaving: one that sends the head of each answer and drops the
 * connection midway, a TLS server with a self-signed certificate, a plain HTTP server asked over https, and nothing
 * listening while HTTPS_PROXY is set, and answers without end or of 50 MB. Before, the first four said `could not reach URL (CODE) — is docsearch serve
 * running?`, the first said "lost contact" again after each head ("answers again" between), and the endless answer
 * was read until memory ran out.
 */
import { createServer as createHttp, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { selfSigned, type SelfSigned } from '../helpers/self-signed.js';
import { cliEnv, unusedUrl } from './cli-env.js';

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections());
const env = (url: string, extra: Record<string, string> = {}) => cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: 'dsk_' + 'a'.repeat(43), ...extra });
const STACK = /\n\s+at /;

describe('network trouble is named for what it is', () => {
  let cert: SelfSigned;
  const servers: Server[] = [];
  beforeAll(() => {
    cert = selfSigned();
  });
  afterAll(async () => {
    await Promise.all(servers.map(close));
    cert.remove();
  });

  it('a server that drops the connection in the middle of each answer: lost contact said once, then that it closed mid-answer; exit 1', async () => {
    const server = createHttp((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"results":[{"chunk_id":"');
      setTimeout(() => req.socket.destroy(), 20);
    });
    servers.push(server);
    const url = `http://127.0.0.1:${await listen(server)}`;
    const res = await runCli(['search', 'harbour', '--json'], { env: env(url, { DOCSEARCH_RETRY_FOR: '3' }) });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.match(/lost contact/g), res.stderr).toHaveLength(1);
    expect(res.stderr).not.toContain('answers again');
    expect(res.stderr).toContain(`error: ${url} closed the connection in the middle of its answer to POST /api/v1/search`);
    expect(res.stderr).not.toContain('is `docsearch serve` running');
    expect(res.stderr).not.toMatch(STACK);
  });

  it('an answer that never ends, and one of 50 MB: read no further than 32 MiB, said to be no docsearch answer; exit 1', { timeout: 120_000 }, async () => {
    const mib = Buffer.alloc(1 << 20, 'a');
    const server = createHttp((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"projects":[],"padding":"');
      if (req.url!.startsWith('/api/v1/projects')) {
        // Without end, as fast as the client reads.
        const pump = () => {
          while (res.write(mib)) {}
        };
        res.on('drain', pump);
        req.socket.on('close', () => res.destroy());
        pump();
      } else res.end(`${Buffer.alloc(50 << 20, 'a').toString()}"}`);
    });
    servers.push(server);
    const url = `http://127.0.0.1:${await listen(server)}`;
    // Before, the endless one was read until DOCSEARCH_TIMEOUT (11.8 GB of memory after two minutes).
    for (const [args, request] of [[['projects', 'list', '--json'], 'GET /api/v1/projects'], [['search', 'harbour'], 'POST /api/v1/search']] as const) {
      const res = await runCli([...args], { env: env(url, { DOCSEARCH_TIMEOUT: '20' }), timeoutMs: 60_000 });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain(`error: ${request}: ${url} did not answer as a docsearch server does (an answer over 32 MiB)\nhint: `);
    }
  });

  it('a TLS server with a self-signed certificate: the certificate is named, with NODE_EXTRA_CA_CERTS, which then gets through', async () => {
    const server = createHttps({ key: cert.key, cert: cert.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
    }) as unknown as Server;
    servers.push(server);
    const url = `https://127.0.0.1:${await listen(server)}`;
    const res = await runCli(['projects', 'list'], { env: env(url) });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`error: ${url} presented a TLS certificate this machine does not trust (DEPTH_ZERO_SELF_SIGNED_CERT)\nhint: `);
    expect(res.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(res.stderr).not.toContain('is `docsearch serve` running');
    // The hint is true: trusting the certificate reaches the server (which is no docsearch: said so).
    const trusted = await runCli(['projects', 'list'], { env: env(url, { NODE_EXTRA_CA_CERTS: cert.certFile }) });
    expect(trusted.code).toBe(1);
    expect(trusted.stderr).toContain('did not answer as a docsearch server does');
  });

  it('a plain HTTP server asked over https: says it may speak plain http', async () => {
    const server = createHttp((_req, res) => res.end('{}'));
    servers.push(server);
    const port = await listen(server);
    const res = await runCli(['projects', 'list'], { env: env(`https://127.0.0.1:${port}`) });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: https:\/\/127\.0\.0\.1:\d+ did not answer TLS \(\w+\): it may speak plain http\nhint: try the address with http:\/\/ instead/);
  });

  it('HTTPS_PROXY set and the server not reached: the hint says the client connects directly, without the proxy', async () => {
    const url = await unusedUrl();
    const res = await runCli(['projects', 'list'], { env: env(url, { HTTPS_PROXY: 'http://proxy.example:3128', HTTP_PROXY: '' }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`error: could not reach ${url} (ECONNREFUSED)`);
    expect(res.stderr).toContain('docsearch connects directly, without a proxy (it does not read HTTPS_PROXY)');
    const without = await runCli(['projects', 'list'], { env: env(url, { HTTPS_PROXY: '', HTTP_PROXY: '', https_proxy: '', http_proxy: '' }) });
    expect(without.stderr).not.toContain('proxy');
  });
});
