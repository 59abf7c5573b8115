import { expect, it } from 'vitest';
import { DocumentStore, type NewDocument } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { sqlitePlans } from '../helpers/query-plans.js';
import { type EngineSuite, describeEachEngine } from '../helpers/store-dialects.js';

let t = Date.UTC(2030, 0, 1);
const now = () => ++t;

async function newUser(suite: EngineSuite, email: string): Promise<string> {
  return (await new UserStore(suite.handle().db, now).create(email, 'h'))!.id;
}

describeEachEngine('projects', (suite) => {
  it('creates, lists with live counts, renames, refuses a taken name (ASCII case ignored) and deletes', async () => {
    const { db } = suite.handle();
    const userId = await newUser(suite, 'projects@example.com');
    const projects = new ProjectStore(db, now);
    const documents = new DocumentStore(db, new JobStore(db, now), now);
    const def = await projects.ensureDefault(userId);
    expect(def).toMatchObject({ name: 'default', isDefault: true, documentCount: 0, chunkCount: 0, sizeBytes: 0 });
    expect((await projects.ensureDefault(userId)).id).toBe(def.id);
    const notes = await projects.create(userId, { name: 'Notes', description: 'n', metadata: { team: 'a' } });
    expect(notes).toMatchObject({ name: 'Notes', description: 'n', metadata: { team: 'a' }, isDefault: false });
    expect(await projects.create(userId, { name: 'NOTES' })).toBeNull();
    expect((await projects.create(userId, { name: 'Ärger' }))?.name).toBe('Ärger');
    expect(await projects.create(userId, { name: 'ärger' })).not.toBeNull(); // only A–Z fold

    // Byte counts beyond 32 bits (a 5 GB file) and chunk sums come back as numbers.
    const big: NewDocument = { userId, projectId: notes!.id, filename: 'big.pdf', contentType: 'application/pdf', sizeBytes: 5_000_000_000, sha256: 'a'.repeat(64), metadata: {} };
    await documents.createQueued(big);
    await documents.createQueued({ ...big, filename: 'small.txt', sizeBytes: 10, sha256: 'b'.repeat(64) });
    const mine = (await projects.ownedBy(userId)).map((p) => p.id);
    const listed = await projects.listAmong(mine, 10);
    expect(listed.hasMore).toBe(false);
    expect(listed.projects.find((p) => p.id === notes!.id)).toMatchObject({ documentCount: 2, sizeBytes: 5_000_000_010, chunkCount: 0 });
    const page = await projects.listAmong(mine, 2);
    expect(page.hasMore).toBe(true);
    expect((await projects.listAmong(mine, 10, page.projects[1]!.id)).projects).toHaveLength(2);
    expect((await projects.listAmong([notes!.id], 10)).projects.map((p) => p.id)).toEqual([notes!.id]);
    expect(await projects.names([notes!.id, def.id])).toEqual(expect.arrayContaining([{ id: notes!.id, name: 'Notes' }, { id: def.id, name: 'default' }]));

    expect(await projects.update(notes!.id, { name: 'Default' })).toBe('conflict');
    expect(await projects.update(notes!.id, { name: 'Journal', metadata: { team: 'b' } })).toMatchObject({ name: 'Journal', metadata: { team: 'b' } });
    expect(await projects.update('prj_missing', { name: 'x' })).toBeNull();
    expect(await projects.delete(notes!.id)).toBe(true);
    expect(await projects.get(notes!.id)).toBeNull();
    expect(await documents.countBySha('a'.repeat(64))).toBe(0); // documents went with it
  });

  it("counts a project's documents; on SQLite from the index of those outside the trash, not from each document's row", async () => {
    const { db } = suite.handle();
    const userId = await newUser(suite, 'project-counts@example.com');
    const project = (await new ProjectStore(db, now).create(userId, { name: 'Counted' }))!;
    let listed: Awaited<ReturnType<ProjectStore['listAmong']>> | undefined;
    const plans = await sqlitePlans(db, async (watched) => (listed = await new ProjectStore(watched, now).listAmong([project.id], 10)));
    expect(listed!.projects).toMatchObject([{ id: project.id, documentCount: 0 }]);
    // Each count, chunks and bytes read documents_live_counts alone (at 100,000 documents: 37 ms, 580 through the
    // project index); PostgreSQL plans by its statistics.
    if (plans) {
      const counts = plans.flat().filter((line) => /SEARCH d /.test(line));
      expect(counts).toEqual(Array(3).fill(expect.stringMatching(/USING (COVERING )?INDEX documents_live_counts\b/)));
    }
  });

  it("names a user's own default project (made when missing), and hands a project to another owner of record", async () => {
    const { db } = suite.handle();
    const projects = new ProjectStore(db, now);
    const alice = await newUser(suite, 'resolve-a@example.com');
    const bob = await newUser(suite, 'resolve-b@example.com');
    const defaultId = await projects.defaultId(alice);
    expect(defaultId).toBe((await projects.ensureDefault(alice)).id);
    const notes = (await projects.create(alice, { name: 'notes' }))!;
    await projects.create(bob, { name: 'NOTES' });
    expect(await projects.setOwner(notes.id, bob, alice)).toBe('conflict'); // bob has a "notes" of his own
    expect(await projects.setOwner(defaultId, bob, alice)).toBe(true);
    expect(await projects.get(defaultId)).toMatchObject({ userId: bob, isDefault: false }); // bob keeps his own default
    expect((await projects.ownedBy(alice)).map((p) => p.id)).toEqual([notes.id]);
  });

  it('adopts a project the user named "default" (any ASCII case) as the default one', async () => {
    const userId = await newUser(suite, 'named-default@example.com');
    const projects = new ProjectStore(suite.handle().db, now);
    const own = await projects.create(userId, { name: 'DEFAULT' });
    const def = await projects.ensureDefault(userId);
    expect(def.id).toBe(own!.id);
    expect(def.isDefault).toBe(true);
  });
});

/** A user with a default project, and the job and document stores on the suite's database. */
async function owner(suite: EngineSuite, email: string) {
  const { db } = suite.handle();
  const userId = await newUser(suite, email);
  const project = await new ProjectStore(db, now).ensureDefault(userId);
  const jobs = new JobStore(db, now);
  return { userId, project, jobs, documents: new DocumentStore(db, jobs, now) };
}

describeEachEngine('documents', (suite) => {
  const input = (userId: string, projectId: string, sha: string, path: string | null = null): NewDocument => ({
    userId,
    projectId,
    filename: `${sha.slice(0, 4)}.txt`,
    contentType: 'text/plain',
    sizeBytes: 100,
    sha256: sha.padEnd(64, '0'),
    metadata: { source: 'test' },
    path,
  });

  it('queues a document with its job, answers the same bytes as a duplicate, and records the outcome with the job', async () => {
    const { userId, project, jobs, documents } = await owner(suite, 'docs@example.com');
    const first = await documents.createQueued(input(userId, project.id, 'aa'));
    expect(first).toMatchObject({ duplicate: false, document: { status: 'queued', metadata: { source: 'test' }, warnings: [] } });
    const again = await documents.createQueued(input(userId, project.id, 'aa'));
    expect(again).toEqual({ duplicate: true, document: first.document });
    expect(await jobs.countOpen()).toBe(1);

    const job = (await jobs.claim('worker-1', 60_000))!;
    expect(job).toMatchObject({ documentId: first.document.id, owner: 'worker-1', attempts: 1 });
    await documents.markProcessing(job.documentId);
    expect(await documents.setProgress(job.documentId, 0.5)).toBe(true);
    expect((await documents.get(job.documentId))?.progress).toBe(0.5);
    expect(await documents.markReady(job.documentId, job, { chunkCount: 7, pages: 2, warnings: ['w'], embedderId: 'builtin' })).toBe(true);
    const ready = await documents.get(job.documentId);
    expect(ready).toMatchObject({ status: 'ready', progress: 1, chunkCount: 7, pages: 2, warnings: ['w'], embedderId: 'builtin' });
    expect(ready!.readyAt).toBeGreaterThan(0);
    expect(await jobs.countOpen()).toBe(0);
    expect((await documents.getMany([job.documentId, 'doc_missing'])).map((d) => d.id)).toEqual([job.documentId]);
    expect((await documents.list(['prj_other'], { status: 'ready' }, 10)).documents).toEqual([]);
    expect((await documents.list([project.id], { status: 'ready' }, 10)).documents.map((d) => d.id)).toEqual([job.documentId]);
    expect(await documents.allShas()).toEqual(new Set([first.document.sha256]));
    expect(await documents.delete(job.documentId)).toBe(true);
    expect(await documents.delete(job.documentId)).toBe(false);
  });

  it('makes one document of the same bytes accepted concurrently through several pools', async () => {
    const handles = [suite.handle(), await suite.another(), await suite.another()];
    const userId = await newUser(suite, 'dup-race@example.com');
    const project = await new ProjectStore(handles[0]!.db, now).ensureDefault(userId);
    const stores = handles.map((h) => new DocumentStore(h.db, new JobStore(h.db, now), now));
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => stores[i % 3]!.createQueued(input(userId, project.id, 'race'))));
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.document.id)).size).toBe(1);
    const jobs = await handles[0]!.db.selectFrom('jobs').select('id').where('document_id', '=', results[0]!.document.id).execute();
    expect(jobs).toHaveLength(1);
    expect(await stores[1]!.delete(results[0]!.document.id)).toBe(true); // the suite's queue is empty again
  });

  it('hides an older version at the same path when the newer one becomes ready, then lists it for removal', async () => {
    const { userId, project, jobs, documents } = await owner(suite, 'paths@example.com');
    const old = (await documents.createQueued(input(userId, project.id, 'v1', 'notes/a.txt'))).document;
    await documents.markReady(old.id, (await jobs.claim('w', 60_000))!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' });
    const newer = (await documents.createQueued(input(userId, project.id, 'v2', 'notes/a.txt'))).document;
    expect((await documents.list([project.id], { path: 'notes/a.txt' }, 10)).documents.map((d) => d.id)).toEqual([old.id, newer.id]);
    const swapAt = t;
    await documents.markReady(newer.id, (await jobs.claim('w', 60_000))!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' });
    expect((await documents.list([project.id], { path: 'notes/a.txt' }, 10)).documents.map((d) => d.id)).toEqual([newer.id]);
    expect(await documents.get(old.id)).toMatchObject({ replacedBy: newer.id });
    expect(await documents.listReplaced(swapAt)).toEqual([]);
    expect(await documents.listReplaced(t + 1)).toEqual([old.id]);

    // What a search begun at each moment shows: exactly one version on either side of the swap; a swap in the
    // search's own millisecond counts as after it.
    const swap = (await documents.get(newer.id))!.readyAt!;
    const visible = async (asOf: number) => [...(await documents.visibleAmong([project.id], [old.id, newer.id], asOf))];
    expect(await visible(swap - 1)).toEqual([old.id]);
    expect(await visible(swap)).toEqual([old.id]);
    expect(await visible(swap + 1)).toEqual([newer.id]);
    expect(await visible(swap + 60_000)).toEqual([newer.id]);
    expect(await documents.visibleAmong(['prj_other'], [old.id, newer.id], swap + 1)).toEqual(new Set());
  });

  it('shows a search only documents ready before it began: not one still processing, ready later, or another user\'s', async () => {
    const { userId, project, jobs, documents } = await owner(suite, 'visible@example.com');
    const ready = (await documents.createQueued(input(userId, project.id, 'vis1'))).document;
    await documents.markReady(ready.id, (await jobs.claim('w', 60_000))!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' });
    const readyAt = (await documents.get(ready.id))!.readyAt!;
    const processing = (await documents.createQueued(input(userId, project.id, 'vis2'))).document;
    await documents.markProcessing(processing.id);
    const failed = (await documents.createQueued(input(userId, project.id, 'vis3'))).document;
    await suite.handle().db.updateTable('documents').set({ status: 'failed' }).where('id', '=', failed.id).execute();
    const ids = [ready.id, processing.id, failed.id, 'doc_missing'];
    expect(await documents.visibleAmong([project.id], ids, readyAt + 1)).toEqual(new Set([ready.id]));
    expect(await documents.visibleAmong([project.id], ids, readyAt)).toEqual(new Set());
    expect(await documents.visibleAmong([project.id], [], readyAt + 1)).toEqual(new Set());
    // Ready before ready_at was recorded (null): shown.
    await suite.handle().db.updateTable('documents').set({ ready_at: null }).where('id', '=', ready.id).execute();
    expect(await documents.visibleAmong([project.id], ids, 0)).toEqual(new Set([ready.id]));
    expect(await documents.visibleAmong(['prj_other'], ids, readyAt + 1)).toEqual(new Set());
    expect(await documents.searchFields([project.id], [ready.id, 'doc_missing'])).toEqual([{ id: ready.id, filename: 'vis1.txt', contentType: 'text/plain', path: null }]);
    expect(await documents.searchFields(['prj_other'], [ready.id])).toEqual([]);
    expect(await documents.existing([ready.id, processing.id, 'doc_missing'])).toEqual(new Set([ready.id, processing.id]));
    expect(await documents.existing([])).toEqual(new Set());
    for (const id of [processing.id, failed.id]) await documents.delete(id); // their open jobs too: later tests claim
  });

  it('hides nothing when the newer document has no path; a document deleted while being processed is not made ready', async () => {
    const { userId, project, jobs, documents } = await owner(suite, 'no-path@example.com');
    const first = (await documents.createQueued(input(userId, project.id, 'p1'))).document;
    await documents.markReady(first.id, (await jobs.claim('w', 60_000))!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' });
    const second = (await documents.createQueued(input(userId, project.id, 'p2'))).document;
    await documents.markReady(second.id, (await jobs.claim('w', 60_000))!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' });
    expect((await documents.list([project.id], { status: 'ready' }, 10)).documents.map((d) => d.id).sort()).toEqual([first.id, second.id].sort());

    const gone = (await documents.createQueued(input(userId, project.id, 'p3'))).document;
    const job = (await jobs.claim('w', 60_000))!;
    expect(await documents.markProcessing(gone.id)).toMatchObject({ id: gone.id, status: 'processing', progress: 0 });
    expect(await documents.delete(gone.id)).toBe(true);
    expect(await documents.markProcessing(gone.id)).toBeNull();
    expect(await documents.markReady(gone.id, job, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' })).toBe(false);
    expect(await jobs.countOpen()).toBe(0);
  });

  it('requeues a transient failure for later and fails a permanent one, each with its job', async () => {
    const { userId, project, jobs, documents } = await owner(suite, 'outcomes@example.com');
    const doc = (await documents.createQueued(input(userId, project.id, 'retry'))).document;
    const job = (await jobs.claim('w', 60_000))!;
    await documents.markProcessing(doc.id);
    const retryAt = t + 60_000;
    await documents.requeue(doc.id, job, 'model server down', retryAt);
    expect(await documents.get(doc.id)).toMatchObject({ status: 'queued' });
    expect(await jobs.claim('w', 60_000)).toBeNull();
    expect(await jobs.nextRunAt()).toBe(retryAt);
    t = retryAt;
    const retried = (await jobs.claim('w', 60_000))!;
    expect(retried).toMatchObject({ id: job.id, attempts: 2, lastError: 'model server down' });
    await documents.markFailed(doc.id, retried, 'not a PDF after all', ['w']);
    expect(await documents.get(doc.id)).toMatchObject({ status: 'failed', error: 'not a PDF after all', warnings: ['w'], chunkCount: 0 });
    expect(await jobs.countOpen()).toBe(0);
  });
});
