/**
 * The lost-update audit's leftovers (lost-updates.test.ts has the first ten): identity links, a project's paths on
 * move and restore, members' grants, labels put on documents while deleted or while their document moves. The races
 * one daemon has with itself (two requests at once) run on both engines. Those between replicas run on PostgreSQL
 * only, the other replica's change held in an open transaction until the write under test waits on it (whileHeld):
 * on SQLite one daemon serves a data directory through one connection, where a transaction never interleaves.
 */
import { mkdtempSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderAccounts } from '../../src/access/provider-accounts.js';
import type { ExternalIdentity } from '../../src/auth/sso/identity.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { LabelService } from '../../src/documents/labels.js';
import { DocumentService } from '../../src/documents/lifecycle.js';
import { LocalEvents, LocalLocks } from '../../src/store/coordination.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import { FileStore } from '../../src/store/objects/originals.js';
import type { Db } from '../../src/store/sql/database.js';
import { type DocumentRecord, DocumentStore } from '../../src/store/sql/documents.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { IdentityStore, openNewAccountStores } from '../../src/store/sql/identities.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { SavedSearchStore } from '../../src/store/sql/saved-searches.js';
import { LabelStore } from '../../src/store/sql/labels.js';
import { migrate } from '../../src/store/sql/migrations/index.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { ProjectMemberStore } from '../../src/store/sql/project-members.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { openSqlite } from '../../src/store/sql/sqlite.js';
import { UserStore } from '../../src/store/sql/users.js';
import { RecordedAudit } from '../helpers/audit.js';
import { removeDir } from '../helpers/daemon.js';
import { postgresBlock, whileHeld } from '../helpers/held-transaction.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { describeEachEngine, newPostgresDatabase } from '../helpers/store-dialects.js';

const SKIP = postgresUnavailable();
const ISSUER = 'https://sso.example.org/realms/acme';
const LINKED_ALREADY = 'Your account is linked to another Acme SSO account already.';

let t = Date.UTC(2030, 0, 1);
const now = () => ++t;

const person = (subject: string): ExternalIdentity => ({ provider: ISSUER, subject, email: `${subject}@example.org`, emailVerified: true, groups: [] });

function providerAccounts(db: Db) {
  const stores = { ...openNewAccountStores(db, now), groups: new GroupStore(db, now) };
  return new ProviderAccounts({ ...stores, warn: () => undefined, audit: new RecordedAudit() }, { source: 'Acme SSO', allowedDomains: [], requiredGroup: null, adminGroup: null, linkAccounts: false });
}

async function linksOf(db: Db, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('identities').select('subject').where('user_id', '=', userId).orderBy('subject').execute();
  return rows.map((r) => r.subject);
}

/** A new account and two projects of theirs. */
async function owner(db: Db, tag: string): Promise<{ userId: string; from: string; to: string }> {
  const userId = (await new UserStore(db, now).create(`${tag}@example.com`, 'h'))!.id;
  const projects = new ProjectStore(db, now);
  return { userId, from: (await projects.create(userId, { name: `${tag} from` }))!.id, to: (await projects.create(userId, { name: `${tag} to` }))!.id };
}

/** A settled (failed) document in a project: one a move takes. */
async function settled(db: Db, userId: string, projectId: string, name: string, path: string | null = null): Promise<DocumentRecord> {
  const jobs = new JobStore(db, now);
  const documents = new DocumentStore(db, jobs, now);
  const { document } = await documents.createQueued({ userId, projectId, filename: `${name}.txt`, contentType: 'text/plain', sizeBytes: 1, sha256: sha256Hex(name), metadata: {}, path });
  const job = (await jobs.claim('worker', 60_000))!;
  expect(job.documentId).toBe(document.id);
  await documents.markFailed(document.id, job, 'unreadable');
  return (await documents.get(document.id))!;
}

/** The names of a document's labels, and the projects those labels are of. */
async function labelsOf(db: Db, documentId: string): Promise<{ names: string[]; projects: string[] }> {
  const labels = (await new LabelStore(db, now).ofDocuments([documentId])).get(documentId) ?? [];
  return { names: labels.map((l) => l.name), projects: [...new Set(labels.map((l) => l.projectId))] };
}

// The chunk index and originals the document and label services write besides the database (no document here has any).
let dir: string;
let vectors: VectorStore;
let chunks: ChunkIndex;
let files: FileStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'docsearch-lost-updates-'));
  vectors = await VectorStore.open(join(dir, 'lancedb'));
  chunks = await ChunkIndex.open(vectors, { embedderId: 'test' });
  files = new FileStore(new LocalObjectStore(join(dir, 'files')), join(dir, 'tmp'));
  await files.init();
});
afterAll(() => {
  vectors?.close();
  removeDir(dir);
});

/** The label and document services on `db`, as the daemon wires them (the documents' chunks through `chunkIndex`). */
function services(db: Db, chunkIndex: ChunkIndex = chunks) {
  const locks = new LocalLocks();
  const audit = new RecordedAudit();
  const labels = new LabelService({ labels: new LabelStore(db, now), savedSearches: new SavedSearchStore(db, now), chunks, locks, audit });
  const documents = new DocumentService({ documents: new DocumentStore(db, new JobStore(db, now), now), projects: new ProjectStore(db, now), files, chunks: chunkIndex, locks, events: new LocalEvents(), now, audit: new RecordedAudit(), labels });
  return { labels, documents, audit };
}

describeEachEngine('more changes one daemon makes at once', ({ engine, handle }) => {

  it('an account linked to two subjects of one provider at once: one link, the other refused as one request is', async () => {
    const db = handle().db;
    const user = (await new UserStore(db, now).create('two-links@example.com', 'h'))!;
    const accounts = providerAccounts(db);
    const outcomes = await Promise.all([accounts.linkSignedIn(user, person('tab-one')), accounts.linkSignedIn(user, person('tab-two'))]);
    expect(outcomes).toContainEqual({ ok: true, already: false });
    expect(outcomes).toContainEqual({ ok: false, message: LINKED_ALREADY });
    expect(await linksOf(db, user.id)).toHaveLength(1);
  });

  it('one subject linked to two accounts at once: one link (the provider and subject index of 017)', async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const [a, b] = [(await users.create('subject-a@example.com', 'h'))!, (await users.create('subject-b@example.com', 'h'))!];
    const accounts = providerAccounts(db);
    const outcomes = await Promise.all([accounts.linkSignedIn(a, person('shared')), accounts.linkSignedIn(b, person('shared'))]);
    expect(outcomes).toContainEqual({ ok: true, already: false });
    expect(outcomes).toContainEqual({ ok: false, message: 'That Acme SSO account is linked to another account here: it was not linked to yours.' });
    expect([...(await linksOf(db, a.id)), ...(await linksOf(db, b.id))]).toEqual(['shared']);
  });

  it('a member given a role twice at once: one grant made, the other an update (or no change)', async () => {
    const db = handle().db;
    const { userId, from } = await owner(db, 'members');
    const members = new ProjectMemberStore(db, now);
    const [m1, m2] = [(await new UserStore(db, now).create('member-1@example.com', 'h'))!.id, (await new UserStore(db, now).create('member-2@example.com', 'h'))!.id];
    const roles = await Promise.all([members.upsert(from, { id: m1, kind: 'user' }, 'viewer', userId), members.upsert(from, { id: m1, kind: 'user' }, 'editor', userId)]);
    expect([...roles].sort()).toEqual(['created', 'updated']);
    const same = await Promise.all([members.upsert(from, { id: m2, kind: 'user' }, 'viewer', userId), members.upsert(from, { id: m2, kind: 'user' }, 'viewer', userId)]);
    expect([...same].sort()).toEqual(['created', 'unchanged']);
    expect((await members.list(from)).map((m) => m.memberId)).toEqual([m1, m2]);
  });

  it('a label deleted between a change looking it up and putting it on a document: put on nothing, no error', async () => {
    const db = handle().db;
    const { userId, from } = await owner(db, 'deleted-label');
    const doc = await settled(db, userId, from, 'deleted-label');
    const labels = new LabelStore(db, now);
    // LabelService.change's steps, with the other request's delete between them.
    const [red] = await labels.ensure(from, ['red']);
    const [blue] = await labels.ensure(from, ['blue']);
    expect(await labels.delete(red!.id)).toEqual([]);
    await labels.add([doc.id], [red!.id, blue!.id]);
    expect(await labels.idsOf(doc.id)).toEqual([blue!.id]);
    await labels.set(doc.id, [red!.id]);
    expect(await labels.idsOf(doc.id)).toEqual([]);
  });

  it('labels of the project a document left, added or set by requests that read it there: not put on it', async () => {
    const db = handle().db;
    const { userId, from, to } = await owner(db, 'left-behind');
    const doc = await settled(db, userId, from, 'left-behind');
    const { labels, documents, audit } = services(db);
    await labels.change([doc], { add: ['red'] });
    await documents.move(doc, to);
    // The other requests read the document before the move, in the project it left.
    await labels.change([doc], { add: ['blue'] });
    expect(await labelsOf(db, doc.id)).toEqual({ names: ['red'], projects: [to] });
    await labels.change([doc], { set: ['blue'] });
    expect(await labelsOf(db, doc.id)).toEqual({ names: ['red'], projects: [to] });
    await labels.change([doc], { remove: ['red'] });
    expect(await labelsOf(db, doc.id)).toEqual({ names: ['red'], projects: [to] });
    // The audit log says what was done: the first add, not the three changes that did nothing.
    expect(audit.events.filter((e) => e.type === 'document.labelled').map((e) => e.details)).toEqual([{ added: ['red'] }]);
  });

  it('a label of its new project put on a document while the move carries its labels over: both kept', async () => {
    const db = handle().db;
    const { userId, from, to } = await owner(db, 'carried');
    const doc = await settled(db, userId, from, 'carried');
    const { labels } = services(db);
    await labels.change([doc], { add: ['red'] });
    const store = new LabelStore(db, now);
    const [green] = await store.ensure(to, ['green']);
    // DocumentService.move's steps: the row moved, then its labels carried over, while a request that read it in
    // its new project adds one there.
    expect(await new DocumentStore(db, new JobStore(db, now), now).move(doc.id, to)).toMatchObject({ outcome: 'moved' });
    await Promise.all([labels.carryOver(doc.id, to), store.add([doc.id], [green!.id])]);
    expect(await labelsOf(db, doc.id)).toEqual({ names: ['green', 'red'], projects: [to] });
  });

  it("a label put on a document while its chunks move to its new project: the chunks carry it too", async () => {
    const db = handle().db;
    const { userId, from, to } = await owner(db, 'chunks-moving');
    const doc = await settled(db, userId, from, 'chunks-moving');
    await chunks.add(
      [{ id: `${doc.id}:0`, user_id: userId, project_id: from, document_id: doc.id, chunk_index: 0, text: 'moving', search_text: 'moving', heading: null, page_start: null, page_end: null, ocr: false, placement: '{}', vector: Float32Array.from([1, 0, 0, 0]) }],
      { id: 'test', dimension: 4 },
    );
    // Just before the move writes the chunks, a request that read the document in its new project adds a label
    // there; its own chunk write runs at once (before: then the move's write put back the labels it had read) or waits
    // for the move's (given a second to run at once, it did not).
    let racing: Promise<void> | undefined;
    const moving = new Proxy(chunks, {
      get(target, prop) {
        if (prop === 'moveDocument')
          return async (...args: Parameters<ChunkIndex['moveDocument']>) => {
            racing = labels.change([{ ...doc, projectId: to }], { add: ['green'] });
            await Promise.race([racing, sleep(1000)]);
            return target.moveDocument(...args);
          };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { labels, documents } = services(db, moving);
    await labels.change([doc], { add: ['red'] });
    await documents.move(doc, to);
    await racing;
    const inDb = (await new LabelStore(db, now).ofDocuments([doc.id])).get(doc.id) ?? [];
    expect(inDb.map((l) => l.name).sort()).toEqual(['green', 'red']);
    const [row] = await chunks.rowsWhere(`document_id = '${doc.id}'`, ['project_id', 'labels'], 10);
    expect(row?.project_id).toBe(to);
    expect(Array.from(row?.labels as Iterable<string>).sort()).toEqual(inDb.map((l) => l.id).sort());
  });

  it('an upgrade of a library where an account was linked twice at one provider keeps the link last signed in with', async () => {
    // The library as 029 left it: an account's links at one provider were not unique.
    const old =
      engine === 'postgresql'
        ? await openPostgres(await newPostgresDatabase(), undefined, { migrate: false })
        : await openSqlite(join(dir, 'linked-twice.db'), { migrate: false });
    try {
      await migrate(old.db, '029-project-counts');
      const users = new UserStore(old.db, now);
      const user = (await users.create('linked-twice@example.com', 'h'))!;
      const other = (await users.create('linked-once@example.com', 'h'))!;
      const row = (id: string, userId: string, subject: string, signedIn: number) => ({ id, user_id: userId, provider: ISSUER, subject, created_at: 1, last_sign_in_at: signedIn });
      await old.db
        .insertInto('identities')
        .values([row('idn_0', user.id, 'first', 1), row('idn_1', user.id, 'old', 5), row('idn_2', user.id, 'used', 9), row('idn_3', user.id, 'tie', 9), row('idn_4', other.id, 'only', 1)])
        .execute();
      await migrate(old.db);
      // The one signed in with last; of two, the newer id.
      expect(await linksOf(old.db, user.id)).toEqual(['tie']);
      expect(await linksOf(old.db, other.id)).toEqual(['only']);
      expect(await new IdentityStore(old.db, now).link(other.id, ISSUER, 'another')).toBe(false);
    } finally {
      await old.close();
    }
  });
});

describe.skipIf(SKIP !== null)(`more writes and another replica's change committed meanwhile, on PostgreSQL${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let url: string;
  let db: Db;
  postgresBlock((handle, at) => {
    url = at;
    db = handle.db;
  });

  const documents = () => new DocumentStore(db, new JobStore(db, now), now);

  it('an account linked on two replicas at once to two subjects of one provider: the second is refused', async () => {
    const user = (await new UserStore(db, now).create('replica-links@example.com', 'h'))!;
    const other: [string, unknown[]][] = [['insert into identities (id, user_id, provider, subject, created_at, last_sign_in_at) values ($1, $2, $3, $4, $5, $5)', ['idn_other', user.id, ISSUER, 'other-tab', now()]]];
    expect(await whileHeld(url, db, other, () => providerAccounts(db).linkSignedIn(user, person('this-tab')))).toEqual({ ok: false, message: LINKED_ALREADY });
    expect(await linksOf(db, user.id)).toEqual(['other-tab']);
  });

  it('two documents at one path moved into one project on two replicas at once: the second is refused', async () => {
    const { userId, from, to } = await owner(db, 'path-moves');
    const mine = await settled(db, userId, from, 'path-mine', 'notes/a.txt');
    const theirs = await settled(db, userId, from, 'path-theirs', 'notes/a.txt');
    // The other replica's move of its document: the project it goes to locked, then the row moved.
    const other: [string, unknown[]][] = [
      ['select id from projects where id = $1 for no key update', [to]],
      ['update documents set project_id = $1 where id = $2', [to, theirs.id]],
    ];
    expect(await whileHeld(url, db, other, () => documents().move(mine.id, to))).toEqual({ outcome: 'same_path', other: 'path-theirs.txt', inTrash: false });
    expect((await documents().list([to], { path: 'notes/a.txt' }, 10)).documents.map((d) => d.id)).toEqual([theirs.id]);
  });

  it("a document restored while another replica moves one to its path: refused", async () => {
    const { userId, from, to } = await owner(db, 'path-restore');
    const trashed = await settled(db, userId, to, 'restore-mine', 'notes/b.txt');
    expect(await documents().trash(trashed.id, userId)).toBe(true);
    const theirs = await settled(db, userId, from, 'restore-theirs', 'notes/b.txt');
    const other: [string, unknown[]][] = [
      ['select id from projects where id = $1 for no key update', [to]],
      ['update documents set project_id = $1 where id = $2', [to, theirs.id]],
    ];
    expect(await whileHeld(url, db, other, () => documents().restore(trashed.id))).toEqual({ outcome: 'same_path', other: 'restore-theirs.txt' });
    expect(await documents().trashed(trashed.id)).not.toBeNull();
  });

  it('a document moved while another replica uploads the same bytes into that project: refused as the same content', async () => {
    const { userId, from, to } = await owner(db, 'same-bytes');
    const mine = await settled(db, userId, from, 'same-bytes');
    // The other replica's upload: a row of the same bytes in the project the document goes to.
    const other: [string, unknown[]][] = [
      [
        "insert into documents select * from jsonb_populate_record(null::documents, (select to_jsonb(d) || jsonb_build_object('id', $2::text, 'project_id', $3::text, 'filename', 'uploaded.txt') from documents d where id = $1))",
        [mine.id, 'doc_uploaded_meanwhile', to],
      ],
    ];
    expect(await whileHeld(url, db, other, () => documents().move(mine.id, to))).toEqual({ outcome: 'same_content', other: 'uploaded.txt', inTrash: false });
    expect(await documents().get(mine.id)).toMatchObject({ projectId: from });
  });

  it('a member given a role on two replicas at once: the second is an update', async () => {
    const { userId, from } = await owner(db, 'replica-member');
    const member = (await new UserStore(db, now).create('replica-member-m@example.com', 'h'))!.id;
    const other: [string, unknown[]][] = [
      [
        "insert into project_members (id, project_id, member_id, member_kind, role, created_by, created_at, updated_at) values ($1, $2, $3, 'user', 'viewer', $4, $5, $5)",
        [`${from}:${member}`, from, member, userId, now()],
      ],
    ];
    expect(await whileHeld(url, db, other, () => new ProjectMemberStore(db, now).upsert(from, { id: member, kind: 'user' }, 'editor', userId))).toBe('updated');
    expect((await new ProjectMemberStore(db, now).list(from)).map((m) => [m.memberId, m.role])).toEqual([[member, 'editor']]);
  });

  it('a label put on a document while another replica deletes it: put on nothing, no error', async () => {
    const { userId, from } = await owner(db, 'replica-label-delete');
    const doc = await settled(db, userId, from, 'replica-label-delete');
    const labels = new LabelStore(db, now);
    const [red] = await labels.ensure(from, ['red']);
    await whileHeld(url, db, [['delete from labels where id = $1', [red!.id]]], () => labels.add([doc.id], [red!.id]));
    expect(await labels.idsOf(doc.id)).toEqual([]);
  });

  it("a moved document's labels carried over while another replica puts one of its new project on it: both kept", async () => {
    const { userId, from, to } = await owner(db, 'replica-carry');
    const doc = await settled(db, userId, from, 'replica-carry');
    const store = new LabelStore(db, now);
    const [red] = await store.ensure(from, ['red']);
    const [green] = await store.ensure(to, ['green']);
    await store.add([doc.id], [red!.id]);
    expect(await documents().move(doc.id, to)).toMatchObject({ outcome: 'moved' });
    // The other replica's LabelStore.add(document, [green]), on the document in its new project.
    const other: [string, unknown[]][] = [
      ['select id from documents where id = $1 for share', [doc.id]],
      ['insert into document_labels (id, document_id, label_id, created_at) values ($1, $2, $3, $4)', [`${doc.id}:${green!.id}`, doc.id, green!.id, now()]],
    ];
    await whileHeld(url, db, other, () => services(db).labels.carryOver(doc.id, to));
    expect(await labelsOf(db, doc.id)).toEqual({ names: ['green', 'red'], projects: [to] });
  });
});
