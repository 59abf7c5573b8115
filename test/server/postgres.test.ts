import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { callsBetween, postgresUnavailable, statementCalls } from '../helpers/postgres.js';
import { newPostgresDatabase, testCluster } from '../helpers/store-dialects.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';

/**
 * The daemon on PostgreSQL (shared mode's database) when PostgreSQL goes away and comes back: health says which
 * engine is down, requests get 503 rather than 500, nothing dies, and everything works again once it returns.
 * The database URL carries a password that must appear nowhere the daemon or the operator commands print.
 */
const PASSWORD = 'pg-secret-hunter2';

describe.skipIf(postgresUnavailable() !== null)('daemon on PostgreSQL', () => {
  let d: Daemon | undefined;
  let user: TestUser;

  beforeAll(async () => {
    d = await startDaemon({ databaseUrl: await newPostgresDatabase(PASSWORD) });
    user = await addUser(d);
  });
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  it('reports the postgresql engine in health and serves the API', async () => {
    const health = await api(d!, '/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.components.database).toEqual({ status: 'up', engine: 'postgresql' });
    expect((await api(d!, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
  });

  it('answers 503 while PostgreSQL is down, stays up, and recovers (health, requests, ingestion) when it returns', async () => {
    const cluster = await testCluster();
    await cluster.stop();
    try {
      // The database probe's answer is reused for up to 5 s (sharedProbe).
      const health = await waitFor(async () => {
        const h = await api(d!, '/api/v1/health');
        return h.status === 503 ? h : undefined;
      }, 20_000, 'a degraded health');
      expect(health.body.status).toBe('degraded');
      expect(health.body.components.database).toEqual({ status: 'down', engine: 'postgresql' });
      expect(health.body.components.vector_store.status).toBe('up');
      const projects = await api(d!, '/api/v1/projects', { token: user.apiKey });
      expect(projects.status).toBe(503);
      expect(projects.body.error).toMatchObject({ code: 'service_unavailable', message: 'the database cannot be reached right now; try again shortly' });
      // Long enough for the ingest loops and the listening connection to have failed and retried.
      await new Promise((r) => setTimeout(r, 3000));
      expect(d!.proc.exitCode).toBeNull();
    } finally {
      await cluster.start();
    }
    await waitFor(async () => (await api(d!, '/api/v1/health')).status === 200, 30_000, 'health to be ok again');
    const up = await api(d!, '/api/v1/health');
    expect(up.body.components.database).toEqual({ status: 'up', engine: 'postgresql' });
    expect(up.body.components.queue).toEqual({ status: 'up' });
    const res = await uploadFiles(d!, user.apiKey, [{ name: 'after.txt', bytes: Buffer.from(prose('after the outage', 20)) }], { query: '?wait=true&wait_timeout=60' });
    expect(res.status).toBe(200);
    expect(res.body.documents[0].status).toBe('ready');
  }, 120_000);

  it('prints the database URL only with its password masked', () => {
    const printed = d!.stdout() + d!.stderr();
    expect(printed).toContain(`postgres://postgres:[redacted]@127.0.0.1:`);
    expect(printed).not.toContain(PASSWORD);
  });
});

describe.skipIf(postgresUnavailable() !== null)('ingest queue on PostgreSQL', () => {
  it('a queued job wakes one idle worker loop, not all of them: claims stay two or three per document whatever --ingest-workers is', async () => {
    const url = await newPostgresDatabase();
    const q = await startDaemon({ databaseUrl: url, args: ['--ingest-workers', '8'] });
    const uploads = 10;
    let before = new Map<string, number>();
    let after = before;
    try {
      const owner = await addUser(q);
      before = await statementCalls(url);
      for (let i = 0; i < uploads; i++) {
        const res = await uploadFiles(q, owner.apiKey, [{ name: `wake-${i}.txt`, bytes: Buffer.from(prose(`wake ${i}`, 3)) }], { query: '?wait=true&wait_timeout=60' });
        expect(res.body.documents[0].status).toBe('ready');
      }
      after = await statementCalls(url);
    } finally {
      expect(await q.stop()).toBe(0);
      removeDir(q.dataDir);
    }
    // A claim is one statement (it reads the users' turns). Per document two or three: the claim that takes the job,
    // the loop's look for more afterwards, and the idle loop a busy one wakes (run43 counted 32 for 10 under CI's
    // load). Waking every idle loop for each job made it 11 per document: 5 lies between, whatever the timing.
    const claims = callsBetween(before, after, /^with "turns" as materialized/);
    expect(claims).toBeGreaterThanOrEqual(uploads);
    expect(claims).toBeLessThanOrEqual(5 * uploads);
  }, 120_000);
});

describe.skipIf(postgresUnavailable() !== null)('round trips to PostgreSQL', () => {
  // Each statement is a round trip and ~0.4 ms of a replica's CPU: what runs per request or per document is counted.
  it('per request and per document, sends only the statements it needs: no key or sweep writes per upload, one health query a second', async () => {
    const url = await newPostgresDatabase();
    const q = await startDaemon({ databaseUrl: url });
    try {
      const owner = await addUser(q);
      const before = await statementCalls(url);
      const uploadsFrom = Date.now();
      for (let i = 0; i < 10; i++) {
        const res = await uploadFiles(q, owner.apiKey, [{ name: `trip-${i}.txt`, bytes: Buffer.from(prose(`trip ${i}`, 3)) }], { query: '?wait=true&wait_timeout=60' });
        expect(res.body.documents[0].status).toBe('ready');
      }
      const uploaded = await statementCalls(url);
      const waited = (Date.now() - uploadsFrom) / 1000;
      // The key's last use is written once a minute, not on each request (was: an UPDATE per request).
      // (Per minute, and per grace period below, of however long the uploads took on a loaded machine.)
      expect(callsBetween(before, uploaded, /^update "api_keys"/)).toBeLessThanOrEqual(1 + Math.floor(waited / 60));
      // Replaced documents are swept once per grace period (15 s), not twice per settled document (was: 20). (An
      // upload's own look for a replaced or trashed copy of its bytes is one lookup, counted below, not a sweep.)
      expect(callsBetween(before, uploaded, /"replaced_by" is not null and "replaced_at" </)).toBeLessThanOrEqual(1 + Math.floor(waited / 15));
      // A document's steps through the queue (queued, claimed, processing, ready) are one statement each, with no
      // BEGIN and COMMIT around them: 16 statements per document, the upload's wait included (was 33). Since then an
      // upload is audited (1), checked against the owner's and the project's quotas (2), and its chunks carry its
      // labels, read before and after they are written, and its uploader (about 5).
      expect(callsBetween(before, uploaded, /^begin/i)).toBe(0);
      // How often the queue's loops look and the upload's wait reads is the scheduler's (which loop wakes, how long a
      // document takes under load), so those are bounded apart: the idle loops' claims as in 'ingest queue on
      // PostgreSQL' (each claim that finds nothing then reads when the next job is due), and the wait's reads, one on
      // arrival, one when woken and one per 5 s poll. In the total (27.3 a document on a quiet machine), four more
      // wake-ups (a claim and a look each) took it past the 28 it was held to.
      const claims = callsBetween(before, uploaded, /^with "turns" as materialized/);
      const idleLooks = callsBetween(before, uploaded, /^select min\("run_after"\)/);
      const waitReads = callsBetween(before, uploaded, /^select \* from "documents" where "id" = any\(/);
      expect(claims).toBeLessThanOrEqual(5 * 10);
      expect(idleLooks).toBeLessThanOrEqual(claims);
      expect(waitReads).toBeLessThanOrEqual(2 * 10 + Math.ceil(waited / 5));
      // The rest is the same at any load: 21.3 per document (the 0.3: this count's own two and the key's one write;
      // one of the 21: the upload's credential asked again once its body has arrived, docs/api.md). One statement
      // more per document makes it 22.3.
      const perDocument = (callsBetween(before, uploaded, /./) - claims - idleLooks - waitReads) / 10;
      expect(perDocument).toBeLessThanOrEqual(22);

      // haproxy checks every replica every few hundred ms: the database is asked at most once a second.
      const started = Date.now();
      const checks = await Promise.all(Array.from({ length: 10 }, () => api(q, '/api/v1/health')));
      for (let i = 0; i < 10; i++) checks.push(await api(q, '/api/v1/health'));
      const seconds = (Date.now() - started) / 1000;
      for (const c of checks) expect(c.body.components.database).toEqual({ status: 'up', engine: 'postgresql' });
      const checked = await statementCalls(url);
      expect(callsBetween(uploaded, checked, /^select \$1$/)).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    } finally {
      expect(await q.stop()).toBe(0);
      removeDir(q.dataDir);
    }
  }, 120_000);
});

describe('operator commands with --database', () => {
  it.skipIf(postgresUnavailable() !== null)('add users and clients to the PostgreSQL database a daemon serves', async () => {
    const url = await newPostgresDatabase(PASSWORD);
    const env = { DOCSEARCH_DATABASE_URL: url };
    // A new database holds no library yet: --init makes it (without it the command refuses, test/admin/operator-library.test.ts).
    const added = await runCli(['users', 'add', 'ops@example.com', '--init'], { input: 'correct horse battery staple\n', env });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain('created account ops@example.com');
    expect(added.stderr).toContain('postgres://postgres:[redacted]@127.0.0.1:');
    const client = await runCli(['clients', 'add', '--name', 'Ops', '--redirect-uri', 'https://ops.example.com/cb', '--database', url]);
    expect(client.code, client.stderr).toBe(0);
    expect(`${added.stdout}${added.stderr}${client.stdout}${client.stderr}`).not.toContain(PASSWORD);
  });

  it('name an unreachable or malformed database without its password', async () => {
    const unreachable = await runCli(['users', 'add', 'ops@example.com'], {
      input: 'correct horse battery staple\n',
      env: { DOCSEARCH_DATABASE_URL: `postgres://ops:${PASSWORD}@127.0.0.1:1/library` },
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot open the PostgreSQL database postgres://ops:[redacted]@127.0.0.1:1/library');
    expect(unreachable.stderr).not.toContain(PASSWORD);
    const malformed = await runCli(['clients', 'add', '--name', 'X', '--redirect-uri', 'https://x.example.com/cb', '--database', `mysql://ops:${PASSWORD}@db/library`]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('option "database" (from --database): must be a postgres:// or postgresql:// URL, got "mysql://ops:[redacted]@db/library"');
    expect(malformed.stderr).not.toContain(PASSWORD);
  });
});
