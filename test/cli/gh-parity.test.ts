import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from './cli-env.js';
import { missingFile } from '../helpers/requirement.js';

const isRoot = process.getuid?.() === 0;

/** What `docsearch login` of CLIs up to 0.1 left in the server's config file. */
function legacyConfigHome(server: string, extra: Record<string, unknown> = {}): string {
  const home = mkdtempSync(join(tmpdir(), 'docsearch-legacy-'));
  mkdirSync(join(home, 'docsearch'), { recursive: true });
  writeFileSync(join(home, 'docsearch/config.json'), JSON.stringify({ default_server: server, ...extra }));
  return home;
}

describe('the CLI as a new user meets it (issue 15)', () => {
  let d: Daemon;
  let user: TestUser;
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-test-'));
  // The daemon itself starts with a config.json an old `docsearch login` wrote: serve must not refuse it (item 1).
  mkdirSync(join(dataDir, 'config-home/docsearch'), { recursive: true });
  writeFileSync(join(dataDir, 'config-home/docsearch/config.json'), JSON.stringify({ default_server: 'http://127.0.0.1:7411' }));
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  }, { dataDir, cleanExit: false });

  it('1: login keeps client state in client.json, and an old client-written config.json is moved there', async () => {
    const env = cliEnv(null);
    expect((await runCli(['login', '--server', d.url, '--with-token'], { env, input: user.apiKey })).code).toBe(0);
    const dir = join(env.XDG_CONFIG_HOME!, 'docsearch');
    expect(JSON.parse(readFileSync(join(dir, 'client.json'), 'utf8'))).toEqual({ default_server: d.url });
    expect(existsSync(join(dir, 'config.json'))).toBe(false);

    // An old login's config.json: the CLI reads and moves it; one that also holds server options keeps those.
    const home = legacyConfigHome(d.url, { port: 7411 });
    const res = await runCli(['projects', '--json'], { env: { ...cliEnv(null), XDG_CONFIG_HOME: home, DOCSEARCH_TOKEN: user.apiKey } });
    expect(res.code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'docsearch/client.json'), 'utf8'))).toEqual({ default_server: d.url });
    expect(JSON.parse(readFileSync(join(home, 'docsearch/config.json'), 'utf8'))).toEqual({ port: 7411 });
  });

  it('2: documents delete A B --yes with a stored login (keychain, or its file fallback); empty DOCSEARCH_CREDENTIALS means the default', async () => {
    const env = cliEnv(null, { DOCSEARCH_CREDENTIALS: '' });
    const login = await runCli(['login', '--server', d.url, '--with-token'], { env, input: user.apiKey });
    expect(login.code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-two-'));
    writeFileSync(join(dir, 'a.txt'), 'Alpha: the first of two documents deleted together.\n');
    writeFileSync(join(dir, 'b.txt'), 'Beta: the second of two documents deleted together.\n');
    const up = await runCli(['upload', dir, '--json'], { env });
    expect(up.code).toBe(0);
    const ids = JSON.parse(up.stdout).documents.map((x: { id: string }) => x.id);
    const del = await runCli(['documents', 'delete', ...ids, '--yes'], { env });
    expect(del.stderr).not.toContain('not logged in');
    expect(del.code).toBe(0);
    for (const id of ids) expect((await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).status).toBe(404);
  });

  it('3: an unreadable file or folder is skipped and named, the rest is uploaded, exit 1 at the end', async () => {
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-unreadable-'));
    writeFileSync(join(dir, 'fine.txt'), 'A readable file about the lighthouse keeper schedule.\n');
    // Unreadable even for root: a symbolic link that points at itself (ELOOP).
    symlinkSync('loop.txt', join(dir, 'loop.txt'));
    // Mode 000: unreadable for anyone but root (CI runs as root: there they are read like any file).
    writeFileSync(join(dir, 'secret.txt'), 'no access');
    chmodSync(join(dir, 'secret.txt'), 0);
    mkdirSync(join(dir, 'locked'));
    writeFileSync(join(dir, 'locked/inner.txt'), 'inside');
    chmodSync(join(dir, 'locked'), 0);
    const res = await runCli(['upload', dir, '-r', '--wait'], { env, timeoutMs: 240_000 });
    expect(res.stderr).not.toContain('could not reach');
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`${join(dir, 'fine.txt')}\t`);
    expect(res.stderr).toContain(`${join(dir, 'loop.txt')}: cannot read the file (`);
    // Root reads a mode-000 file and folder; anyone else is refused, and told so for each.
    expect(res.stderr.includes(`${join(dir, 'secret.txt')}: cannot read the file (permission denied)`), res.stderr).toBe(!isRoot);
    expect(res.stderr.includes(`${join(dir, 'locked')}/: cannot read the folder (permission denied)`), res.stderr).toBe(!isRoot);
    expect(res.stdout.includes(`${join(dir, 'secret.txt')}\t`), res.stdout).toBe(isRoot);
    expect(res.stdout.includes(`${join(dir, 'locked/inner.txt')}\t`), res.stdout).toBe(isRoot);
    const docs = await api(d, '/api/v1/documents?limit=100', { token: user.apiKey });
    expect(docs.body.documents.map((x: { filename: string }) => x.filename)).toContain('fine.txt');
  });

  it('8: --json prints no notices; whoami shows the account and still answers (exit 0, a warning) with the server down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-quiet-'));
    writeFileSync(join(dir, 'note.txt'), 'A short note about quiet JSON output.\n');
    writeFileSync(join(dir, 'logo.gif'), Buffer.from('GIF8', 'ascii'));
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const up = await runCli(['upload', dir, '--json'], { env });
    expect(up.code).toBe(0);
    expect(up.stderr).toBe('');
    expect(JSON.parse(up.stdout).skipped).toEqual([`${join(dir, 'logo.gif')}: unsupported file type (docsearch reads PDF, Word, OpenDocument, PowerPoint, Excel, EPUB, RTF, CSV, Markdown, HTML, e-mail, images and plain text)`]);

    const offline = await runCli(['whoami'], { env: cliEnv(null, { DOCSEARCH_URL: 'http://127.0.0.1:9', DOCSEARCH_TOKEN: user.apiKey }) });
    expect(offline.code).toBe(0);
    expect(offline.stderr).toMatch(/^warning: could not reach http:\/\/127\.0\.0\.1:9 \([^)]+\).*the account is not verified\)\n$/);
    expect(offline.stdout).toContain('account\tunknown (server not reached)\n');
    expect(offline.stdout).toContain('authenticated by\tAPI key from DOCSEARCH_TOKEN\n');
  });

  it('8: GET /api/v1/me names the account, the credential kind and its scopes, for any valid credential', async () => {
    const ro = await addUser(d, { scopes: 'read:documents' });
    const me = await api(d, '/api/v1/me', { token: ro.apiKey });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ id: expect.stringMatching(/^usr_/), email: ro.email, kind: 'api_key', scopes: ['read:documents'], admin: false, admin_from: null, project_ids: null, expires_at: null });
    expect((await api(d, '/api/v1/me')).status).toBe(401);
  });

  // `script` (util-linux) provides the pseudo-terminal.
  it.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('8: login --with-token on a terminal prompts and does not echo the key', async () => {
    const env = { ...process.env, ...cliEnv(null) };
    // `script` gives the CLI a pseudo-terminal; the key is typed once the prompt shows.
    const proc = spawn('script', ['-qefc', `${process.execPath} ${BIN} login --server ${d.url} --with-token`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no prompt:\n${out}`)), 30_000);
      const check = setInterval(() => {
        if (out.includes('Paste your API key')) {
          clearTimeout(timer);
          clearInterval(check);
          resolve();
        }
      }, 50);
    });
    proc.stdin.write(`${user.apiKey}\r`);
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    expect(out).toContain(`Logged in to ${d.url} as ${user.email} (token)`);
    expect(out).not.toContain(user.apiKey);
    expect(code).toBe(0);
  });

  it('8: search --help tells what the default pipeline does; FORCE_COLOR styles output through a pipe', async () => {
    const help = await runCli(['search', '--help'], { env: cliEnv(null) });
    expect(help.stdout).toContain('(none by default)');
    expect(help.stdout).not.toMatch(/vector \+ keyword, reranked/);
    const plain = await runCli(['projects'], { env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) });
    expect(plain.stdout).not.toContain('\x1b[');
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-color-'));
    writeFileSync(join(dir, 'tide.txt'), 'Tide tables list the high water times for the harbour every day.\n');
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    expect((await runCli(['upload', dir, '--wait'], { env, timeoutMs: 240_000 })).code).toBe(0);
    const forced = await runCli(['search', 'high water harbour', '--limit', '1'], { env: { ...env, NO_COLOR: '', FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\x1b[1m');
    const clicolor = await runCli(['search', 'high water harbour', '--limit', '1'], { env: { ...env, NO_COLOR: '', CLICOLOR_FORCE: '1' } });
    expect(clicolor.stdout).toContain('\x1b[4m');
  });

  it('9: completion offers the project names of the logged-in server', async () => {
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    expect((await runCli(['projects', 'create', 'field notes'], { env })).code).toBe(0);
    for (const words of [['search', 'x', '--project', ''], ['projects', 'show', ''], ['upload', 'a.txt', '-p', 'fi']]) {
      const res = await runCli(['__complete', ...words], { env });
      expect(res.code, words.join(' ')).toBe(0);
      expect(res.stdout, words.join(' ')).toContain('field notes\tproject\n');
    }
  });

  it('11: serve, loaded lazily by the CLI, exits 0 on SIGTERM with nothing from the native layer', async () => {
    const code = await d.stop();
    expect(code).toBe(0);
    expect(d.stderr()).not.toContain('terminate called');
    expect(d.stderr()).not.toContain('Napi::Error');
  });
});
