/**
 * No source reads the daemon it runs in (docs/sources.md "Where sources may connect"), even with
 * `--sources-allow-private`: a source aimed at its port on 127.0.0.1, localhost or [::1], at its public URL (a proxy
 * in front of it, by name and by address), of any kind, is refused when it is added, saying why; one whose server
 * redirects a request to the daemon fails its pass, saying so, and reads nothing of it (`/metrics` is served to
 * loopback without credentials). Real HTTP: a daemon, a proxy in front of it as its --public-url, a redirecting server.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

describe('a source aimed at the daemon itself', () => {
  let d: Daemon;
  let client: SourceClient;
  let port: number;
  let proxyPort: number;
  let redirectPort: number;
  let target = 0;
  // A proxy relaying to the daemon (its --public-url), and a server redirecting every request to the daemon's /metrics.
  const proxy = createServer((req, res) => {
    const up = request({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  const redirector = createServer((_req, res) => res.writeHead(307, { location: `http://127.0.0.1:${port}/metrics` }).end());

  beforeAll(async () => {
    proxyPort = await listen(proxy);
    redirectPort = await listen(redirector);
    d = await startDaemon({ args: ['--sources-allow-private', '--source-timeout', '5', '--public-url', `http://127.0.0.1:${proxyPort}`] });
    port = Number(new URL(d.url).port);
    target = port;
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    proxy.close();
    redirector.close();
  });

  it('the daemon serves /metrics to loopback without credentials (what a source there would read)', async () => {
    const res = await fetch(`${d.url}/metrics`);
    expect(res.status).toBe(200);
  });

  it.each([
    ['its /metrics on 127.0.0.1', () => ({ url: `http://127.0.0.1:${port}/metrics` }), () => `127.0.0.1, port ${port},`],
    ['its health on localhost', () => ({ url: `http://localhost:${port}/api/v1/health` }), () => `(of localhost), port ${port},`],
    ['its pages on [::1]', () => ({ url: `http://[::1]:${port}/` }), () => `::1, port ${port},`],
    // The URL parser writes [::ffff:127.0.0.1] as [::ffff:7f00:1]: the address it names is 127.0.0.1.
    ['its /metrics on IPv4-mapped IPv6', () => ({ url: `http://[::ffff:127.0.0.1]:${port}/metrics` }), () => `127.0.0.1 (of ::ffff:7f00:1), port ${port},`],
    ['its public URL', () => ({ url: `http://127.0.0.1:${proxyPort}/metrics` }), () => `this server's public URL), port ${proxyPort},`],
    ['its public URL by another name', () => ({ url: `http://localhost:${proxyPort}/` }), () => `(the address of this server's public URL)`],
    ['as a WebDAV folder', () => ({ kind: 'webdav', url: `http://127.0.0.1:${port}/remote.php/dav/files/a/` }), () => `port ${port},`],
    ['as an S3 endpoint', () => ({ url: 's3://a-bucket/', options: { endpoint: `http://localhost:${port}` } }), () => `port ${port},`],
    ['as a Git repository', () => ({ url: `http://127.0.0.1:${port}/team/docs.git` }), () => `port ${port},`],
    ['as a mailbox', () => ({ url: `imap://127.0.0.1:${port}/INBOX`, options: { username: 'a' } }), () => `port ${port},`],
  ])('%s: refused when added, saying why', async (_what, body, names) => {
    const project = await client.project(`itself: ${_what}`);
    const res = await api(d, `/api/v1/projects/${project}/sources`, { token: client.token, body: body() });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.message).toContain(names());
    expect(res.body.error.message).toMatch(/is this server itself: sources may not read from the server they run in/);
  });

  it('a redirect to the daemon fails the pass, saying so; nothing of it is read', async () => {
    const project = await client.project('redirected to itself');
    const source = await client.add(project, { kind: 'webdav', url: `http://127.0.0.1:${redirectPort}/remote.php/dav/files/a/` });
    const failed = await client.passAfter(project, source.id, 0);
    expect(failed.status, JSON.stringify(failed)).toBe('error');
    expect(failed.error).toMatch(new RegExp(`127\\.0\\.0\\.1, port ${port}, is this server itself`));
    expect(await client.allDocuments(project)).toEqual([]);
  });

  it('a source elsewhere on loopback is still allowed', async () => {
    const project = await client.project('elsewhere');
    const res = await api(d, `/api/v1/projects/${project}/sources`, { token: client.token, body: { kind: 'webdav', url: `http://127.0.0.1:${redirectPort}/dav/` } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});
