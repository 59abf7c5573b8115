/**
 * What docs/scale-out.md promises that no other file holds: its haproxy configuration is one haproxy accepts, and
 * the one the suite runs but for what the page says differs; and a replica stopped with a document in hand (a
 * deploy: SIGTERM) hands it back at once, so another replica takes it up without waiting out the lease, the
 * stopped run not counted against the document. One topology: two replicas on PostgreSQL 15 and Ceph RGW.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addUser, REPO, removeDir, type TestUser } from '../helpers/daemon.js';
import { DOCUMENTED_CHECK, FAST_CHECK, HAPROXY, haproxyConfig, haproxyMissing } from '../helpers/haproxy.js';
import { selfSigned } from '../helpers/self-signed.js';
import { logEvents, type Replica, startTopology, type Topology, topologyUnavailable } from '../helpers/topology.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';

const MINUTE = 60_000;

/** The name a replica's ingest worker leases jobs under, from its "listening" line. */
function ingestOwner(replica: Replica): string | undefined {
  const line = replica.logs().split('\n').find((l) => l.includes('"ingest_owner"'));
  return line ? (JSON.parse(line) as { ingest_owner: string }).ingest_owner : undefined;
}
/** The lease a stopped replica's job would otherwise wait out (postgresql.md: 120 s). */
const LEASE_MS = 120_000;

/** `/etc/haproxy/haproxy.cfg` as docs/scale-out.md gives it. */
function documentedHaproxyConfig(): string {
  return /```\n(global\n[\s\S]*?)```/.exec(readFileSync(join(REPO, 'docs/scale-out.md'), 'utf8'))![1]!;
}

describe.skipIf(haproxyMissing() !== null)('docs/scale-out.md: the haproxy configuration', () => {
  it('is one haproxy -c accepts without a warning (its certificate a self-signed one)', () => {
    const cert = selfSigned();
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-haproxy-doc-'));
    try {
      const pem = join(dir, 'search.example.com.pem');
      writeFileSync(pem, Buffer.concat([cert.cert, cert.key]));
      const cfg = join(dir, 'haproxy.cfg');
      writeFileSync(cfg, documentedHaproxyConfig().replace('/etc/haproxy/search.example.com.pem', pem));
      const res = spawnSync(HAPROXY, ['-c', '-f', cfg], { encoding: 'utf8' });
      expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
      expect(`${res.stdout}${res.stderr}`).not.toMatch(/\[(WARNING|ALERT)\]/);
    } finally {
      cert.remove();
      removeDir(dir);
    }
  });

  it('is the one the suite runs, but for loopback, TLS, forwardfor and the check interval (300 ms in the suite), as the page says', () => {
    const documented = documentedHaproxyConfig()
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, ''))
      // What the page says the suite leaves out.
      .filter((l) => !['  option forwardfor', '  http-request set-header X-Forwarded-Proto https'].includes(l))
      .map((l) => l.replace(/^  bind :443 ssl crt \S+$/, '  bind 127.0.0.1:443').replace(/^(  server )r(\d)/, (_, s: string, n: string) => `${s}r${Number(n) - 1}`).replace(' inter 1s ', ' inter 1000 '));
    expect(documented).toEqual(haproxyConfig([7411, 7412, 7413], 443, DOCUMENTED_CHECK).split('\n'));
    expect(FAST_CHECK.interMs).toBe(300);
  });
});

const SKIP = topologyUnavailable();

describe.skipIf(SKIP !== null)(`docs/scale-out.md on two replicas (PostgreSQL + RGW + haproxy)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let topo: Topology;
  let owner: TestUser;
  let db: pg.Pool;

  beforeAll(async () => {
    topo = await startTopology({ replicas: 2 });
    owner = await addUser(topo.replicas[0]!.daemon);
    db = new pg.Pool({ connectionString: topo.databaseUrl, max: 2 });
  }, 5 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const r of topo?.replicas ?? []) process.stderr.write(`--- replica ${r.index}, last log lines:\n${r.logs().split('\n').slice(-40).join('\n')}\n`);
  });
  afterAll(async () => {
    await db?.end();
    await topo?.stop();
  });

  it('a replica stopped (SIGTERM) with a document in hand hands it back at once: the other takes it up without waiting out the lease, the stopped run uncounted', async () => {
    // Long enough to be mid-way when the signal comes (a few hundred chunks).
    const text = Array.from({ length: 120 }, (_, i) => prose(`handover-${i}`, 8)).join('\n\n');
    const up = await uploadFiles(topo.replicas[0]!.daemon, owner.apiKey, [{ name: 'handover.txt', bytes: Buffer.from(text) }]);
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    const id = up.body.documents[0].id as string;
    const job = async () =>
      (await db.query<{ state: string; attempts: number; released: number; lease_owner: string | null }>('SELECT state, attempts, released, lease_owner FROM jobs WHERE document_id = $1', [id])).rows[0]!;
    const before = await waitFor(async () => {
      const j = await job();
      return j.state === 'running' ? j : undefined;
    }, MINUTE, 'the job to be claimed');
    // Whichever replica claimed it (nearly always the one that accepted it, not always) is the one stopped.
    const stopped = topo.replicas.find((r) => ingestOwner(r) === before.lease_owner)!;
    expect(stopped, `no replica is lease owner ${before.lease_owner}`).toBeDefined();

    const signalled = Date.now();
    await stopped.stop();
    expect(stopped.daemon.proc.exitCode).toBe(0);
    // The stopping replica held it and did not finish it first: otherwise this would prove nothing of a hand-back.
    expect(logEvents(stopped.logs(), 'ingest.released').map((e) => e.document_id)).toEqual([id]);
    // Taken up by the other (its lease, not the stopped one's, which would have had to expire first) ...
    const taken = await waitFor(
      async () => {
        const j = await job();
        return (j.state === 'running' && j.lease_owner !== before.lease_owner) || j.state === 'done' ? j : undefined;
      },
      LEASE_MS / 4,
      'the other replica to take the document up',
    );
    expect(Date.now() - signalled).toBeLessThan(LEASE_MS / 4);
    // ... claimed twice, counted once: the stopped run was handed back, not failed.
    expect(taken).toMatchObject({ attempts: 1, released: 1 });
  }, 2 * MINUTE);
});
