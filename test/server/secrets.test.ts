import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type Daemon, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { newKeyOnPage, WebClient } from './web-client.js';
import { enrolTotp, totpCode } from '../auth/two-factor/totp.js';

const EMAIL = 'secret-keeper@example.com';
const PASSWORD = 'Pa55word-that-must-never-leak';
const CI_PASSWORD = 'ci-Password-also-never-logged';

/** The raw bytes of the SQLite database and its WAL/SHM files. */
function sqliteFiles(dataDir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const f of readdirSync(dataDir)) if (f.startsWith('docsearch.db')) out.set(f, readFileSync(join(dataDir, f)));
  return out;
}

// Text logs (`--log-format text`, a terminal's by default) are made from the redacted JSON: the same scenario holds for both.
describe.each([
  { format: 'json', args: [] },
  { format: 'text', args: ['--log-format', 'text'] },
])('no secret in $format logs or in the database file', ({ format, args }) => {
  let d: Daemon;
  const secrets = new Map<string, string>();
  let setupToken = '';
  let apiKeyHash = '';

  beforeAll(async () => {
    d = await startDaemon({ args: ['--log-level', 'trace', ...args] });
    setupToken = new URL(d.setupUrl!).searchParams.get('token')!;
    secrets.set('setup token', setupToken);
    secrets.set('password', PASSWORD);

    // First account through the setup link.
    const web = new WebClient(d);
    await web.get(`/setup?token=${setupToken}`);
    secrets.set('anonymous session cookie', web.sessionCookie!);
    secrets.set('csrf token', web.csrf);
    expect((await web.post('/setup', { _csrf: web.csrf, token: setupToken, email: EMAIL, password: PASSWORD })).status).toBe(302);
    secrets.set('setup session cookie', web.sessionCookie!);
    // The used link, a failed login, a good one, a key from the page, logout.
    await web.get(`/setup?token=${setupToken}`);
    const again = new WebClient(d);
    expect((await again.login(EMAIL, `${PASSWORD}-wrong`)).status).toBe(401);
    expect((await again.login(EMAIL, PASSWORD)).status).toBe(302);
    secrets.set('login session cookie', again.sessionCookie!);
    await again.get('/settings/keys');
    const page = await again.submit('/settings/keys', { _csrf: again.csrf, name: 'page key', scopes: ['read:documents', 'write:documents'] });
    const pageKey = newKeyOnPage(page.text)!;
    secrets.set('key from the page', pageKey);
    apiKeyHash = createHash('sha256').update(pageKey).digest('hex');

    // Keys through the API, used, revoked, and presented after revocation.
    const created = await api(d, '/api/v1/keys', { token: pageKey, body: { name: 'api key' } });
    expect(created.status).toBe(201);
    secrets.set('key from the API', created.body.key);
    expect((await api(d, '/api/v1/projects', { token: created.body.key })).status).toBe(200);
    expect((await api(d, `/api/v1/keys/${created.body.id}`, { method: 'DELETE', token: pageKey })).status).toBe(204);
    expect((await api(d, '/api/v1/projects', { token: created.body.key })).status).toBe(401);
    expect((await api(d, `/api/v1/projects?cursor=${pageKey}`, { token: pageKey })).status).toBe(400);
    expect((await api(d, '/api/v1/projects', { token: pageKey, body: { name: pageKey.slice(0, 10), bogus: pageKey } })).status).toBe(400);

    // A CI account provisioned by the operator command.
    const ci = await runCli(['users', 'add', 'ci@example.com', '--data-dir', d.dataDir, '--api-key'], { input: `${CI_PASSWORD}\n` });
    expect(ci.code).toBe(0);
    secrets.set('CI password', CI_PASSWORD);
    secrets.set('CI key', ci.stdout.trim());
    expect((await api(d, '/api/v1/projects', { token: ci.stdout.trim() })).status).toBe(200);
    expect(ci.stdout.trim()).toMatch(/^dsk_/);
    expect(ci.stderr).not.toContain(CI_PASSWORD);

    // An authenticator app set up (its key and recovery codes shown once), then signed in with a code and a recovery code.
    const { secret, recoveryCodes } = await enrolTotp(again);
    secrets.set('authenticator key', secret);
    recoveryCodes.forEach((code, i) => secrets.set(`recovery code ${i + 1}`, code));
    const code = totpCode(secret, 1);
    secrets.set('authenticator code', code);
    for (const second of [code, recoveryCodes[0]!]) {
      const web = new WebClient(d);
      await web.login(EMAIL, PASSWORD);
      await web.get('/login/verify');
      expect((await web.post('/login/verify', { _csrf: web.csrf, code: second, return_to: '' })).status).toBe(303);
      secrets.set(`session cookie after ${second === code ? 'a code' : 'a recovery code'}`, web.sessionCookie!);
    }

    const out = await again.post('/logout', { _csrf: again.csrf });
    expect(out.status).toBe(302);
    // The last request's log line (JSON or text) closes the scenario: every line before it is here too.
    await d.logLine((l) => (l.includes('"msg":"request"') && l.includes('"path":"/logout"')) || l.includes('POST /logout 302'));
  });

  afterAll(async () => {
    await d.stop();
    removeDir(d.dataDir);
  });

  it(`the scenario produced ${format} logs at trace level`, () => {
    const lines = d.stdout().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(15);
    if (format === 'json') for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    else for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/);
  });

  it('the logs on stdout hold none of the secrets', () => {
    const out = d.stdout();
    for (const [what, value] of secrets) expect(out.includes(value), what).toBe(false);
    expect(out).not.toContain('/setup?token=');
  });

  it('stderr holds the setup link exactly once (the operator notice) and no other secret', () => {
    const err = d.stderr();
    expect(err.split(setupToken).length - 1).toBe(1);
    for (const [what, value] of secrets) if (what !== 'setup token') expect(err.includes(value), what).toBe(false);
  });

  it('the SQLite files (db, -wal, -shm) hold no secret in clear text, only hashes', async () => {
    const check = () => {
      const files = sqliteFiles(d.dataDir);
      expect([...files.keys()]).toContain('docsearch.db');
      const all = Buffer.concat([...files.values()]);
      // Positive control: we are reading the right bytes.
      expect(all.includes(Buffer.from(EMAIL)), 'email present').toBe(true);
      expect(all.includes(Buffer.from(apiKeyHash)), 'key hash present').toBe(true);
      for (const [what, value] of secrets) {
        for (const [name, bytes] of files) expect(bytes.includes(Buffer.from(value)), `${what} in ${name}`).toBe(false);
      }
    };
    check(); // while the daemon runs (recent writes sit in the WAL)
    expect(await d.stop()).toBe(0);
    check(); // after shutdown checkpointed the WAL
  });
});
