/**
 * docs/architecture.md's statements no other suite held:
 * - the packages table: `docsearch-cli` has the client commands the table names, and no other (the operator
 *   commands are there as names only: light-client.test.ts shows they refuse).
 * - "A bad value exits 2 before anything is opened" (The daemon, 1): no data directory made, nothing written in one.
 * - "API keys and OAuth grants are not touched by either" (Authentication): changing a password, on Settings →
 *   Account or with `docsearch users set-password`, ends web sessions only; a script's key and an application's
 *   tokens go on working.
 * - "5xx messages never reach clients" (Routes and the contract; DEVELOPING.md's conventions): an index damaged on
 *   disk makes a search fail inside LanceDB; the API and the search page say only that it failed and the request
 *   id, and the server's log, under that id, says what failed.
 * - "runs each registered probe with a 2 s limit" (Health): a probe that never answers is `down` ("timed out") after
 *   2 s while the others answer; and end to end, a database that stops answering (its server frozen, so connections
 *   stay open and queries hang, unlike a stopped one) makes health answer promptly, `down`, not hang a load balancer.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient, getCode, post } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, REPO, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { OPERATOR_SUMMARIES } from '../../src/cli/operator-commands.js';
import { checkHealth } from '../../src/server/health.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from './web-client.js';

describe('the two packages', () => {
  it('docsearch-cli has the client commands architecture.md lists, and no other', () => {
    // The light client's composition root, as pack-cli.mjs bundles it.
    const help = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./dist/client-main.js'); process.exitCode = await m.main(['--help'])"], { cwd: REPO, encoding: 'utf8' });
    const section = help.slice(help.indexOf('\nCommands:'), help.indexOf('\n\n', help.indexOf('\nCommands:')));
    const commands = [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]!);
    const client = commands.filter((c) => c !== 'help' && !(c in OPERATOR_SUMMARIES));
    const doc = readFileSync(`${REPO}/docs/architecture.md`, 'utf8');
    const row = /^\| `docsearch-cli` \| the client commands only: (.*?) \|/m.exec(doc)![1]!;
    const listed = [...row.matchAll(/`([a-z][a-z-]*)`/g)].map((m) => m[1]!);
    expect(client.length).toBeGreaterThan(5);
    expect(listed.sort()).toEqual(client.sort());
  });
});

describe('a bad configuration value exits 2 before anything is opened', () => {
  it('makes no data directory, and writes nothing in one that is there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'docsearch-bad-config-'));
    try {
      const missing = join(root, 'new', 'library');
      // No config file of the machine's user: only the flags speak.
      const env = { XDG_CONFIG_HOME: join(missing, 'config') };
      const refusals: Array<[string[], string]> = [
        [['--port', 'eighty'], 'option "port" (from --port) must be an integer'],
        [['--database', 'mysql://db.example/library'], 'option "database" (from --database): must be a postgres:// or postgresql:// URL'],
        [['--storage', 'ftp://files.example/library'], 'option "storage" (from --storage): unsupported storage'],
      ];
      for (const [args, says] of refusals) {
        const res = await runCli(['serve', '--data-dir', missing, ...args], { env });
        expect(res.code, res.stderr).toBe(2);
        expect(res.stderr).toContain(says);
        expect(existsSync(join(root, 'new')), `serve ${args.join(' ')} made the data directory`).toBe(false);
        const there = await runCli(['serve', '--data-dir', root, ...args], { env });
        expect(there.code, there.stderr).toBe(2);
        expect(readdirSync(root), `serve ${args.join(' ')} wrote in the data directory`).toEqual([]);
      }
    } finally {
      removeDir(root);
    }
  });
});

describe('one library: a password change, then a search failing inside the index', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });
  const REDIRECT = 'https://notes.example/callback';

  it('Settings → Account, then users set-password: the key, the access token and the refresh token still work', async () => {
    const user = await addUser(d);
    const app = await addClient(d, { name: 'Notes', redirectUris: [REDIRECT] });
    const web = await loggedIn(d, user);
    const code = await getCode(web, { client_id: app.clientId, redirect_uri: REDIRECT });
    const grant = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret!, redirect_uri: REDIRECT });
    expect(grant.status).toBe(200);
    let refresh: string = grant.body.refresh_token;
    const access: string = grant.body.access_token;
    const stillWorks = async (when: string) => {
      expect((await api(d, '/api/v1/projects', { token: user.apiKey })).status, `the API key, ${when}`).toBe(200);
      expect((await api(d, '/api/v1/projects', { token: access })).status, `the access token, ${when}`).toBe(200);
      const renewed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh, client_id: app.clientId, client_secret: app.clientSecret! });
      expect(renewed.status, `the refresh token, ${when}: ${JSON.stringify(renewed.body)}`).toBe(200);
      refresh = renewed.body.refresh_token;
    };

    const other = await loggedIn(d, user);
    await web.get('/settings/account');
    const changed = await web.submit('/settings/account/password', { _csrf: web.csrf, current_password: user.password, new_password: 'a brand new passphrase', new_password_again: 'a brand new passphrase' });
    expect(changed.text).toContain('Password changed. Signed out 1 other session.');
    expect((await other.get('/settings/account')).status).toBe(302);
    await stillWorks('after Settings → Account changed the password');

    const set = await runCli(['users', 'set-password', user.email, '--data-dir', d.dataDir], { input: 'operator chose this\n', env: d.env });
    expect(set.code, set.stderr).toBe(0);
    expect((await web.get('/settings/account')).status).toBe(302);
    await stillWorks('after users set-password');
  });

  // Last in this library: it damages the index.
  it('5xx: a search failing inside the index says "internal error" and the request id, the log says what failed', async () => {
    const user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'meadows.txt', bytes: Buffer.from('Glaciers feed the alpine meadows in the spring melt.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    rmSync(join(d.dataDir, 'lancedb', 'chunks.lance', 'data'), { recursive: true });

    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'glaciers' } });
    expect(res.status).toBe(500);
    const id: string = res.body.error.request_id;
    expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error — see the server log for this request id', request_id: id } });
    expect(res.headers.get('x-request-id')).toBe(id);
    const web = await loggedIn(d, user);
    const page = await web.get('/search?q=glaciers');
    expect(page.status).toBe(500);
    expect(page.text).not.toMatch(/lance|chunks\.lance|not found|\.rs:\d/i);
    expect(page.text).not.toContain(d.dataDir);
    const logged = d.stdout().split('\n').find((l) => l.includes(`"req_id":"${id}"`) && l.includes('"level":50'));
    expect(logged, 'the error logged under the request id').toMatch(/chunks\.lance/);
  });
});

describe('health runs each probe with a 2 s limit', () => {
  it('a probe that never answers is down ("timed out") after 2 s; one that throws is down; the rest answer', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const health = await checkHealth({
      hangs: () => new Promise(() => {}),
      throws: () => Promise.reject(new Error('refused')),
      answers: async () => ({ status: 'up', engine: 'lancedb' }),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - started).toBeLessThan(5_000); // far below a limit of 15 s, with room for a loaded CI machine
    expect(health).toEqual({ status: 'degraded', components: { hangs: { status: 'down', error: 'timed out' }, throws: { status: 'down' }, answers: { status: 'up', engine: 'lancedb' } } });
  });
});

const NO_PG = postgresUnavailable();

describe.skipIf(NO_PG !== null)(`health answers promptly when the database hangs${NO_PG ? ` (skipped: ${NO_PG})` : ''}`, () => {
  let cluster: PgCluster;
  let d: Daemon;
  /** The server and its backends: stopped, they keep their connections open and answer nothing. */
  const processes = () => [cluster.pid()!, ...execFileSync('pgrep', ['-P', String(cluster.pid())], { encoding: 'utf8' }).trim().split('\n').map(Number)];
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of processes()) process.kill(pid, sig);
  };
  beforeAll(async () => {
    cluster = await startPostgres();
    d = await startDaemon({ databaseUrl: await cluster.createDatabase() });
  }, 120_000);
  afterAll(async () => {
    if (cluster?.pid()) signal('SIGCONT');
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await cluster?.destroy();
  });

  it('answers while the database is frozen, says it is down, and is ok again once it thaws', async () => {
    expect((await api(d, '/api/v1/health')).status).toBe(200);
    signal('SIGSTOP');
    try {
      // The database probe's last answer is reused for up to 5 s; past that it is asked again, bounded (1.5 s, within
      // health's 2 s limit). Each request must answer while the database stays frozen (it thaws only below): one that
      // waited on it would not answer before then. The guard, far above those limits, only names such a wait.
      const degraded = await waitFor(async () => {
        const res = await fetch(`${d.url}/api/v1/health`, { signal: AbortSignal.timeout(15_000) }).catch((err: Error) => {
          throw new Error(`health did not answer while the database was frozen: ${err.message}`);
        });
        return res.status === 503 ? ((await res.json()) as { status: string; components: Record<string, unknown> }) : undefined;
      }, 20_000, 'a degraded health');
      expect(degraded.status).toBe('degraded');
      expect(degraded.components.database).toMatchObject({ status: 'down', engine: 'postgresql' });
    } finally {
      signal('SIGCONT');
    }
    await waitFor(async () => (await api(d, '/api/v1/health')).status === 200, 30_000, 'health to be ok again');
  }, 60_000);
});
