/**
 * What docs/operations.md#logs and docs/events.md promise of the daemon's log, through the built daemon: the table
 * of events names every event the code emits, where and at which level; a JSON line's fields; passing health checks
 * and scrapes at debug; a request's path without its query; no secret of an invitation or of a source's credentials
 * in the log or the audit log; text lines chosen by DOCSEARCH_LOG_FORMAT, styled through a pipe only with
 * FORCE_COLOR, quiet before setup until the first account is made through the setup link; and no colour on a
 * terminal with TERM=dumb.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, REPO, TEST_MODEL_CACHE, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { missingFile } from '../helpers/requirement.js';
import { SourceClient } from '../helpers/sources.js';
import { sourceFiles } from '../helpers/source-files.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { WebClient } from './web-client.js';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b\[/;

/** The rows of docs/events.md's table. */
const rows = [...readFileSync(join(REPO, 'docs', 'events.md'), 'utf8').matchAll(/^\| `([a-z_.<>]+)` \| ([a-z, ]+) \| ([^|]+) \| ([^\n]+) \|$/gm)].map((m) => ({
  name: m[1]!,
  levels: m[2]!.split(',').map((l) => l.trim()),
  // The files that make the line; a "(from …)" file is where the event starts, not where it is logged.
  files: [...m[3]!.replace(/\(from [^)]*\)/g, '').matchAll(/`(src\/[^`]+\.ts)`/g)].map((f) => f[1]!),
  /** The field names the row gives (and any plain word in backticks: values named in passing). */
  fields: new Set([...m[4]!.matchAll(/`([a-z_]+)`/g)].map((f) => f[1]!)),
}));
/** Fields of every line (pino's, and the request id of the request an event happened in). */
const EVERY_LINE = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'event', 'req_id']);

describe('docs/events.md: the table and the code name the same events', () => {
  const code = sourceFiles().filter(([path]) => !path.startsWith('src/cli/'));

  it('each row: a level pino has, and the event named in each file it says emits it', () => {
    expect(rows.length).toBeGreaterThan(40);
    for (const row of rows) {
      for (const level of row.levels) expect(LEVELS, `${row.name}: ${level}`).toContain(level);
      expect(row.files.length, row.name).toBeGreaterThan(0);
      for (const file of row.files) {
        const text = code.find(([path]) => path === file)?.[1];
        expect(text, `${row.name}: ${file} exists`).toBeDefined();
        const literal = row.name === 'audit.<type>' ? 'event: `audit.${' : `'${row.name}'`;
        expect(text!.includes(literal), `${row.name} in ${file}`).toBe(true);
      }
    }
  });

  it('every event the code logs has its row, at the level the row says', () => {
    const names = new Set(rows.map((r) => r.name));
    const emitted = code.flatMap(([path, text]) => [...text.matchAll(/event: '([a-z_]+\.[a-z_]+)'/g)].map((m) => `${m[1]} (${path})`));
    expect(emitted.length).toBeGreaterThan(40);
    expect(emitted.filter((e) => !names.has(e.split(' ')[0]!))).toEqual([]);
    const logged = code.flatMap(([path, text]) =>
      [...text.matchAll(/\.(trace|debug|info|warn|error|fatal)\(\s*\{[^{}]*?\bevent: '([a-z_]+\.[a-z_]+)'/g)].map((m) => ({ name: m[2]!, level: m[1]!, path })),
    );
    expect(logged.length).toBeGreaterThan(40);
    expect(logged.filter((l) => !rows.find((r) => r.name === l.name)!.levels.includes(l.level)).map((l) => `${l.name} at ${l.level} (${l.path})`)).toEqual([]);
  });
});

describe('JSON log lines (a pipe: the default)', () => {
  let d: Daemon;
  let admin: TestUser;
  const lines = () => d.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d);
    },
    { args: ['--log-level', 'debug', '--sources-allow-private'], env: { DOCSEARCH_LOG_FORMAT: undefined } },
  );

  it('each line: a numeric level, an RFC 3339 time, msg, service; a request: method, path, status, ms, client_ip, user, req_id (X-Request-Id)', async () => {
    const res = await api(d, '/api/v1/projects', { token: admin.apiKey });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    await d.logLine(id);
    for (const line of lines()) {
      expect([20, 30, 40, 50], JSON.stringify(line)).toContain(line.level);
      expect(line.time, JSON.stringify(line)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
      expect(line).toMatchObject({ msg: expect.any(String), service: 'docsearch' });
    }
    const me = (await api(d, '/api/v1/me', { token: admin.apiKey })).body.id;
    expect(lines().find((l) => l.req_id === id && l.msg === 'request')).toMatchObject({ level: 30, method: 'GET', path: '/api/v1/projects', status: 200, ms: expect.any(Number), client_ip: '127.0.0.1', user: me });
  });

  it('a passing health check or scrape at debug, a failing request at info; the path without its query', async () => {
    for (const path of ['/api/v1/health', '/metrics']) expect((await api(d, path)).status, path).toBe(200);
    const secretQuery = 'return_to=%2Fprojects%3Fshh%3Dquery-held-back';
    expect((await fetch(`${d.url}/login?${secretQuery}`)).status).toBe(200);
    const refused = await api(d, '/api/v1/projects?limit=3');
    expect(refused.status).toBe(401);
    await d.logLine('"status":401');
    const requests = lines().filter((l) => l.msg === 'request');
    expect(requests.filter((l) => l.path === '/api/v1/health').map((l) => l.level)).toEqual([20]);
    expect(requests.filter((l) => l.path === '/metrics').map((l) => l.level)).toEqual([20]);
    expect(requests.find((l) => l.path === '/login')).toMatchObject({ level: 30, method: 'GET', status: 200 });
    expect(requests.find((l) => l.status === 401)).toMatchObject({ level: 30, path: '/api/v1/projects' });
    // docs/operations.md#logs: the refusal itself at debug, with its code and the message its client was answered.
    expect(lines().filter((l) => l.msg === 'request rejected' && l.req_id === refused.headers.get('x-request-id'))).toEqual([
      expect.objectContaining({ level: 20, code: 'unauthorized', error: refused.body.error.message }),
    ]);
    expect(d.stdout()).not.toContain('query-held-back');
    expect(d.stdout()).not.toContain('limit=3');
  });

  it("logs no secret of an invitation or of a source's credentials, nor does the audit log", { timeout: 90_000 }, async () => {
    const secrets = new Map<string, string>();
    // An invitation: its link answered once (no mail server), accepted with a password.
    const invited = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: ['invitee@example.com'] } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const link = new URL(invited.body.invitations[0].link);
    const token = link.searchParams.get('token')!;
    secrets.set('invitation token', token);
    const invitee = new WebClient(d);
    expect((await invitee.get(link.pathname + link.search)).status).toBe(200);
    const password = 'invitee-Pa55word-never-logged';
    secrets.set('invitee password', password);
    expect((await invitee.post('/invite', { _csrf: invitee.csrf, token, password, password2: password })).status).toBe(303);

    // Sources whose servers do not answer (port 9): each pass fails and logs what it tried. Credentials in the URL
    // and as options, for each kind that takes a password.
    const sources = new SourceClient(d, admin.apiKey);
    const project = await sources.project('credentials');
    const added = [
      { url: 'http://dav-user:dav-URL-password-9f2c@127.0.0.1:9/remote.php/dav/files/dav-user/', options: {} },
      { url: 'https://127.0.0.1:9/team/docs.git', options: { username: 'git-user', password: 'git-token-option-5d1e' } },
      { url: 'imap://mail-user:imap-URL-password-7a4b@127.0.0.1:9/INBOX', options: {} },
    ];
    secrets.set('WebDAV password in the URL', 'dav-URL-password-9f2c');
    secrets.set('Git token option', 'git-token-option-5d1e');
    secrets.set('IMAP password in the URL', 'imap-URL-password-7a4b');
    for (const { url, options } of added) {
      const source = await sources.add(project, { url, every: '1h', options });
      expect(source.secrets, url).toEqual(['password']);
      expect((await sources.passAfter(project, source.id, 0)).status, url).toBe('error');
    }
    await waitFor(() => lines().filter((l) => l.event === 'source.failed').length >= added.length, 30_000, 'a source.failed line for each source');
    const audit = await fetch(`${d.url}/api/v1/audit-events?format=jsonl`, { headers: { authorization: `Bearer ${admin.apiKey}` } }).then((r) => r.text());
    // Positive control: the flows were logged and audited.
    expect(audit).toContain('"type":"account.created"');
    expect(audit).toContain('"type":"source.created"');
    expect(d.stdout()).toContain('"event":"audit.source.created"');
    const found = (text: string) => [...secrets].filter(([, value]) => text.includes(value)).map(([what]) => what);
    expect(found(d.stdout()), 'stdout').toEqual([]);
    expect(found(d.stderr()), 'stderr').toEqual([]);
    expect(found(audit), 'audit log').toEqual([]);
  });

  it('each event line holds the fields its row names, and no other', { timeout: 60_000 }, async () => {
    const up = await uploadFiles(d, admin.apiKey, [{ name: 'logged.txt', bytes: Buffer.from('A document whose ingestion is logged.\n') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    const row = (name: string) => rows.find((r) => r.name === (name.startsWith('audit.') && name !== 'audit.write_failed' ? 'audit.<type>' : name));
    await d.logLine('"event":"document.ingested"', 60_000);
    const logged = lines().filter((l) => typeof l.event === 'string');
    const names = new Set(logged.map((l) => l.event as string));
    // The scenario above logged these (and the audit events): each field they hold is named in their row.
    for (const name of ['document.ingested', 'source.sync_started', 'source.failed', 'audit.source.created']) expect(names, name).toContain(name);
    expect(logged.filter((l) => !row(l.event as string)).map((l) => l.event)).toEqual([]);
    const unnamed = logged.flatMap((l) => Object.keys(l).filter((k) => !EVERY_LINE.has(k) && !row(l.event as string)!.fields.has(k)).map((k) => `${l.event as string}: ${k}`));
    expect([...new Set(unnamed)]).toEqual([]);
    // And the rows whose fields are always there: each line has every one.
    for (const name of ['document.ingested', 'source.sync_started', 'source.failed']) {
      for (const line of logged.filter((l) => l.event === name)) expect(Object.keys(line).filter((k) => !EVERY_LINE.has(k)).sort(), name).toEqual([...row(name)!.fields].sort());
    }
  });
});

describe('text log lines through a pipe', () => {
  let d: Daemon;
  daemonForSuite(
    (started) => {
      d = started;
    },
    { env: { DOCSEARCH_LOG_FORMAT: 'text', FORCE_COLOR: '1', NO_COLOR: undefined } },
  );

  it('DOCSEARCH_LOG_FORMAT=text; styled with FORCE_COLOR; quiet before setup, then every request once the setup link made the first account', async () => {
    const web = new WebClient(d);
    for (let i = 0; i < 3; i++) expect((await web.get('/login')).status).toBe(200);
    expect((await api(d, '/api/v1/projects')).status).toBe(401);
    const token = new URL(d.setupUrl!).searchParams.get('token')!;
    await web.get(`/setup?token=${token}`);
    expect((await web.post('/setup', { _csrf: web.csrf, token, email: 'first@example.com', password: 'first-Pa55word-ok' })).status).toBe(302);
    expect((await api(d, '/api/v1/projects')).status).toBe(401);
    // eslint-disable-next-line no-control-regex
    const plain = () => d.stdout().replace(/\x1b\[[0-9;]*m/g, '');
    await waitFor(() => plain().includes('GET /api/v1/projects 401'), 15_000, 'the request line after setup');
    expect(plain().match(/GET \/api\/v1\/projects 401/g)).toHaveLength(1);
    expect(plain()).not.toContain('GET /login 200');
    expect(d.stderr()).toContain('Until then, only requests that fail are logged here.');
    for (const line of d.stdout().split('\n').filter(Boolean)) {
      // Info stays plain: the time is dimmed, other levels coloured (log-text.test.ts).
      expect(line).toMatch(/^\x1b\[2m\d\d:\d\d:\d\d\x1b\[0m (INFO |\x1b\[\d+m(DEBUG|WARN |ERROR)\x1b\[0m) \S/);
    }
  });
});

describe.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('text log lines on a terminal with TERM=dumb', () => {
  it('have no colour', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-dumb-'));
    try {
      const serve = [process.execPath, BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE].join(' ');
      const proc = spawn('script', ['-qfec', `exec ${serve}`, '/dev/null'], {
        env: { ...process.env, TERM: 'dumb', NO_COLOR: undefined, FORCE_COLOR: undefined, DOCSEARCH_LOG_FORMAT: undefined, XDG_CONFIG_HOME: join(dataDir, 'config-home') },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const exited = new Promise((r) => proc.once('close', r));
      await waitFor(() => /\d\d:\d\d:\d\d INFO {2}listening url=http/.test(out), 30_000, 'the listening line on the terminal');
      proc.stdin.write('\x03');
      expect(await exited).toBe(0);
      expect(out).toMatch(/\d\d:\d\d:\d\d INFO {2}stopped/);
      expect(out).not.toMatch(ESCAPE);
    } finally {
      removeDir(dataDir);
    }
  });
});
