/**
 * The CLI's own inputs made hostile, through `bin/docsearch` as a process: its settings and credentials files (not
 * JSON, the wrong shape, `__proto__` keys, a folder, a link to /dev/zero, a FIFO, a huge file), the DOCSEARCH_*
 * variables (empty, blank, not numbers, negative, past what a timer holds), server URLs (another scheme, a password
 * in them). Each ends in one sentence on stderr (and its hint) with the documented exit code (docs/cli.md): never a
 * stack trace, never a hang, never a secret.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliEnv, unusedUrl } from './cli-env.js';

const KEY = `dsk_${'a'.repeat(43)}`;

/** Runs `projects list` with a settings folder made by `prepare`: its exit code and stderr, failing on a hang. */
async function run(prepare: (dir: string) => void, extra: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; dir: string }> {
  const env = cliEnv(null, extra);
  const dir = join(env.XDG_CONFIG_HOME!, 'docsearch');
  mkdirSync(dir, { recursive: true });
  prepare(dir);
  const res = await runCli(['projects', 'list'], { env, timeoutMs: 15_000 });
  expect(res.stdout).toBe('');
  // One sentence and its hint; no stack.
  expect(res.stderr, res.stderr).toMatch(/^error: [^\n]+\n(hint: [^\n]+\n)?$/);
  return { code: res.code, stderr: res.stderr, dir };
}

/** What a file can be that is not a file of the CLI's. */
const BAD_FILES: [string, (path: string) => void, string][] = [
  ['a folder', (p) => mkdirSync(p), 'it is a folder, not a file'],
  ['a link to /dev/zero', (p) => symlinkSync('/dev/zero', p), 'it is not a regular file'],
  ['a FIFO', (p) => mkfifoSync(p), 'it is not a regular file'],
  ['a link to itself', (p) => symlinkSync(p, p), 'a symbolic link loop'],
  ['2 MiB of spaces', (p) => writeFileSync(p, Buffer.alloc(2 * 1024 * 1024, 0x20)), 'it is larger than 1 MiB, not a file docsearch wrote'],
  ['not JSON', (p) => writeFileSync(p, 'default_server = x'), 'not valid JSON'],
];

function mkfifoSync(path: string): void {
  // Node has no mkfifo: coreutils' own, present wherever the tests run.
  const res = spawnSync('mkfifo', [path]);
  if (res.status !== 0) throw new Error(`mkfifo ${path} failed: ${res.stderr}`);
}

describe('the CLI under hostile inputs of its own', () => {
  for (const name of ['client.json', 'credentials.json']) {
    it(`refuses a ${name} that is not a file of its own, naming it, exit 1, without hanging`, async () => {
      for (const [what, make, says] of BAD_FILES) {
        const res = await run((dir) => make(join(dir, name)), { DOCSEARCH_CREDENTIALS: 'file' });
        expect(res.code, what).toBe(1);
        expect(res.stderr, what).toContain(`error: cannot read ${join(res.dir, name)}: ${says}\n`);
      }
    });
  }

  it('refuses a client.json of the wrong shape instead of reading a number as a host', async () => {
    const cases: [string, string][] = [
      ['{"default_server": 5}', 'default_server is not a string (a server URL)'],
      ['{"default_server": {"url": "http://x"}}', 'default_server is not a string (a server URL)'],
      ['[1, 2]', 'not a JSON object'],
      ['null', 'not a JSON object'],
      ['{"default_server": "http://me:hunter2@docs.example.com"}', 'default_server is an invalid server URL "http://…@docs.example.com": no query, fragment or credentials allowed'],
    ];
    for (const [text, says] of cases) {
      const res = await run((dir) => writeFileSync(join(dir, 'client.json'), text));
      expect(res.code, text).toBe(1);
      expect(res.stderr, text).toContain(`client.json: ${says}`);
      expect(res.stderr).not.toContain('hunter2');
    }
    // A `__proto__` key is a key like any other: it sets no server.
    const proto = await run((dir) => writeFileSync(join(dir, 'client.json'), '{"__proto__": {"default_server": "http://evil.example"}}'));
    expect(proto.code).toBe(4);
    expect(proto.stderr).toContain('not logged in to http://127.0.0.1:7411');
  });

  it('refuses a credentials.json of the wrong shape, and takes a login with a field of the wrong type for none', async () => {
    for (const text of ['[1]', 'null', '"x"', '{"servers": "abc"}', '{"servers": [1]}']) {
      const res = await run((dir) => writeFileSync(join(dir, 'credentials.json'), text), { DOCSEARCH_CREDENTIALS: 'file' });
      expect(res.code, text).toBe(1);
      expect(res.stderr, text).toContain('credentials.json: not a credentials file of docsearch ({"servers": {…}})');
    }
    const url = await unusedUrl();
    const logins = [
      { type: 'oauth', access_token: 'a'.repeat(64), refresh_token: 5 },
      { type: 'oauth', access_token: 'a'.repeat(64), expires_at: 'tomorrow' },
      { type: 'token', access_token: KEY, scope: ['read:documents'] },
      { type: 'token', access_token: 7 },
    ];
    for (const login of logins) {
      const text = JSON.stringify({ servers: { [url]: login } });
      const res = await run((dir) => writeFileSync(join(dir, 'credentials.json'), text), { DOCSEARCH_CREDENTIALS: 'file', DOCSEARCH_URL: url });
      // Not "could not reach … (token is not iterable)": a login it cannot use is no login.
      expect(res.code, text).toBe(4);
      expect(res.stderr, text).toContain(`not logged in to ${url}`);
    }
  });

  it('refuses DOCSEARCH_TIMEOUT and DOCSEARCH_RETRY_FOR values that are not seconds a timer holds, exit 2', async () => {
    const url = await unusedUrl();
    for (const name of ['DOCSEARCH_TIMEOUT', 'DOCSEARCH_RETRY_FOR']) {
      for (const value of ['abc', '-1', 'Infinity', '1e400', '1e12', '2147484']) {
        const res = await run(() => {}, { [name]: value, DOCSEARCH_URL: url, DOCSEARCH_TOKEN: KEY });
        expect(res.code, `${name}=${value}`).toBe(2);
        expect(res.stderr, `${name}=${value}`).toMatch(new RegExp(`^error: ${name} must be (a number of seconds|at most 2147483 seconds \\(about 24 days\\)), not "${value}"\\n`));
      }
      // Empty or blank: the default, as docs/cli.md says of an unset variable; the request then fails to connect.
      for (const value of ['', '  ']) {
        const res = await run(() => {}, { [name]: value, DOCSEARCH_URL: url, DOCSEARCH_TOKEN: KEY });
        expect(res.code, `${name}="${value}"`).toBe(1);
        expect(res.stderr).toContain(`could not reach ${url} (ECONNREFUSED)`);
      }
    }
  });

  it('refuses a server URL that is not http(s) or carries credentials, exit 2, never printing the password', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--server', 'ftp://docs.example.com'], {}, 'invalid server URL "ftp://docs.example.com": only http and https are supported'],
      [[], { DOCSEARCH_URL: 'javascript:alert(1)' }, 'invalid server URL "javascript:alert(1)"'],
      [['--server', 'https://docs.example.com/?next=1'], {}, 'no query, fragment or credentials allowed'],
      [['--server', 'https://alice:hunter2@docs.example.com'], {}, 'invalid server URL "https://…@docs.example.com": no query, fragment or credentials allowed'],
      [[], { DOCSEARCH_URL: 'http://:hunter2@127.0.0.1:7411' }, 'invalid server URL "http://…@127.0.0.1:7411": no query, fragment or credentials allowed'],
      [['--server', 'alice:hunter2@[::1'], {}, 'invalid server URL "…@[::1"'],
    ];
    for (const [args, env, says] of cases) {
      const res = await runCli([...args, 'projects', 'list'], { env: cliEnv(null, { DOCSEARCH_TOKEN: KEY, ...env }), timeoutMs: 15_000 });
      expect(res.code, says).toBe(2);
      expect(res.stderr, says).toMatch(/^error: [^\n]+\n(hint: [^\n]+\n)?$/);
      expect(res.stderr).toContain(says);
      expect(res.stderr).not.toContain('hunter2');
    }
  });

  it('refuses DOCSEARCH_CREDENTIALS and DOCSEARCH_TOKEN values it cannot use', async () => {
    for (const value of [' ', 'disk', 'keychain,file']) {
      const res = await run(() => {}, { DOCSEARCH_CREDENTIALS: value });
      expect(res.code, value).toBe(2);
      expect(res.stderr).toContain('DOCSEARCH_CREDENTIALS must be auto, keychain or file');
    }
    const url = await unusedUrl();
    for (const value of [' ', 'dsk_short', `${KEY}\u200b`]) {
      const res = await run(() => {}, { DOCSEARCH_TOKEN: value, DOCSEARCH_URL: url });
      expect(res.code, JSON.stringify(value)).toBe(4);
      expect(res.stderr).toMatch(/^error: DOCSEARCH_TOKEN: that is not a valid key \(/);
    }
  });
});
