import { expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { AFFINITY_WAIT_MS, type Job, JobStore, LeaseLost } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { type EngineSuite, describeEachEngine } from '../helpers/store-dialects.js';

let t = Date.UTC(2030, 0, 1);
const now = () => t;
let docs = 0;

/**
 * Queues `count` documents (and their jobs) for a user, new unless `userId` is given; the i-th is accepted by
 * replica `origins[i % origins.length]` (none: as in embedded mode). Returns the user id and document ids.
 */
async function queue(h: DatabaseHandle, email: string, count: number, opts: { origins?: (string | undefined)[]; userId?: string } = {}): Promise<{ userId: string; ids: string[] }> {
  const userId = opts.userId ?? (await new UserStore(h.db, now).create(email, 'h'))!.id;
  const project = await new ProjectStore(h.db, now).ensureDefault(userId);
  const origins = opts.origins ?? [undefined];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    t += 1;
    const origin = origins[i % origins.length];
    const documents = new DocumentStore(h.db, new JobStore(h.db, now, origin ? { origin } : {}), now);
    const sha = `${++docs}`.padStart(64, '0');
    ids.push((await documents.createQueued({ userId, projectId: project.id, filename: `${i}.txt`, contentType: 'text/plain', sizeBytes: 1, sha256: sha, metadata: {} })).document.id);
  }
  return { userId, ids };
}

/** Claims until the queue is empty (finishing each claim), in claim order. */
async function drain(jobs: JobStore, owner: string): Promise<Job[]> {
  const out: Job[] = [];
  for (let job = await jobs.claim(owner, 60_000); job; job = await jobs.claim(owner, 60_000)) {
    out.push(job);
    await jobs.complete(job);
  }
  return out;
}

describeEachEngine('jobs', (suite: EngineSuite) => {
  it('queueStats counts open jobs by state with the oldest one queued (metrics), and not finished ones', async () => {
    const jobs = new JobStore(suite.handle().db, now);
    const count = async (state: 'pending' | 'running') => (await jobs.queueStats()).find((s) => s.state === state)?.count ?? 0;
    const before = { pending: await count('pending'), running: await count('running') };
    // Jobs left by earlier tests were created before ours (the clock only moves forward): they stay the oldest.
    const oldestBefore = new Map((await jobs.queueStats()).map((s) => [s.state, s.oldestCreatedAt]));
    const first = t + 1;
    await queue(suite.handle(), 'stats@example.com', 3);
    const claimed = (await jobs.claim('stats-worker', 60_000))!;
    const stats = await jobs.queueStats();
    expect(await count('pending')).toBe(before.pending + 2);
    expect(await count('running')).toBe(before.running + 1);
    for (const s of stats) {
      expect(typeof s.count).toBe('number');
      expect(typeof s.oldestCreatedAt).toBe('number');
      // Ours: the first was claimed (running), the second is the oldest still pending.
      expect(s.oldestCreatedAt, s.state).toBe(oldestBefore.get(s.state) ?? (s.state === 'running' ? first : first + 1));
    }
    await jobs.complete(claimed);
    expect(await count('running')).toBe(before.running);
    // The tests after this one claim whatever is queued: leave nothing behind.
    await drain(jobs, 'stats-worker');
    expect(await count('pending')).toBe(before.pending);
  });

  it('never gives one job to two of many concurrent claimers (three pools, two of them preferring their own jobs)', async () => {
    const { ids } = await queue(suite.handle(), 'many@example.com', 30, { origins: ['r1', 'r2', undefined] });
    const stores = [suite.handle(), await suite.another(), await suite.another()].map((h, i) => new JobStore(h.db, now, i > 0 ? { origin: `r${i}` } : {}));
    const claimed: Job[] = [];
    await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        const jobs = stores[i % 3]!;
        for (let job = await jobs.claim(`w${i}`, 60_000); job; job = await jobs.claim(`w${i}`, 60_000)) {
          claimed.push(job);
          await jobs.complete(job);
        }
      }),
    );
    expect(claimed.map((j) => j.documentId).sort()).toEqual([...ids].sort());
    expect(new Set(claimed.map((j) => j.id)).size).toBe(30);
  });

  it('serves users in turns kept in the database, so they hold across processes (pools) and restarts', async () => {
    const h = suite.handle();
    const alice = await queue(h, 'alice-turns@example.com', 4);
    const bob = await queue(h, 'bob-turns@example.com', 2);
    const carol = await queue(h, 'carol-turns@example.com', 1);
    const a = new JobStore(h.db, now);
    const b = new JobStore((await suite.another()).db, now);
    const order: string[] = [];
    for (let i = 0; ; i++) {
      const jobs = i % 2 ? b : a; // alternate claimers: each sees the turns the other recorded
      const job = await jobs.claim('w', 60_000);
      if (!job) break;
      order.push(job.userId === alice.userId ? 'A' : job.userId === bob.userId ? 'B' : 'C');
      await jobs.complete(job);
    }
    expect(order.join('')).toBe('ABCABAA');
  });

  it('keeps a leased job from others until its lease expires; then the old holder can record nothing', async () => {
    const h = suite.handle();
    const { ids } = await queue(h, 'lease@example.com', 1);
    const first = new JobStore(h.db, now);
    const second = new JobStore((await suite.another()).db, now);
    const job = (await first.claim('dead-replica', 10_000))!;
    expect(job.documentId).toBe(ids[0]);
    t += 5_000;
    expect(await first.heartbeat(job, 10_000)).toBe(true); // expires at t + 10 s now
    t += 9_000;
    expect(await second.reclaimExpired()).toBe(0);
    expect(await second.claim('live-replica', 10_000)).toBeNull();
    t += 2_000;
    expect(await second.reclaimExpired()).toBe(1);
    const again = (await second.claim('live-replica', 10_000))!;
    expect(again).toMatchObject({ id: job.id, owner: 'live-replica', attempts: 2 });
    // The old holder comes back: its heartbeat finds the job taken, and any outcome it records is refused.
    expect(await first.heartbeat(job, 10_000)).toBe(false);
    await expect(first.complete(job)).rejects.toBeInstanceOf(LeaseLost);
    await expect(first.fail(job, 'x')).rejects.toBeInstanceOf(LeaseLost);
    await expect(first.release(job)).rejects.toBeInstanceOf(LeaseLost);
    await expect(new DocumentStore(h.db, first, now).markReady(job.documentId, job, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' })).rejects.toBeInstanceOf(LeaseLost);
    expect((await new DocumentStore(h.db, first, now).get(job.documentId))?.status).toBe('queued'); // rolled back
    await second.complete(again);
    expect(await second.countOpen()).toBe(0);
  });

  // Shared mode only: one process serves an embedded (SQLite) queue, so nothing there has an origin to prefer.
  if (suite.engine === 'postgresql') it('gives a replica its own uploads first, unless another job has waited AFFINITY_WAIT_MS', async () => {
    const h = suite.handle();
    const b = await queue(h, 'affinity@example.com', 3, { origins: ['r_b'] });
    const a = await queue(h, '', 3, { origins: ['r_a'], userId: b.userId });
    const plain = await queue(h, '', 1, { userId: b.userId });
    const replicaA = new JobStore(h.db, now, { origin: 'r_a' });
    const take = async (jobs: JobStore) => {
      const job = (await jobs.claim('w', 60_000))!;
      await jobs.complete(job);
      return job.documentId;
    };
    // A's own, oldest first, though B's are older; then the oldest of the rest.
    expect([await take(replicaA), await take(replicaA), await take(replicaA)]).toEqual(a.ids);
    expect(await take(replicaA)).toBe(b.ids[0]);
    // A job that has waited AFFINITY_WAIT_MS goes first, whoever accepted it.
    t += AFFINITY_WAIT_MS;
    const later = await queue(h, '', 1, { origins: ['r_a'], userId: b.userId });
    expect(await take(replicaA)).toBe(b.ids[1]);
    expect(await take(new JobStore(h.db, now, { origin: 'r_b' }))).toBe(b.ids[2]);
    expect(await take(replicaA)).toBe(plain.ids[0]);
    expect(await take(replicaA)).toBe(later.ids[0]);
    expect(await replicaA.claim('w', 60_000)).toBeNull();
  });

  it('hands a job back uncounted, marked released; recovers foreign leases only when asked', async () => {
    const h = suite.handle();
    const { userId, ids } = await queue(h, 'release@example.com', 2);
    const jobs = new JobStore(h.db, now);
    const documents = new DocumentStore(h.db, jobs, now);
    const one = (await jobs.claim('me', 60_000))!;
    await documents.markProcessing(one.documentId);
    await documents.release(one.documentId, one);
    expect((await documents.get(one.documentId))?.status).toBe('queued');
    const back = (await jobs.claim('me', 60_000))!;
    expect(back).toMatchObject({ id: one.id, attempts: 1, released: true });
    const other = (await jobs.claim('previous-process', 60_000))!;
    expect(ids).toContain(other.documentId);
    expect(await jobs.recoverForeignLeases('me')).toBe(1); // 'previous-process' is not 'me'; mine stays
    expect(await jobs.heartbeat(back, 60_000)).toBe(true);
    expect(await jobs.heartbeat(other, 60_000)).toBe(false);
    // A job whose document is deleted meanwhile ends quietly: nothing left to record.
    await documents.delete(back.documentId);
    await jobs.complete(back);
    expect(await documents.requeueIdleLeases('me', [])).toBe(0);
    const idle = (await jobs.claim('me', 60_000))!;
    expect(await documents.requeueIdleLeases('me', [idle.id])).toBe(0);
    expect(await documents.requeueIdleLeases('me', [])).toBe(1);
    expect(await drain(jobs, 'me')).toHaveLength(1);
  });
});
