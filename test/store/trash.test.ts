/**
 * The trash through the document lifecycle (DocumentService) on both engines, with a clock the test moves (the
 * daemon takes none from outside): a deleted document leaves search's visibility, lists and counts at once, keeps
 * its chunks and original, comes back under its id (with the attachments deleted with it), and is removed for good —
 * chunks, row and original — once its retention is over, or when purged; bytes uploaded again replace the copy in
 * the trash; a restore onto a path another document took is refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DocumentService } from '../../src/documents/lifecycle.js';
import { LocalEvents, LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import { FileStore } from '../../src/store/objects/originals.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { RecordedAudit } from '../helpers/audit.js';
import { removeDir } from '../helpers/daemon.js';
import { sqlitePlans } from '../helpers/query-plans.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const DAY = 24 * 3600_000;
const sha = (n: number) => n.toString(16).padStart(64, '0');

describeEachEngine('the trash', (suite) => {
  let t = Date.UTC(2031, 0, 1);
  const now = () => t;
  let dir: string;
  let store: VectorStore;
  let chunks: ChunkIndex;
  let files: FileStore;
  let documents: DocumentStore;
  let projects: ProjectStore;
  let service: DocumentService;
  let user: string;
  let project: string;
  let made = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-trash-'));
    const db = suite.handle().db;
    documents = new DocumentStore(db, new JobStore(db, now), now);
    projects = new ProjectStore(db, now);
    user = (await new UserStore(db, now).create(`trash-${suite.engine}@example.com`, 'h'))!.id;
    project = (await projects.create(user, { name: 'P' }))!.id;
    store = await VectorStore.open(join(dir, 'lancedb'));
    chunks = await ChunkIndex.open(store, { embedderId: 'test' });
    files = new FileStore(new LocalObjectStore(join(dir, 'files')), join(dir, 'tmp'));
    await files.init();
    service = new DocumentService({ documents, projects, files, chunks, locks: new LocalLocks(), events: new LocalEvents(), now, audit: new RecordedAudit(), trashRetentionMs: 30 * DAY });
  });

  afterAll(async () => {
    store?.close();
    removeDir(dir);
  });

  /** A ready document with one chunk and an original, as the worker leaves one. */
  async function ready(opts: { path?: string; attachedTo?: string; bytes?: number } = {}) {
    const n = opts.bytes ?? ++made;
    const tmp = files.tempFile().path;
    writeFileSync(tmp, `bytes ${n}`);
    const [accepted] = opts.attachedTo
      ? [await documents.createQueued({ userId: user, projectId: project, filename: `a${n}.txt`, contentType: 'text/plain', sizeBytes: 7, sha256: sha(n), metadata: {}, attachedTo: opts.attachedTo })]
      : await service.accept(user, project, [{ tempPath: tmp, filename: `d${n}.txt`, contentType: 'text/plain', sizeBytes: 7, sha256: sha(n), path: opts.path ?? null }], {});
    const document = accepted!.document;
    if (opts.attachedTo) await files.place(tmp, sha(n));
    await chunks.add(
      [{ id: `${document.id}:0`, user_id: user, project_id: project, document_id: document.id, chunk_index: 0, text: `text ${n}`, search_text: `text ${n}`, heading: null, page_start: null, page_end: null, ocr: false, placement: '{}', vector: Float32Array.from([1, 0, 0, n]) }],
      { id: 'test', dimension: 4 },
    );
    await suite.handle().db.updateTable('documents').set({ status: 'ready', ready_at: t - 1, chunk_count: 1 }).where('id', '=', document.id).execute();
    return document!;
  }

  const visible = async (id: string) => (await documents.visibleAmong([project], [id], t + 1)).has(id);
  const listed = async (id: string) => (await documents.list([project], {}, 100)).documents.some((d) => d.id === id);

  it('takes a deleted document out of search, lists and counts at once, keeping its chunks and original; a restore brings it back under its id', async () => {
    const doc = await ready();
    const before = (await projects.get(project))!.documentCount;
    expect(await service.delete(doc, user)).toBe(true);
    expect(await visible(doc.id)).toBe(false);
    expect(await listed(doc.id)).toBe(false);
    expect(await documents.get(doc.id)).toBeNull();
    expect((await projects.get(project))!.documentCount).toBe(before - 1);
    expect(await chunks.count(doc.id)).toBe(1);
    expect(await files.stat(doc.sha256)).not.toBeNull();
    const [entry] = (await documents.listTrash([project], 10)).documents.filter((d) => d.id === doc.id);
    expect(entry).toMatchObject({ trashedAt: t, trashedBy: user });
    expect(service.purgeAt(entry!)).toBe(t + 30 * DAY);
    expect(await service.delete(doc, user)).toBe(false); // in the trash already

    const restored = await service.restore(doc);
    expect(restored.id).toBe(doc.id);
    expect(await visible(doc.id)).toBe(true);
    expect(await listed(doc.id)).toBe(true);
    expect((await projects.get(project))!.documentCount).toBe(before);
    await expect(service.restore(doc)).rejects.toMatchObject({ status: 404 });
  });

  it("reads a project's trash; on SQLite through the trash index, not through all its documents (every search asks)", async () => {
    const kept = await ready();
    const gone = await ready();
    expect(await service.delete(gone, user)).toBe(true);
    const db = suite.handle().db;
    let trashed: { documentIds: string[] } = { documentIds: [] };
    const plans = await sqlitePlans(db, async (watched) => (trashed = await new DocumentStore(watched, new JobStore(watched, now), now).trashedIn([project])));
    expect(trashed.documentIds).toContain(gone.id);
    expect(trashed.documentIds).not.toContain(kept.id);
    // SQLite took the project's index (documents_project_counts) over the trash's; PostgreSQL weighs both by its
    // statistics.
    if (plans) expect(plans).toEqual([[expect.stringMatching(/USING INDEX documents_trash\b/)]]);
  });

  it("takes a message's attachments with it and brings back only those that went with it", async () => {
    const message = await ready();
    const withIt = await ready({ attachedTo: message.id });
    const before = await ready({ attachedTo: message.id });
    t += 1000;
    await service.delete(before, user);
    t += 1000;
    await service.delete(message, user);
    expect(await visible(withIt.id)).toBe(false);
    // The trash lists the message, not the attachment that went with it; the one deleted first is an entry of its own.
    const ids = (await documents.listTrash([project], 100)).documents.map((d) => d.id);
    expect(ids).toContain(message.id);
    expect(ids).toContain(before.id);
    expect(ids).not.toContain(withIt.id);
    await service.restore(message);
    expect(await visible(withIt.id)).toBe(true);
    expect(await visible(before.id)).toBe(false);
  });

  it('removes what has been in the trash longer than its retention for good, on the clock it is given', async () => {
    // What earlier tests left in the trash goes first, so the count below is this test's own.
    t += 31 * DAY;
    await service.purgeExpiredTrash();
    const old = await ready();
    const shared = await ready({ bytes: 900 });
    await service.delete(old, user);
    await service.delete(shared, user);
    t += 29 * DAY;
    const young = await ready();
    await service.delete(young, user);
    expect(await service.purgeExpiredTrash()).toBe(0);
    t += 1 * DAY + 1;
    expect(await service.purgeExpiredTrash()).toBe(2);
    for (const gone of [old, shared]) {
      expect(await documents.trashed(gone.id)).toBeNull();
      expect(await chunks.count(gone.id)).toBe(0);
      expect(await files.stat(gone.sha256)).toBeNull();
    }
    expect(await documents.trashed(young.id)).not.toBeNull();
    expect(await chunks.count(young.id)).toBe(1);
  });

  it('purges one entry now, and replaces the copy in the trash when the same bytes are uploaded again', async () => {
    const doc = await ready();
    await service.delete(doc, user);
    expect(await service.purge(doc)).toBe(true);
    expect(await chunks.count(doc.id)).toBe(0);
    expect(await service.purge(doc)).toBe(false);

    const again = await ready({ bytes: 700 });
    await service.delete(again, user);
    const tmp = files.tempFile().path;
    writeFileSync(tmp, 'bytes 700');
    const [upload] = await service.accept(user, project, [{ tempPath: tmp, filename: 'again.txt', contentType: 'text/plain', sizeBytes: 9, sha256: sha(700) }], {});
    expect(upload!.duplicate).toBe(false);
    expect(upload!.document.id).not.toBe(again.id);
    expect(await documents.trashed(again.id)).toBeNull();
    expect(await files.stat(sha(700))).not.toBeNull();
  });

  it('refuses a restore onto a path another document took since', async () => {
    const first = await ready({ path: 'handbook/leave.pdf' });
    await service.delete(first, user);
    const second = await ready({ path: 'handbook/leave.pdf' });
    await expect(service.restore(first)).rejects.toMatchObject({ status: 409, message: expect.stringContaining(second.filename) });
    await service.delete(second, user);
    expect((await service.restore(first)).id).toBe(first.id);
  });

  it('keeps nothing when the trash keeps no days: a delete is final', async () => {
    const final = new DocumentService({ documents, projects, files, chunks, locks: new LocalLocks(), events: new LocalEvents(), now, audit: new RecordedAudit(), trashRetentionMs: 0 });
    const doc = await ready();
    expect(await final.delete(doc, user)).toBe(true);
    expect(await documents.trashed(doc.id)).toBeNull();
    expect(await chunks.count(doc.id)).toBe(0);
  });
});
