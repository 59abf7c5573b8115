/**
 * Sources in shared mode, through the built binary and HTTP only: two replicas on one PostgreSQL and one Ceph RGW
 * (test/helpers/topology.ts), and an `s3` source reading another bucket of the same RGW. The s3 kind passes the
 * issue's acceptance; each source's passes run on one replica at a time; and a replica killed with SIGKILL in the
 * middle of a pass leaves nothing duplicated: the other one takes the source over and finishes it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { kindAcceptance, SourceClient } from '../helpers/sources.js';
import { logEvents, type Replica, startTopology, type Topology, topologyUnavailable } from '../helpers/topology.js';

const SKIP = topologyUnavailable();
const MINUTE = 60_000;

describe.skipIf(SKIP !== null)(`sources on two replicas, PostgreSQL and RGW${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let topo: Topology;
  let owner: TestUser;
  let keyDir: string;
  const at = (url: string) => ({ url }) as Daemon;
  const r = (i: number): Replica => topo.replicas[i]!;

  beforeAll(async () => {
    keyDir = mkdtempSync(join(tmpdir(), 'docsearch-sources-key-'));
    writeFileSync(join(keyDir, 'key'), randomBytes(32).toString('hex'), { mode: 0o600 });
    topo = await startTopology({ replicas: 2, args: ['--sources-allow-private', '--secrets-key-file', join(keyDir, 'key'), '--sources-min-interval', '1'] });
    owner = await addUser(r(0).daemon);
  }, 10 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const replica of topo.replicas) process.stderr.write(`--- replica ${replica.index}, last log lines:\n${replica.logs().split('\n').slice(-40).join('\n')}\n`);
  });
  afterAll(async () => {
    await topo?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  }, 5 * MINUTE);

  /** A new bucket of the test's RGW, and what a source needs to read it. */
  async function bucket(): Promise<{ name: string; put(key: string, text: string): Promise<void>; del(key: string): Promise<void>; keys(): Promise<string[]>; options(secret?: string): Record<string, unknown> }> {
    const name = `src-${randomBytes(4).toString('hex')}`;
    await topo.rgw.createBucket(name);
    const s3 = topo.rgw.client();
    const keys = async () => ((await s3.send(new ListObjectsV2Command({ Bucket: name }))).Contents ?? []).map((o) => o.Key!);
    return {
      name,
      put: async (key, text) => void (await s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: text }))),
      del: async (key) => void (await s3.send(new DeleteObjectCommand({ Bucket: name, Key: key }))),
      keys,
      options: (secret = topo.rgw.secretAccessKey) => ({ endpoint: topo.rgw.endpoint, region: topo.rgw.region, access_key_id: topo.rgw.accessKeyId, secret_access_key: secret }),
    };
  }

  it('passes the acceptance of a kind with an s3 source on Ceph RGW, through the load balancer', async () => {
    const b = await bucket();
    const client = new SourceClient(at(topo.lb.url), owner.apiKey);
    await kindAcceptance(client, 's3', {
      names: ['alpha.txt', 'beta.md', 'gamma.txt'],
      seed: async () => {
        await b.put('docs/alpha.txt', 'The alphaword stands for the first of three notes.');
        await b.put('docs/sub/beta.md', '# Beta\n\nThe betaword is the second note.');
        await b.put('docs/gamma.txt', 'The gammaword closes the set of notes.');
        await b.put('elsewhere/outside.txt', 'Not under the prefix: never a document.');
      },
      change: () => b.put('docs/sub/beta.md', '# Beta\n\nNow the changedword stands here instead, a new text.'),
      removeOne: () => b.del('docs/gamma.txt'),
      removeAll: async () => {
        for (const key of await b.keys()) if (key.startsWith('docs/')) await b.del(key);
      },
      body: () => ({ url: `s3://${b.name}/docs`, options: b.options() }),
      badBody: () => ({ url: `s3://${b.name}/docs`, options: b.options('not-the-secret-key') }),
      badWord: 'refused the credentials',
    });
  }, 10 * MINUTE);

  it('runs each source on one replica at a time; a replica killed mid-pass leaves nothing duplicated', async () => {
    const b = await bucket();
    const COUNT = 150;
    for (let i = 0; i < COUNT; i++) await b.put(`many/note-${String(i).padStart(3, '0')}.txt`, `Note ${i} of ${COUNT}: a short text about the number ${i * 13} and its neighbours.`);
    const client = new SourceClient(at(topo.lb.url), owner.apiKey);
    const project = await client.project('killed mid-pass');
    const source = await client.add(project, { url: `s3://${b.name}/many/`, options: b.options() });
    // The replica that runs the first pass says so in its log; it is killed once some items are in.
    const runner = await waitFor(() => topo.replicas.find((x) => logEvents(x.logs(), 'source.sync_started').some((e) => e.source_id === source.id)), MINUTE, 'a replica starting the pass');
    // Killed once the pass has recorded how far its listing got (every second): the next pass continues after it.
    const db = new pg.Pool({ connectionString: topo.databaseUrl, max: 1 });
    let resumeAfter: string;
    try {
      resumeAfter = await waitFor(async () => (await db.query<{ resume_after: string | null }>('select resume_after from sources where id = $1', [source.id])).rows[0]?.resume_after, 2 * MINUTE, 'the pass recording how far it got', { intervalMs: 20 });
    } finally {
      await db.end();
    }
    await runner.kill9();
    const midway = (await client.documents(project, source.id)).size;
    expect(midway).toBeLessThan(COUNT);
    expect(resumeAfter).toMatch(/^note-\d{3}\.txt$/);
    const other = topo.replicas.find((x) => x !== runner)!;
    const survivor = new SourceClient(at(other.url), owner.apiKey);
    // The lock went with the killed replica's connection: the other one takes the source over and finishes the pass.
    const done = await waitFor(
      async () => {
        const s = await survivor.get(project, source.id);
        return s.last_result && s.status === 'active' ? s : undefined;
      },
      3 * MINUTE,
      'the other replica finishing the pass',
    );
    expect(done.error).toBeUndefined();
    // The other replica's pass continued the listing after the last key recorded, instead of from the start.
    const continued = logEvents(other.logs(), 'source.synced').find((e) => e.source_id === source.id)!;
    // (At most as many as were left after the key seen recorded: the pass may have recorded a later one before the kill.)
    expect(continued.listed).toBeGreaterThan(0);
    expect(continued.listed).toBeLessThanOrEqual(COUNT - 1 - Number(resumeAfter.slice(5, 8)));
    expect(logEvents(other.logs(), 'source.sync_started').some((e) => e.source_id === source.id)).toBe(true);
    // Every item one document (their indexing goes on: nothing below needs it done).
    await waitFor(async () => (await survivor.documents(project, source.id)).size === COUNT, 2 * MINUTE, 'a document per item');
    const all = await survivor.allDocuments(project);
    expect(all).toHaveLength(COUNT);
    expect(new Set(all.map((x) => x.sha256)).size).toBe(COUNT);
    expect(new Set(all.map((x) => x.source_path)).size).toBe(COUNT);
    await runner.start();

    // Passes asked for on both replicas at once still run one at a time: their log spans never overlap.
    for (let i = 0; i < 3; i++) await Promise.all([survivor.sync(project, source.id), new SourceClient(at(runner.url), owner.apiKey).sync(project, source.id)]);
    const spans = topo.replicas.flatMap((x) => {
      const starts = logEvents(x.logs(), 'source.sync_started').filter((e) => e.source_id === source.id).map((e) => Date.parse(String(e.time)));
      const ends = logEvents(x.logs(), 'source.synced').filter((e) => e.source_id === source.id).map((e) => Date.parse(String(e.time)));
      return ends.map((end) => ({ start: starts.filter((s) => s <= end).at(-1)!, end, replica: x.index }));
    });
    spans.sort((a, b) => a.start - b.start);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.start, JSON.stringify(spans)).toBeGreaterThanOrEqual(spans[i - 1]!.end);
    expect(spans.length).toBeGreaterThanOrEqual(3);
  }, 15 * MINUTE);
});
