import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { FileStore } from '../../src/store/objects/originals.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { type Job, JobStore } from '../../src/store/sql/jobs.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { addUser, type Daemon, REPO, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { sleep, waitFor } from '../helpers/eventually.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { newPostgresDatabase } from '../helpers/store-dialects.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';


/** Polls until `probe` gives a value. */
const within = <T>(timeoutMs: number, what: string, probe: () => Promise<T | undefined>): Promise<T> => waitFor(probe, timeoutMs, what, { intervalMs: 50 });

/**
 * The ingest queue shared by processes on one PostgreSQL database: a replica killed while it holds a job gives
 * it up only when its lease expires (never sooner: no process takes another's work for dead), and a job queued
 * by one replica wakes another's idle worker through NOTIFY, long before that worker's safety poll.
 */
describe.skipIf(postgresUnavailable() !== null)('jobs across processes on PostgreSQL', () => {
  const handles: DatabaseHandle[] = [];
  afterAll(async () => {
    for (const h of handles) await h.close();
  });

  async function queueOne(h: DatabaseHandle, email: string): Promise<string> {
    const userId = (await new UserStore(h.db, systemClock).create(email, 'h'))!.id;
    const project = await new ProjectStore(h.db, systemClock).ensureDefault(userId);
    const documents = new DocumentStore(h.db, new JobStore(h.db, systemClock), systemClock);
    return (await documents.createQueued({ userId, projectId: project.id, filename: 'a.txt', contentType: 'text/plain', sizeBytes: 1, sha256: '9'.repeat(64), metadata: {} })).document.id;
  }

  it('a job leased by a process killed with SIGKILL is reclaimed once its lease expires, not before', async () => {
    const url = await newPostgresDatabase();
    const h = await openPostgres(url);
    handles.push(h);
    const documentId = await queueOne(h, 'killed@example.com');
    const LEASE = 4_000;
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/store/child/claim-and-hold.ts'), url, String(LEASE), '500'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const held = await within(60_000, 'the child to claim', async () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as Job) : undefined));
      expect(held).toMatchObject({ documentId, attempts: 1 });
      const jobs = new JobStore(h.db, systemClock);
      const leaseEnd = async () => new Date((await h.db.selectFrom('jobs').select('lease_expires_at').where('id', '=', held.id).executeTakeFirstOrThrow()).lease_expires_at!).getTime();
      const firstEnd = await leaseEnd();
      // Alive and renewing: past its lease length the job is still its own.
      await sleep(LEASE + 1_000);
      expect(await jobs.reclaimExpired()).toBe(0);
      expect(await jobs.claim('survivor', LEASE)).toBeNull();
      child.kill('SIGKILL');
      await exited;
      const lastEnd = await leaseEnd();
      expect(lastEnd).toBeGreaterThan(firstEnd); // renewed by its heartbeats
      // Dead, but its lease runs on: nobody takes the job before the last renewal's lease ends, whoever looks.
      const reclaimedBy = await within(60_000, 'the lease to expire', async () => ((await jobs.reclaimExpired()) > 0 ? Date.now() : undefined));
      expect(reclaimedBy).toBeGreaterThanOrEqual(lastEnd);
      const again = (await jobs.claim('survivor', LEASE))!;
      expect(again).toMatchObject({ id: held.id, documentId, owner: 'survivor', attempts: 2 });
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);

  describe('a replica woken by another', () => {
    let replica: Daemon | undefined;
    let other: DatabaseHandle;
    let wokenUser: TestUser;
    afterAll(async () => {
      if (!replica) return;
      expect(await replica.stop()).toBe(0);
      removeDir(replica.dataDir);
    });

    it("leaves other replicas' leases alone at start, and claims a job another replica queued as soon as it is announced", async () => {
      const url = await newPostgresDatabase();
      // This test process is the other replica. It holds a job when the daemon starts...
      const h = await openPostgres(url);
      handles.push(h);
      other = h;
      const heldDocument = await queueOne(h, 'held-elsewhere@example.com');
      const held = (await new JobStore(h.db, systemClock).claim('other-replica', 10 * 60_000))!;
      // Shared mode, its safety poll an hour away (a waiting upload's, 10 minutes): whatever it claims or answers
      // within this test's minute was announced.
      replica = await startDaemon({ databaseUrl: url, args: ['--replica-poll', '3600'] });
      const startedAt = Date.now();
      const user = await addUser(replica);
      // ...and then stores an original where the daemon reads it (a shared store in a real deployment), queues
      // a document and, later, announces it.
      const bytes = Buffer.from(prose('queued by another replica', 20));
      const sha256 = sha256Hex(bytes);
      const files = new FileStore(new LocalObjectStore(join(replica.dataDir, 'files')), join(replica.dataDir, 'files', 'tmp'));
      await files.init();
      const temp = join(files.tmpDir, 'from-another-replica.part');
      writeFileSync(temp, bytes);
      await files.place(temp, sha256);
      const userId = (await new UserStore(h.db, systemClock).findByEmail(user.email))!.id;
      const project = await new ProjectStore(h.db, systemClock).ensureDefault(userId);
      const documents = new DocumentStore(h.db, new JobStore(h.db, systemClock), systemClock);
      await sleep(Math.max(0, startedAt + 3_000 - Date.now())); // the daemon's loops are asleep by now
      const { document } = await documents.createQueued({ userId, projectId: project.id, filename: 'other.txt', contentType: 'text/plain', sizeBytes: bytes.length, sha256, metadata: {} });
      // Not announced: nobody claims it.
      await sleep(4_000);
      expect((await documents.get(document.id))?.status).toBe('queued');
      await h.events.publish('jobs', document.id);
      const claimed = await within(60_000, 'the announced job to be claimed', async () => {
        const status = (await documents.get(document.id))?.status;
        return status === 'queued' ? undefined : status;
      });
      expect(['processing', 'ready']).toContain(claimed);
      await within(60_000, 'the document to be ready', async () => ((await documents.get(document.id))?.status === 'ready' ? true : undefined));
      wokenUser = user;
      // The job the other replica holds is still its own: a replica starting takes nobody's work for dead.
      expect(await h.db.selectFrom('jobs').select(['state', 'lease_owner']).where('id', '=', held.id).executeTakeFirst()).toEqual({ state: 'running', lease_owner: 'other-replica' });
      expect(held.documentId).toBe(heldDocument);
    }, 120_000);

    it('answers a ?wait=true upload as soon as another replica finishes its document, not at its next look', async () => {
      const h = other;
      const bytes = Buffer.from(prose('finished by another replica', 20));
      const userId = (await new UserStore(h.db, systemClock).findByEmail(wokenUser.email))!.id;
      const project = await new ProjectStore(h.db, systemClock).ensureDefault(userId);
      const jobs = new JobStore(h.db, systemClock);
      const documents = new DocumentStore(h.db, jobs, systemClock);
      // The other replica has queued these bytes and is working on them (unannounced, so the daemon sleeps on).
      const { document } = await documents.createQueued({ userId, projectId: project.id, filename: 'shared.txt', contentType: 'text/plain', sizeBytes: bytes.length, sha256: sha256Hex(bytes), metadata: {} });
      const job = (await jobs.claim('replica-y', 60_000))!;
      expect(job.documentId).toBe(document.id);
      // The same bytes uploaded to the daemon with ?wait=true: the existing document, waited on.
      const answer = uploadFiles(replica!, wokenUser.apiKey, [{ name: 'shared.txt', bytes }], { query: '?wait=true&wait_timeout=600' });
      await sleep(1_000);
      await documents.markReady(document.id, job, { chunkCount: 1, pages: null, warnings: [], embedderId: 'elsewhere' });
      await h.events.publish('document_settled', document.id);
      // Unannounced, the daemon would look again 10 minutes after the upload began waiting (--replica-poll 3600).
      const res = await Promise.race([answer, sleep(50_000).then(() => Promise.reject(new Error('no answer 50 s after the announcement')))]);
      expect(res.status).toBe(200);
      expect(res.body.documents[0]).toMatchObject({ id: document.id, status: 'ready', duplicate: true });
    }, 60_000);
  });
});
