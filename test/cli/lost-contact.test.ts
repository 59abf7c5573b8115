/**
 * The CLI's retry policy (src/cli/request-retry.ts) beyond the upload (test/e2e/replica-operations.test.ts): a
 * long-running client, `docsearch mcp`, rides through its server restarting, as a replica behind a load balancer
 * would; a server that never answered is not waited for: "is `docsearch serve` running?" comes at once; and
 * DOCSEARCH_RETRY_FOR sets how long a server answering 503 is asked again (0: not at all).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, stdioClient } from '../mcp/mcp-client.js';
import { cliEnv } from './cli-env.js';

describe('the CLI when the server stops answering', () => {
  const daemons: Daemon[] = [];
  afterEach(async () => {
    for (const d of daemons.splice(0)) {
      await d.stop();
      removeDir(d.dataDir);
    }
  });

  it('docsearch mcp: a tool call made while its server restarts is answered once the server is back, said once on stderr', { timeout: 240_000 }, async () => {
    const d = await startDaemon();
    daemons.push(d);
    const user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'otters.txt', bytes: Buffer.from('Sea otters hold hands while they sleep so that they do not drift apart.\n') }], { query: '?wait=true' });
    expect(up.status).toBe(200);
    const otters = up.body.documents[0].id as string;
    const stderr: string[] = [];
    const client = await stdioClient(d.url, user.apiKey, stderr);
    try {
      expect((await call(client, 'search', { query: 'otters sleeping' })).results[0].document_id).toBe(otters);
      expect(await d.stop()).toBe(0);
      const answered = call(client, 'search', { query: 'why do otters hold hands' });
      // The call is under way against a server that is down; the same server comes back on its port.
      await new Promise((r) => setTimeout(r, 2000));
      const again = await startDaemon({ dataDir: d.dataDir, args: ['--port', new URL(d.url).port] });
      daemons.splice(0, 1, again);
      expect((await answered).results[0].document_id).toBe(otters);
      const said = stderr.join('');
      expect(said.match(/warning: lost contact with http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); retrying for up to 60 s…/g), said).toHaveLength(1);
      expect(said).toMatch(/answers again/);
    } finally {
      await client.close();
    }
  });

  it('a server that never answered is not retried: the command fails at once, asking whether docsearch serve runs', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const res = await runCli(['search', 'anything'], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: `dsk_${'a'.repeat(43)}` }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not reach ${url} (ECONNREFUSED) — is \`docsearch serve\` running?`);
    // Every retry says "lost contact" first, and a request given up after retries says for how long it asked again.
    expect(res.stderr).not.toContain('lost contact');
    expect(res.stderr).not.toContain('asked again');
  });

  it('a daemon on a port fetch refuses (6000, 10080, …): serve warns at start, and the CLI says why instead of asking whether it runs', async () => {
    // The high ports of the Fetch standard's list; whichever is free here.
    let port: number | undefined;
    for (const p of [10080, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 6566, 6000, 5060, 5061, 4190, 4045, 3659]) {
      const free = await new Promise<boolean>((resolve) => {
        const probe = createServer();
        probe.once('error', () => resolve(false));
        probe.listen(p, '127.0.0.1', () => probe.close(() => resolve(true)));
      });
      if (free) {
        port = p;
        break;
      }
    }
    expect(port, 'no port of the blocked list is free here').toBeDefined();
    const d = await startDaemon({ args: ['--port', String(port), '--host', '127.0.0.1'] });
    daemons.push(d);
    const advice = `browsers and the docsearch CLI refuse to connect to port ${port} (the Fetch standard's blocked ports); choose another --port, or put a proxy in front and set --public-url`;
    expect(d.stderr()).toContain(`listening on http://127.0.0.1:${port}\nwarning: ${advice}`);
    expect(JSON.parse(await d.logLine('"event":"serve.port_blocked"'))).toMatchObject({ level: 40, port });
    const res = await runCli(['search', 'anything'], { env: cliEnv(null, { DOCSEARCH_URL: d.url, DOCSEARCH_TOKEN: `dsk_${'a'.repeat(43)}` }) });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`could not reach ${d.url} (bad port): ${advice}`);
    expect(res.stderr).not.toContain('is `docsearch serve` running');
    expect(res.stderr).not.toContain('lost contact');
  });

  it('DOCSEARCH_RETRY_FOR sets the window a 503 is asked again in; 0 fails at once; a bad value is a usage error', async () => {
    let asked = 0;
    const lb = createServer((_req, res) => {
      asked++;
      res.writeHead(503, { 'content-type': 'text/html' }).end('<html><body>no backend</body></html>');
    });
    await new Promise<void>((resolve) => lb.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(lb.address() as AddressInfo).port}`;
    const search = (retryFor: string) => runCli(['search', 'anything'], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: `dsk_${'a'.repeat(43)}`, DOCSEARCH_RETRY_FOR: retryFor }) });
    try {
      const short = await search('2');
      expect(short.code, short.stderr).toBe(1);
      expect(short.stderr).toContain(`lost contact with ${url} (503); retrying for up to 2 s…`);
      expect(short.stderr).toMatch(/\(asked again for [23] s\)/);
      expect(asked).toBeGreaterThan(2);

      asked = 0;
      const none = await search('0');
      expect(none.code, none.stderr).toBe(1);
      expect(none.stderr).toContain('503');
      expect(none.stderr).not.toContain('lost contact');
      expect(asked).toBe(1);

      const bad = await search('a minute');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('DOCSEARCH_RETRY_FOR must be a number of seconds, not "a minute"');
    } finally {
      await new Promise<void>((resolve) => lb.close(() => resolve()));
    }
  });
});
