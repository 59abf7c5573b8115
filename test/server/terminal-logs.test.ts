/**
 * `serve` on a terminal (#53 item 8): short text log lines instead of JSON, in colour unless NO_COLOR, and the first-run
 * setup link kept in sight while no account exists (a request that does not fail logs no line until then); through a
 * pipe the logs stay JSON lines, every request logged. The terminal is a real pseudo-terminal from util-linux `script`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, removeDir, runCli, startDaemon, TEST_MODEL_CACHE } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { missingFile } from '../helpers/requirement.js';

const PASSWORD = 'a passphrase never to be logged';
const REQUEST_LINE = /^\d\d:\d\d:\d\d INFO {2}(GET|POST|HEAD) \/\S* \d{3} \d+ ms/;
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

interface OnTerminal {
  proc: ChildProcess;
  /** Everything the terminal showed, with \n line ends. */
  screen: () => string;
  url: string;
  setupUrl: string;
  dataDir: string;
  exited: Promise<number | null>;
}

const started: OnTerminal[] = [];

/** `docsearch serve` on a 120×40 pseudo-terminal, as a person starts it; resolves once the setup link is shown. */
async function serveOnTerminal(env: Record<string, string | undefined>): Promise<OnTerminal> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-termlog-'));
  const serve = [process.execPath, BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE].join(' ');
  // exec: the daemon is the terminal's foreground process, so ^C reaches it as it would a person's.
  const proc = spawn('script', ['-qfec', `stty cols 120 rows 40; exec ${serve}`, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm', NO_COLOR: undefined, FORCE_COLOR: undefined, DOCSEARCH_LOG_FORMAT: undefined, XDG_CONFIG_HOME: join(dataDir, 'config-home'), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  proc.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => proc.once('close', r));
  const screen = () => out.replaceAll('\r\n', '\n');
  const t: Partial<OnTerminal> = { proc, screen, dataDir, exited };
  started.push(t as OnTerminal);
  const shown = await waitFor(() => /listening on (http:\/\/\S+)\n[^]*?(http:\/\/\S+\/setup\?token=\S+)\n/.exec(screen()), 60_000, 'the setup link on the terminal');
  return Object.assign(t, { url: shown[1]!, setupUrl: shown[2]! }) as OnTerminal;
}

/** What a browser and a curious person do before the first account exists: pages, assets, misses, refusals. */
async function browseBeforeSetup(url: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    for (const path of ['/', '/login', '/favicon.ico', '/setup?token=not-the-token', '/api/v1/projects', '/api/v1/health']) {
      await fetch(url + path, { redirect: 'manual' }).then((r) => r.arrayBuffer());
    }
  }
}

async function stopWithCtrlC(t: OnTerminal): Promise<number | null> {
  t.proc.stdin!.write('\x03');
  return t.exited;
}

afterAll(async () => {
  for (const t of started) {
    if (t.proc.exitCode === null && t.proc.signalCode === null) await stopWithCtrlC(t);
    removeDir(t.dataDir);
  }
});

describe.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('serve on a terminal', () => {
  it('prints text lines, keeps the setup link in sight until an account exists, then logs each request', { timeout: 180_000 }, async () => {
    const t = await serveOnTerminal({});
    await browseBeforeSetup(t.url);
    const added = await runCli(['users', 'add', 'first@example.com', '--data-dir', t.dataDir, '--api-key'], { input: `${PASSWORD}\n`, env: { XDG_CONFIG_HOME: join(t.dataDir, 'config-home') } });
    expect(added.code, added.stderr).toBe(0);
    const key = added.stdout.trim();
    expect((await fetch(`${t.url}/api/v1/projects`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => (await r.arrayBuffer(), r.status)))).toBe(200);
    await waitFor(() => t.screen().includes('GET /api/v1/projects 200'), 30_000, 'the first request line after setup');

    const raw = t.screen();
    const lines = plain(raw).split('\n');
    // Text for a person, in colour on a terminal (NO_COLOR unset): never a JSON line.
    expect(raw).toContain('\x1b[');
    for (const line of lines) expect(line.trimStart().startsWith('{'), line).toBe(false);
    expect(lines.some((l) => /^\d\d:\d\d:\d\d INFO {2}listening url=http/.test(l)), raw).toBe(true);
    // The 60 requests before the account made no line: the link stayed within the last lines of the screen.
    const link = lines.findIndex((l) => l.includes('/setup?token='));
    const after = lines.findIndex((l) => REQUEST_LINE.test(l) && l.includes('GET /api/v1/projects 200'));
    expect(link, raw).toBeGreaterThan(-1);
    expect(lines.slice(link, after).filter((l) => REQUEST_LINE.test(l)), raw).toEqual([]);
    expect(after - link, raw).toBeLessThanOrEqual(12);
    expect(lines[after]).toMatch(/^\d\d:\d\d:\d\d INFO {2}GET \/api\/v1\/projects 200 \d+ ms client_ip=127\.0\.0\.1 user=usr_\w+$/);
    // Once there is an account, every request has its line, a refused one too.
    await fetch(`${t.url}/api/v1/projects`).then((r) => r.arrayBuffer());
    await waitFor(() => plain(t.screen()).includes('GET /api/v1/projects 401'), 30_000, 'a refused request line');
    // Redaction as in JSON: the key and the password never appear, nor the setup token but in its one link.
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(PASSWORD);
    expect(raw.split(new URL(t.setupUrl).searchParams.get('token')!).length - 1).toBe(1);

    expect(await stopWithCtrlC(t)).toBe(0);
    expect(plain(t.screen())).toMatch(/\d\d:\d\d:\d\d INFO {2}stopped\n/);
  });

  it('with NO_COLOR, no escape sequence at all; a client\'s mistake before setup makes no line either', { timeout: 120_000 }, async () => {
    const t = await serveOnTerminal({ NO_COLOR: '1' });
    const res = await fetch(`${t.url}/api/v1/projects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
    expect(await stopWithCtrlC(t)).toBe(0);
    const raw = t.screen();
    expect(raw).not.toContain('\x1b');
    expect(raw).toContain('Until then, only requests that fail are logged here.');
    expect(raw).not.toMatch(/POST \/api\/v1\/projects/);
    expect(raw).toMatch(/\d\d:\d\d:\d\d INFO {2}stopped\n/);
  });

  it('through a pipe: JSON lines as before, each request logged even before setup', { timeout: 120_000 }, async () => {
    const d = await startDaemon({ env: { DOCSEARCH_LOG_FORMAT: undefined } });
    try {
      await browseBeforeSetup(d.url);
      const lines = () => d.stdout().split('\n').filter(Boolean);
      const pageLoads = () => lines().filter((l) => l.includes('"path":"/login"')).length;
      await waitFor(() => pageLoads() === 10, 30_000, 'a JSON line for each request to /login');
      for (const l of lines()) expect(() => JSON.parse(l), l).not.toThrow();
      expect(lines().map((l) => JSON.parse(l)).filter((e) => e.msg === 'request' && e.level === 30 && e.path === '/login')).toHaveLength(10);
      expect(d.stderr()).not.toContain('only requests that fail');
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  });
});
