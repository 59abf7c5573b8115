/**
 * Quotas under concurrent writes (docs/operations.md#quotas), through the document lifecycle (DocumentService, as
 * the daemon wires it with Quotas). Writes that each fit a quota alone and not together must not both pass it: in
 * one process (several uploads at once, on both engines), and across replicas of one PostgreSQL database, where the
 * other replica's write is held open in a transaction (whileHeld) as the daemon makes it: its account's and
 * project's rows locked, then its bytes written. An upload is refused whole: none of its files stays.
 */
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentService } from '../../src/documents/lifecycle.js';
import { Quotas } from '../../src/documents/quotas.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { LocalEvents, LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import { FileStore } from '../../src/store/objects/originals.js';
import { AccountOverviewStore } from '../../src/store/sql/account-overview.js';
import type { Db } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { QuotaStore } from '../../src/store/sql/quotas.js';
import { UserStore } from '../../src/store/sql/users.js';
import { RecordedAudit } from '../helpers/audit.js';
import { removeDir } from '../helpers/daemon.js';
import { postgresBlock, whileHeld } from '../helpers/held-transaction.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { unmet } from '../helpers/requirement.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const SKIP = unmet(postgresUnavailable());
let t = Date.UTC(2032, 0, 1);
const now = () => ++t;
let made = 0;

/** The lifecycle with quotas on `db`, its originals and chunks in a folder of its own. */
async function lifecycle(db: Db, dirs: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-quota-races-'));
  dirs.push(dir);
  const store = await VectorStore.open(join(dir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId: 'test' });
  const files = new FileStore(new LocalObjectStore(join(dir, 'files')), join(dir, 'tmp'));
  await files.init();
  const documents = new DocumentStore(db, new JobStore(db, now), now);
  const quotas = new Quotas({ store: new QuotaStore(db), defaultUserBytes: null });
  const service = new DocumentService({ documents, projects: new ProjectStore(db, now), files, chunks, locks: new LocalLocks(), events: new LocalEvents(), now, audit: new RecordedAudit(), quotas, trashRetentionMs: 3600_000 });
  /** Received files of these sizes, each of bytes no other file has. */
  const received = (sizes: number[]) =>
    Promise.all(
      sizes.map(async (size) => {
        const bytes = Buffer.alloc(size, `file ${++made} `);
        const tempPath = files.tempFile().path;
        await writeFile(tempPath, bytes);
        return { tempPath, filename: `f${made}.txt`, contentType: 'text/plain' as const, sizeBytes: size, sha256: sha256Hex(bytes) };
      }),
    );
  return { service, documents, received, close: () => store.close() };
}

/** A new account and its default project; `quota`: the account's (bytes), or the project's with `on: 'project'`. */
async function account(db: Db, tag: string, quota?: { bytes: number; on: 'user' | 'project' }) {
  const user = (await new UserStore(db, now).create(`${tag}-${++made}@example.com`, 'h'))!;
  const project = await new ProjectStore(db, now).ensureDefault(user.id);
  if (quota?.on === 'user') await new QuotaStore(db).setUser(user.id, quota.bytes);
  if (quota?.on === 'project') await new QuotaStore(db).setProject(project.id, quota.bytes);
  return { userId: user.id, projectId: project.id };
}

const usage = async (db: Db, by: 'user_id' | 'project_id', id: string) => (await new AccountOverviewStore(db).usageOf(by, [id])).get(id)?.bytes ?? 0;
const refused = { code: 'quota_exceeded', status: 507 };

/** Runs the uploads at once; for each, the ids it kept, or the error it was refused with. */
async function atOnce(service: DocumentService, uploads: { userId: string; projectId: string; files: Awaited<ReturnType<Awaited<ReturnType<typeof lifecycle>>['received']>> }[]) {
  const settled = await Promise.allSettled(uploads.map((u) => service.accept(u.userId, u.projectId, u.files, {})));
  return settled.map((r) => (r.status === 'fulfilled' ? { kept: r.value.map((a) => a.document.id) } : { error: r.reason as unknown }));
}

describeEachEngine('quotas under uploads at once in one process', (suite) => {
  const dirs: string[] = [];
  let life: Awaited<ReturnType<typeof lifecycle>>;
  beforeAll(async () => {
    life = await lifecycle(suite.handle().db, dirs);
  });
  afterAll(() => {
    life?.close();
    for (const dir of dirs) removeDir(dir);
  });

  it("uploads by one account at once that each fit its quota alone: one is taken, the others refused", async () => {
    const db = suite.handle().db;
    const a = await account(db, 'racer', { bytes: 100, on: 'user' });
    const outcomes = await atOnce(life.service, await Promise.all([0, 1, 2, 3].map(async () => ({ ...a, files: await life.received([60]) }))));
    expect(outcomes.filter((o) => 'kept' in o)).toHaveLength(1);
    for (const o of outcomes) if ('error' in o) expect(o.error).toMatchObject(refused);
    expect(await usage(db, 'user_id', a.userId)).toBe(60);
  });

  it("uploads by several accounts into one project at once that each fit its quota alone: one is taken", async () => {
    const db = suite.handle().db;
    const owner = await account(db, 'owner', { bytes: 100, on: 'project' });
    const others = await Promise.all([0, 1, 2].map(() => account(db, 'member')));
    const outcomes = await atOnce(life.service, await Promise.all([owner, ...others].map(async (u) => ({ userId: u.userId, projectId: owner.projectId, files: await life.received([60]) }))));
    expect(outcomes.filter((o) => 'kept' in o)).toHaveLength(1);
    for (const o of outcomes) if ('error' in o) expect(o.error).toMatchObject(refused);
    expect(await usage(db, 'project_id', owner.projectId)).toBe(60);
  });

  it('uploads of several files at once: each is taken whole or refused whole, and together they stay within the quota', async () => {
    const db = suite.handle().db;
    const a = await account(db, 'batches', { bytes: 200, on: 'user' });
    const uploads = await Promise.all([[50, 50], [70, 40], [30, 30, 30], [90]].map(async (sizes) => ({ ...a, files: await life.received(sizes) })));
    const outcomes = await atOnce(life.service, uploads);
    let kept = 0;
    for (const [i, o] of outcomes.entries()) {
      if ('error' in o) {
        expect(o.error).toMatchObject(refused);
        // Nothing of a refused upload stays (a file its write took is taken back).
        const left = await db.selectFrom('documents').select('id').where('sha256', 'in', uploads[i]!.files.map((f) => f.sha256)).execute();
        expect(left).toEqual([]);
      } else {
        expect(o.kept).toHaveLength(uploads[i]!.files.length);
        kept += uploads[i]!.files.reduce((n, f) => n + f.sizeBytes, 0);
      }
    }
    expect(outcomes.some((o) => 'kept' in o)).toBe(true);
    expect(await usage(db, 'user_id', a.userId)).toBe(kept);
    expect(kept).toBeLessThanOrEqual(200);
  });
});

/** Another replica's new document, as its upload writes it: the statement and its parameters. */
function otherUpload(db: Db, to: { userId: string; projectId: string }, bytes: number): [string, unknown[]] {
  const tag = `other-${++made}`;
  const row = {
    id: `doc_${tag}`,
    user_id: to.userId,
    project_id: to.projectId,
    filename: `${tag}.txt`,
    content_type: 'text/plain',
    size_bytes: bytes,
    sha256: sha256Hex(tag),
    metadata: '{}',
    status: 'queued' as const,
    progress: 0,
    chunk_count: 0,
    pages: null,
    warnings: '[]',
    error: null,
    embedder_id: null,
    path: null,
    replaced_by: null,
    replaced_at: null,
    ready_at: null,
    attached_to: null,
    source_id: null,
    source_path: null,
    trashed_at: null,
    trashed_by: null,
    language: null,
    language_setting: null,
    ocr_languages: null,
    created_at: t,
    updated_at: t,
  };
  const q = db.insertInto('documents').values(row).compile();
  return [q.sql, [...q.parameters]];
}

const lockUser = (userId: string): [string, unknown[]] => ['select id from users where id = $1 for no key update', [userId]];
const lockProject = (projectId: string): [string, unknown[]] => ['select id from projects where id = $1 for no key update', [projectId]];

describe.skipIf(SKIP !== null)(`quotas and another replica's write committed meanwhile, on PostgreSQL${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let url: string;
  let db: Db;
  const dirs: string[] = [];
  let life: Awaited<ReturnType<typeof lifecycle>>;
  postgresBlock((handle, at) => {
    url = at;
    db = handle.db;
  });
  beforeAll(async () => {
    life = await lifecycle(db, dirs);
  });
  afterAll(() => {
    life?.close();
    for (const dir of dirs) removeDir(dir);
  });

  it("an upload while another replica's upload by the same account fills its quota: refused", async () => {
    const a = await account(db, 'replicas', { bytes: 100, on: 'user' });
    const files = await life.received([60]);
    const other = [lockUser(a.userId), otherUpload(db, a, 60)];
    await expect(whileHeld(url, db, other, () => life.service.accept(a.userId, a.projectId, files, {}))).rejects.toMatchObject(refused);
    expect(await usage(db, 'user_id', a.userId)).toBe(60);
  });

  it("an upload into a project while another replica's upload by someone else fills the project's quota: refused", async () => {
    const owner = await account(db, 'shared-owner', { bytes: 100, on: 'project' });
    const member = await account(db, 'shared-member');
    const files = await life.received([60]);
    const other = [lockProject(owner.projectId), otherUpload(db, { userId: member.userId, projectId: owner.projectId }, 60)];
    await expect(whileHeld(url, db, other, () => life.service.accept(owner.userId, owner.projectId, files, {}))).rejects.toMatchObject(refused);
    expect(await usage(db, 'project_id', owner.projectId)).toBe(60);
  });

  it("a restore from the trash while another replica's upload fills the quota: refused, it stays in the trash", async () => {
    const a = await account(db, 'restorer', { bytes: 100, on: 'user' });
    const [doc] = await life.service.accept(a.userId, a.projectId, await life.received([60]), {});
    await life.service.delete(doc!.document, a.userId);
    const other = [lockUser(a.userId), otherUpload(db, a, 60)];
    await expect(whileHeld(url, db, other, () => life.service.restore(doc!.document))).rejects.toMatchObject(refused);
    expect(await life.documents.trashed(doc!.document.id)).not.toBeNull();
    expect(await usage(db, 'user_id', a.userId)).toBe(60);
  });

  it("a move into a project while another replica's upload fills the project's quota: refused, it stays where it was", async () => {
    const owner = await account(db, 'move-target', { bytes: 100, on: 'project' });
    const mover = await account(db, 'mover');
    const [doc] = await life.service.accept(mover.userId, mover.projectId, await life.received([60]), {});
    await db.updateTable('documents').set({ status: 'ready' }).where('id', '=', doc!.document.id).execute();
    const other = [lockProject(owner.projectId), otherUpload(db, { userId: owner.userId, projectId: owner.projectId }, 60)];
    await expect(whileHeld(url, db, other, () => life.service.move(doc!.document, owner.projectId))).rejects.toMatchObject(refused);
    expect(await life.documents.get(doc!.document.id)).toMatchObject({ projectId: mover.projectId });
    expect(await usage(db, 'project_id', owner.projectId)).toBe(60);
  });
});
