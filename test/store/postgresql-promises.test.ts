/**
 * What docs/postgresql.md's "Connecting" promises of a daemon on PostgreSQL, held through the built daemon: the
 * role and database scale-out.md's worked example makes are enough to migrate and serve (PostgreSQL 15 lets only
 * the owner create in `public`); the URL is read as libpq reads it (a socket through `host=`, the user and
 * password in the URL, its `application_name`) by the daemon and the operator commands alike; the password shows
 * nowhere; and a replica's connections stay within the ~22 the page tells operators to plan `max_connections` for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { newPostgresDatabase, testCluster } from '../helpers/store-dialects.js';

const PASSWORD = 'pg-socket-secret-7';

/**
 * The statements scale-out.md's worked example runs once to make the role and database; postgresql.md gives the
 * same ones inline.
 */
function documentedSetup(): string[] {
  const block = /```sql\n([\s\S]*?)```/.exec(readFileSync(join(REPO, 'docs/scale-out.md'), 'utf8'))![1]!;
  const statements = block.split('\n').filter((l) => l.trim() !== '');
  expect(statements).toEqual([`CREATE ROLE docsearch LOGIN PASSWORD 'change-me';`, 'CREATE DATABASE docsearch OWNER docsearch;']);
  expect(readFileSync(join(REPO, 'docs/postgresql.md'), 'utf8').replace(/\s+/g, ' ')).toContain(`${statements[0]!.replace(`'change-me'`, `'…'`)} ${statements[1]}`);
  return statements;
}
/** What docs/postgresql.md tells operators to plan for each replica: 10 + 10 + a listener + a lease or so. */
const PLANNED_PER_REPLICA = 22;

describe.skipIf(postgresUnavailable() !== null)('docs/postgresql.md: connecting', () => {
  let d: Daemon | undefined;
  let user: TestUser;
  let adminUrl: string;
  let database: string;
  let appName: string;

  /** A query on the cluster's admin database, on a connection of its own (none is left open to outlive the cluster). */
  const adminQuery = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  /** The daemon's connections to its database, as PostgreSQL lists them. */
  const connections = () => adminQuery<{ application_name: string; client_addr: string | null }>('SELECT application_name, client_addr FROM pg_stat_activity WHERE datname = $1', [database]);

  beforeAll(async () => {
    const cluster = await testCluster();
    adminUrl = cluster.adminUrl;
    const socketDir = (await adminQuery<{ unix_socket_directories: string }>('SHOW unix_socket_directories'))[0]!.unix_socket_directories;
    // The role and database as both pages make them (named for this run), not a superuser: it must be able to migrate.
    database = `docsearch_${process.pid}`;
    for (const statement of documentedSetup()) await adminQuery(statement.replaceAll('docsearch', database).replace(`'change-me'`, `'${PASSWORD}'`));
    appName = `docsearch-${process.pid}`;
    // libpq's form for a local socket, with the user and password before an empty host, as postgresql.md names it.
    const url = `postgres://${database}:${PASSWORD}@/${database}?host=${socketDir}&port=${cluster.port}&application_name=${appName}`;
    d = await startDaemon({ databaseUrl: url });
    user = await addUser(d);
  }, 120_000);
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  it('runs on the role and database the docs make (owner, no superuser), reached as libpq reads the URL: a socket through host=, the password beside the user, its application_name; the password shows nowhere', async () => {
    const health = await api(d!, '/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.components.database).toEqual({ status: 'up', engine: 'postgresql' });
    expect((await api(d!, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
    const seen = await connections();
    expect(seen.length).toBeGreaterThan(0);
    // A socket connection has no client address; every one is named as the URL asks.
    for (const c of seen) expect(c).toEqual({ application_name: appName, client_addr: null });
    expect(`${d!.stdout()}${d!.stderr()}`).not.toContain(PASSWORD);
    // The operator commands read the same URL from the environment (addUser ran `users add` so), and print it masked.
    const created = await runCli(['groups', 'create', 'night-shift'], { env: d!.env });
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(['groups', 'list', '--json'], { env: d!.env });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { groups: { name: string }[] }).groups.map((g) => g.name)).toContain('night-shift');
    expect(`${created.stdout}${created.stderr}${listed.stdout}${listed.stderr}`).not.toContain(PASSWORD);
  });

  it('keeps a replica within the connections the page plans for, under 60 concurrent requests', async () => {
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, (await connections()).length);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? api(d!, '/api/v1/projects', { token: user.apiKey }) : api(d!, '/api/v1/search', { token: user.apiKey, method: 'POST', body: { query: `owls ${i}` } }),
      ),
    );
    sampling = false;
    await sampler;
    expect(new Set(burst.map((r) => r.status))).toEqual(new Set([200]));
    // The burst filled the query pool (it would show a pool grown past its 10), and stayed within the plan.
    expect(most).toBeGreaterThan(10);
    expect(most).toBeLessThanOrEqual(PLANNED_PER_REPLICA);
  });
});
