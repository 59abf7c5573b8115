import { type QueryCreator, sql, type Transaction } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DocumentFilters } from '../../core/filters.js';
import { newId } from '../../core/ids.js';
import { spellings } from '../../core/name-spellings.js';
import { storableText } from '../../core/storable-text.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import { matchesFilters, writeMetadataRows } from './document-filters.js';
import type { JobLease, JobStore } from './jobs.js';
import { claimQuota, type QuotaTerms, type QuotaWording, UPLOAD_WORDING } from './quotas.js';
import type { Database } from './schema.js';

/** The documents table: one row per uploaded file in a project. Only this module writes it. */
export type DocumentStatus = Database['documents']['status'];

export const DOCUMENT_STATUSES = ['queued', 'processing', 'ready', 'failed'] as const satisfies readonly DocumentStatus[];

export interface DocumentRecord {
  id: string;
  userId: string;
  projectId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  metadata: Record<string, unknown>;
  status: DocumentStatus;
  progress: number;
  chunkCount: number;
  pages: number | null;
  warnings: string[];
  error: string | null;
  embedderId: string | null;
  /** The relative path it was uploaded from (`upload --sync`), or null. */
  path: string | null;
  /** The newer document at the same path that replaced it (hidden from search and lists until removed), and when. */
  replacedBy: string | null;
  replacedAt: number | null;
  /** When it last became ready; null if never (or before this was recorded). */
  readyAt: number | null;
  /** The e-mail this document came attached to (a document of its own, deleted with the message), or null. */
  attachedTo: string | null;
  /** The source that keeps it current and its path there, or null (an upload). */
  sourceId: string | null;
  sourcePath: string | null;
  /** When it went to the trash (null: it is not in the trash), and who deleted it (a user id, null when unknown). */
  trashedAt: number | null;
  trashedBy: string | null;
  /** The language most of its chunks are in (ISO 639-1), once ready; null before, or when none could be told. */
  language: string | null;
  /** The language its upload, source or project set it to (its chunks are analysed in it), or null: detected. */
  languageSetting: string | null;
  /** The OCR languages its upload or project set ("deu+eng"), or null: the operator's `--ocr-languages`. */
  ocrLanguages: string | null;
  createdAt: number;
  updatedAt: number;
}

export type SearchDocumentFields = Pick<DocumentRecord, 'id' | 'filename' | 'contentType' | 'path'>;

export type NewDocument = Pick<DocumentRecord, 'userId' | 'projectId' | 'filename' | 'contentType' | 'sizeBytes' | 'sha256' | 'metadata'> & {
  path?: string | null;
  attachedTo?: string | null;
  sourceId?: string | null;
  sourcePath?: string | null;
  languageSetting?: string | null;
  ocrLanguages?: string | null;
};

/** New bytes for a document that keeps its id (a source's item changed): see DocumentStore.replaceContent. */
/** A document's metadata, as JSON, at most: an upload's form field's size (64 KiB). */
export const MAX_METADATA_CHARS = 64 * 1024;

export type NewContent = Pick<DocumentRecord, 'filename' | 'contentType' | 'sizeBytes' | 'sha256' | 'metadata' | 'sourcePath'>;

export type ReplaceOutcome =
  | { outcome: 'replaced'; document: DocumentRecord; previousSha256: string }
  | { outcome: 'gone' | 'busy' }
  | { outcome: 'same_content'; other: string };

type Row = Database['documents'];

/** A document's language when none of its chunks' could be told (BCP 47's "undetermined"). */
export const UNDETERMINED = 'und';

/** What a document waiting for its (first or next) ingest holds: no result of an earlier run. */
const QUEUED = { status: 'queued', progress: 0, chunk_count: 0, pages: null, warnings: '[]', error: null } as const;

/** List order: by upload time (the id's time part), name (case-insensitive) or size; `-` for descending. */
export const DOCUMENT_SORTS = ['uploaded', '-uploaded', 'name', '-name', 'size', '-size'] as const;
export type DocumentSort = (typeof DOCUMENT_SORTS)[number];

const SORTS: Record<DocumentSort, { column: 'uploaded' | 'name' | 'size'; desc: boolean }> = {
  uploaded: { column: 'uploaded', desc: false },
  '-uploaded': { column: 'uploaded', desc: true },
  name: { column: 'name', desc: false },
  '-name': { column: 'name', desc: true },
  size: { column: 'size', desc: false },
  '-size': { column: 'size', desc: true },
};

export interface DocumentFilter {
  projectId?: string;
  status?: DocumentStatus;
  /** Exactly this upload path. */
  path?: string;
  /** Part of the filename, any case. */
  filename?: string;
  /** Any of these contents (hex SHA-256). */
  sha256?: string[];
  /** The filter language's fields (core/filters.ts): type, upload time, path prefix, uploader, source, labels, metadata. */
  narrow?: DocumentFilters;
}

/** Where a page of a sorted list ended: the last id, and its sort value unless the order is by upload time. */
export interface DocumentPosition {
  id: string;
  key?: string | number;
}

export type MoveOutcome =
  | { outcome: 'moved'; document: DocumentRecord; from: string }
  | { outcome: 'not_found' | 'busy' }
  | { outcome: 'same_content' | 'same_path'; other: string; inTrash: boolean };

/** `same_path`: `other` holds the path of the document, or of `attachment`, one of the attachments that would come back with it. */
export type RestoreOutcome = { outcome: 'restored'; document: DocumentRecord } | { outcome: 'not_found' } | { outcome: 'same_path'; other: string; attachment?: string };

const MOVE_WORDING: QuotaWording = { adds: 'the moved document', kept: 'it stays where it was' };
const RESTORE_WORDING: QuotaWording = { adds: 'what the restore brings back', kept: 'it stays in the trash' };
const REPLACE_WORDING: QuotaWording = { adds: 'the new version adds', kept: 'the document keeps its old version' };

/** Where a page of the trash ended: the last entry's time in the trash and id (newest first). */
export interface TrashPosition {
  trashedAt: number;
  id: string;
}


const toRecord = (r: Row): DocumentRecord => ({
  id: r.id,
  userId: r.user_id,
  projectId: r.project_id,
  filename: r.filename,
  contentType: r.content_type,
  sizeBytes: r.size_bytes,
  sha256: r.sha256,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  status: r.status,
  progress: r.progress,
  chunkCount: r.chunk_count,
  pages: r.pages,
  warnings: JSON.parse(r.warnings) as string[],
  error: r.error,
  embedderId: r.embedder_id,
  path: r.path,
  replacedBy: r.replaced_by,
  replacedAt: r.replaced_at,
  readyAt: r.ready_at,
  attachedTo: r.attached_to,
  sourceId: r.source_id,
  sourcePath: r.source_path,
  trashedAt: r.trashed_at,
  trashedBy: r.trashed_by,
  language: r.language ?? null,
  languageSetting: r.language_setting ?? null,
  ocrLanguages: r.ocr_languages ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * The replacement swap of `upload --sync`: in the transaction (or statement) that marks `id` ready, older documents
 * at the same (project, path) are marked replaced, which hides them from search and lists at once. Search never sees
 * both versions (a document is searchable only when ready and not replaced) nor neither (the old one stays until
 * then). One UPDATE on either engine: a document without a path compares with NULL and hides nothing.
 */
function hideReplaced(db: QueryCreator<Database>, id: string, now: number) {
  const ofDocument = (column: 'project_id' | 'path') => db.selectFrom('documents as d').select(`d.${column}`).where('d.id', '=', id);
  // A version in the trash stays there for its retention (it is no longer at the path: the new one is).
  return db
    .updateTable('documents')
    .set({ replaced_by: id, replaced_at: now })
    .where((eb) => eb.and([eb('project_id', '=', ofDocument('project_id')), eb('path', '=', ofDocument('path'))]))
    .where('id', '<', id)
    .where('replaced_by', 'is', null)
    .where('trashed_at', 'is', null);
}

export class DocumentStore {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobStore,
    private readonly now: Clock,
  ) {}

  /**
   * Inserts a queued document and its ingest job in one transaction, so an accepted upload is never lost.
   * Returns the existing document instead (`duplicate: true`) when the project already holds these bytes (in its
   * trash too: DocumentService.accept removes that copy first); the
   * insert itself decides (the unique index on project and hash), so two processes accepting the same bytes at
   * once make one document, and the other gets it as the duplicate. With `quota`, new bytes must fit the quotas
   * (claimQuota: `quota.bytes` is this file's and those of the rest of its upload), decided in the transaction
   * that inserts them; a duplicate adds nothing and fits.
   */
  async createQueued(input: NewDocument, quota?: QuotaTerms & { bytes: number }): Promise<{ document: DocumentRecord; duplicate: boolean }> {
    const now = this.now();
    const row: Row = {
      id: newId('doc', now),
      user_id: input.userId,
      project_id: input.projectId,
      filename: input.filename,
      content_type: input.contentType,
      size_bytes: input.sizeBytes,
      sha256: input.sha256,
      metadata: JSON.stringify(input.metadata),
      ...QUEUED,
      embedder_id: null,
      path: input.path ?? null,
      replaced_by: null,
      replaced_at: null,
      ready_at: null,
      attached_to: input.attachedTo ?? null,
      source_id: input.sourceId ?? null,
      source_path: input.sourcePath ?? null,
      trashed_at: null,
      trashed_by: null,
      language: null,
      language_setting: input.languageSetting ?? null,
      ocr_languages: input.ocrLanguages ?? null,
      created_at: now,
      updated_at: now,
    };
    const existing = (db: Db | Transaction<Database>) =>
      db.selectFrom('documents').selectAll().where('project_id', '=', input.projectId).where('sha256', '=', input.sha256).executeTakeFirstOrThrow();
    if (dialectOf(this.db).writesInWith && !quota) {
      // One statement on PostgreSQL: the document, its job and the owner's turn, or nothing when the bytes are there.
      const inserted = await this.jobs
        .queueWith(this.db.with('queued', (db) => db.insertInto('documents').values(row).onConflict((oc) => oc.columns(['project_id', 'sha256']).doNothing()).returning(['id', 'user_id'])))
        .selectFrom('queued')
        .select('id')
        .executeTakeFirst();
      if (!inserted) return { document: toRecord(await existing(this.db)), duplicate: true };
      // A statement of its own (the insert above may have made nothing); the ingest's markReady writes them again.
      await writeMetadataRows(this.db, row.id, input.metadata, true);
      return { document: toRecord(row), duplicate: false };
    }
    return this.db.transaction().execute(async (trx) => {
      if (quota) {
        const had = await trx.selectFrom('documents').selectAll().where('project_id', '=', input.projectId).where('sha256', '=', input.sha256).executeTakeFirst();
        if (had) return { document: toRecord(had), duplicate: true };
        await claimQuota(trx, [{ userId: input.userId, projectId: input.projectId, bytes: quota.bytes }], quota.defaultUserBytes, UPLOAD_WORDING);
      }
      const inserted = await trx
        .insertInto('documents')
        .values(row)
        .onConflict((oc) => oc.columns(['project_id', 'sha256']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return { document: toRecord(await existing(trx)), duplicate: true };
      await this.jobs.insert(trx, row.id, input.userId);
      await writeMetadataRows(trx, row.id, input.metadata, true);
      return { document: toRecord(row), duplicate: false };
    });
  }

  /** A document by id, whoever may read it (access/ decides that from its project); one in the trash is absent. */
  async get(id: string): Promise<DocumentRecord | null> {
    const row = await this.db.selectFrom('documents').selectAll().where('id', '=', id).where('trashed_at', 'is', null).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** A document in the trash by id, or null. */
  async trashed(id: string): Promise<DocumentRecord | null> {
    const row = await this.db.selectFrom('documents').selectAll().where('id', '=', id).where('trashed_at', 'is not', null).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** A document by id whether in the trash or not (for removing it for good). */
  private async any(id: string): Promise<DocumentRecord | null> {
    const row = await this.db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Documents by id (absent ones, and those in the trash, left out), whoever may read them: access/ decides that from their projects. */
  async getMany(ids: string[]): Promise<DocumentRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('documents').selectAll().where(dialectOf(this.db).inValues('id', ids)).where('trashed_at', 'is', null).execute();
    return rows.map(toRecord);
  }

  /** Documents by id, in the trash or not (absent ones are left out): what their chunks carry of them. */
  async anyMany(ids: readonly string[]): Promise<DocumentRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('documents').selectAll().where(dialectOf(this.db).inValues('id', [...ids])).execute();
    return rows.map(toRecord);
  }

  /** What removing a document for good needs of it: its row as it is, in the trash or not. */
  forRemoval(id: string): Promise<DocumentRecord | null> {
    return this.any(id);
  }

  /**
   * Which of `ids` a search that began at `asOf` (epoch ms) shows: the user's documents that were ready before then
   * and not yet replaced by a newer version at their path. Chunks of a document still being written never show.
   * When a new version becomes ready, the old one is replaced in the same transaction at the same instant, so each
   * search sees exactly one of them: a search begun before the swap keeps the old one (its chunks are kept for a
   * grace period), one begun after sees the new one (its chunks were durable before it became ready). Strict `<`: a
   * swap in the search's own millisecond counts as after it. A document ready before `ready_at` was recorded
   * (null) shows. The check runs in the database and answers ids only: a search asks it of 300–1,200 candidates,
   * and reading their rows for a check in JavaScript took twice as long (bench/results/search.md).
   */
  async visibleAmong(projectIds: readonly string[], ids: string[], asOf: number): Promise<Set<string>> {
    if (ids.length === 0 || projectIds.length === 0) return new Set();
    const dialect = dialectOf(this.db);
    // The scope check kept out of index choice: SQLite would otherwise pick a (project_id, …) index, which scans
    // every document of the projects instead of ids.length key lookups.
    const rows = await this.db
      .selectFrom('documents')
      .select('id')
      .where(dialect.inValues('id', ids))
      .where(dialect.withoutIndex('project_id'), 'in', projectIds)
      .where('status', '=', 'ready')
      .where('trashed_at', 'is', null)
      .where((eb) => eb.or([eb('ready_at', 'is', null), eb('ready_at', '<', asOf)]))
      .where((eb) => eb.or([eb('replaced_at', 'is', null), eb('replaced_at', '>=', asOf)]))
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The trashed documents of these projects and how many chunks they hold: a search keeps them out of its candidate
   * lists inside the chunk index (ChunkSearchScope.exclude), so their chunks take no place there. Every search asks,
   * so it reads the trash index (documents_trash): an empty trash is one probe. Left to itself, SQLite took the
   * project index and walked all the project's documents (70 ms a search at 100,000 documents).
   */
  async trashedIn(projectIds: readonly string[]): Promise<{ documentIds: string[]; rows: number }> {
    if (projectIds.length === 0) return { documentIds: [], rows: 0 };
    const rows = await this.db
      .selectFrom('documents')
      .select(['id', 'chunk_count'])
      .where('trashed_at', 'is not', null)
      .where(dialectOf(this.db).withoutIndex('project_id'), 'in', projectIds)
      .execute();
    return { documentIds: rows.map((r) => r.id), rows: rows.reduce((n, r) => n + r.chunk_count, 0) };
  }

  /** Ready documents whose language was never recorded (made ready by a release before 019). */
  async readyWithoutLanguage(): Promise<string[]> {
    const rows = await this.db.selectFrom('documents').select('id').where('status', '=', 'ready').where('language', 'is', null).execute();
    return rows.map((r) => r.id);
  }

  /**
   * Records documents' languages (`UNDETERMINED` where none could be told), leaving those recorded meanwhile; with
   * `replace`, those of ready documents whatever they were (their chunks were analysed again).
   */
  async setLanguages(languages: ReadonlyMap<string, string>, opts: { replace?: boolean } = {}): Promise<void> {
    for (const [id, language] of languages) {
      const row = this.db.updateTable('documents').set({ language }).where('id', '=', id);
      await (opts.replace ? row.where('status', '=', 'ready') : row.where('language', 'is', null)).execute();
    }
  }

  /**
   * The languages the ready documents of these projects are in, most documents first: what a short query is read as
   * (search/service.ts). A team reading thousands of projects gets one grouped count. `'all'`: the whole library
   * (health's note on the languages the model reads).
   */
  async languagesIn(projectIds: readonly string[] | 'all'): Promise<{ language: string; documents: number }[]> {
    if (projectIds !== 'all' && projectIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('documents')
      .select(['language', (eb) => eb.fn.countAll<number>().as('n')])
      .$if(projectIds !== 'all', (q) => q.where(dialectOf(this.db).inValues('project_id', projectIds as readonly string[])))
      .where('status', '=', 'ready')
      .where('trashed_at', 'is', null)
      .where('language', 'is not', null)
      .where('language', '!=', UNDETERMINED)
      .groupBy('language')
      .execute();
    return rows.map((r) => ({ language: r.language!, documents: Number(r.n) })).sort((a, b) => b.documents - a.documents || (a.language < b.language ? -1 : 1));
  }

  /** What a search result shows of each document among `ids` in these projects (others are absent). */
  async searchFields(projectIds: readonly string[], ids: string[]): Promise<SearchDocumentFields[]> {
    if (ids.length === 0 || projectIds.length === 0) return [];
    const dialect = dialectOf(this.db);
    const rows = await this.db
      .selectFrom('documents')
      .select(['id', 'filename', 'content_type', 'path'])
      .where(dialect.inValues('id', ids))
      .where(dialect.withoutIndex('project_id'), 'in', projectIds)
      .where('trashed_at', 'is', null)
      .execute();
    return rows.map((r) => ({ id: r.id, filename: r.filename, contentType: r.content_type, path: r.path }));
  }

  /**
   * A page of the documents in these projects in `sort` order (default: upload order, oldest first). `after` is where the
   * previous page ended (`next` of its answer): keyset paging, so a page costs the same at any depth and
   * documents added meanwhile are neither skipped nor repeated.
   */
  async list(
    projectIds: readonly string[],
    filter: DocumentFilter,
    limit: number,
    after?: DocumentPosition,
    sort: DocumentSort = 'uploaded',
  ): Promise<{ documents: DocumentRecord[]; hasMore: boolean; next: DocumentPosition | null }> {
    if (projectIds.length === 0) return { documents: [], hasMore: false, next: null };
    const { column, desc } = SORTS[sort];
    // Names by their code points with ASCII case folded, as SQLite does: PostgreSQL's lower() and collation would
    // fold and order accents and other scripts by the database's locale, another order than SQLite's.
    const key = column === 'name' ? sql<string | number>`lower(${dialectOf(this.db).bytewise('filename')})` : column === 'size' ? sql<string | number>`size_bytes` : null;
    const dir = desc ? 'desc' : 'asc';
    // The sort value comes back from the database, so the next page compares with exactly what it ordered by.
    let q = this.listed(projectIds, filter)
      .selectAll()
      .select((key ?? sql<string | number>`id`).as('sort_key'))
      .limit(limit + 1);
    if (key) q = q.orderBy(key, dir);
    q = q.orderBy('id', dir);
    if (after) {
      const op = desc ? '<' : '>';
      q = q.where((eb) =>
        key && after.key !== undefined
          ? eb.or([eb(key, op, after.key), eb.and([eb(key, '=', after.key), eb('id', op, after.id)])])
          : eb('id', op, after.id),
      );
    }
    const rows = await q.execute();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    // PostgreSQL hands bigint columns back as strings: the key keeps the type it is compared as.
    const next = rows.length > limit && last ? { id: last.id, ...(key ? { key: column === 'size' ? Number(last.sort_key) : String(last.sort_key) } : {}) } : null;
    return { documents: page.map(toRecord), hasMore: rows.length > limit, next };
  }

  /** The ids of every document of a list (all its pages, in no order): what its facets count. */
  async listIds(projectIds: readonly string[], filter: DocumentFilter): Promise<string[]> {
    if (projectIds.length === 0) return [];
    return (await this.listed(projectIds, filter).select('id').execute()).map((r) => r.id);
  }

  /** The documents a list holds, over all its pages: current ones of these projects, out of the trash, matching `filter`. */
  private listed(projectIds: readonly string[], filter: DocumentFilter) {
    let q = this.db.selectFrom('documents').where('project_id', 'in', [...projectIds]).where('replaced_by', 'is', null).where('trashed_at', 'is', null);
    if (filter.projectId) q = q.where('project_id', '=', filter.projectId);
    // Either Unicode spelling (core/name-spellings.ts): paths are kept as sent, and a Mac sends them decomposed.
    if (filter.path !== undefined) q = q.where('path', 'in', spellings(filter.path));
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.sha256) q = q.where('sha256', 'in', filter.sha256);
    if (filter.narrow) q = q.where(matchesFilters(filter.narrow, dialectOf(this.db)));
    if (filter.filename) {
      // Both sides through the same lower(): SQLite's folds ASCII only, and a JS-lowered pattern would miss "É".
      const patterns = spellings(filter.filename).map((s) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      q = q.where((eb) => eb.or(patterns.map((pattern) => sql<boolean>`lower(filename) like lower(${pattern}) escape '\\'`)));
    }
    return q;
  }

  /** How many documents each of these projects still has queued or processing (projects with none are absent). */
  async countInWork(projectIds: readonly string[]): Promise<Map<string, number>> {
    if (projectIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('documents')
      .select((eb) => ['project_id', eb.fn.countAll<number>().as('n')])
      .where('project_id', 'in', [...projectIds])
      .where('status', 'in', ['queued', 'processing'])
      .where('replaced_by', 'is', null)
      .where('trashed_at', 'is', null)
      .groupBy('project_id')
      .execute();
    return new Map(rows.map((r) => [r.project_id, Number(r.n)]));
  }

  /** Gives a document another name; null when there is no such document. */
  async rename(id: string, filename: string): Promise<DocumentRecord | null> {
    await this.db.updateTable('documents').set({ filename, updated_at: this.now() }).where('id', '=', id).execute();
    return this.get(id);
  }

  /**
   * Merges `patch` over a settled document's metadata (at most MAX_METADATA_CHARS of JSON, as an upload's field), with its metadata rows: a key given null is removed, any other
   * value replaces the key's (JSON merge patch, RFC 7396, at the top level). 'busy' while it is being indexed: the
   * worker writes the metadata it read when it started.
   */
  async mergeMetadata(
    id: string,
    patch: Record<string, unknown>,
  ): Promise<{ outcome: 'not_found' } | { outcome: 'busy' } | { outcome: 'too_large' } | { outcome: 'merged'; metadata: Record<string, unknown>; changed: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx
        .selectFrom('documents')
        .select(['metadata', 'status'])
        .where('id', '=', id)
        .where('trashed_at', 'is', null)
        .$if(dialectOf(this.db).lockRows, (q) => q.forUpdate())
        .executeTakeFirst();
      if (!doc) return { outcome: 'not_found' };
      if (doc.status === 'queued' || doc.status === 'processing') return { outcome: 'busy' };
      const old = JSON.parse(doc.metadata) as Record<string, unknown>;
      // Keys keep their places (an unchanged value is no change); fromEntries, never assignment: a key may be "__proto__".
      const metadata = Object.fromEntries([
        ...Object.entries(old)
          .filter(([k]) => !Object.hasOwn(patch, k) || patch[k] !== null)
          .map(([k, v]) => [k, Object.hasOwn(patch, k) ? patch[k] : v]),
        ...Object.entries(patch).filter(([k, v]) => v !== null && !Object.hasOwn(old, k)),
      ]) as Record<string, unknown>;
      const json = JSON.stringify(metadata);
      if (json === doc.metadata) return { outcome: 'merged', metadata, changed: false };
      if (json.length > MAX_METADATA_CHARS) return { outcome: 'too_large' };
      await trx.updateTable('documents').set({ metadata: json, updated_at: this.now() }).where('id', '=', id).execute();
      await writeMetadataRows(trx, id, metadata);
      return { outcome: 'merged', metadata, changed: true };
    });
  }

  /**
   * A source's document follows its file renamed or moved (same bytes, so nothing is indexed again): its name and
   * source path, and the source's metadata keys (a page's URL) merged over what its parse added. The metadata it has
   * then, when it changed (its chunks carry it for filters: DocumentService.follow). With `sourceId`, it goes to
   * another source listing the same bytes (the one that made it let it go).
   */
  async follow(id: string, to: { filename: string; sourcePath: string; sourceId?: string; metadata?: Record<string, unknown> }): Promise<Record<string, unknown> | null> {
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx.selectFrom('documents').select('metadata').where('id', '=', id).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!doc) return null;
      const metadata = to.metadata ? { ...(JSON.parse(doc.metadata) as Record<string, unknown>), ...to.metadata } : null;
      await trx
        .updateTable('documents')
        .set({ filename: to.filename, source_path: to.sourcePath, ...(to.sourceId ? { source_id: to.sourceId } : {}), ...(metadata ? { metadata: JSON.stringify(metadata) } : {}), updated_at: this.now() })
        .where('id', '=', id)
        .execute();
      if (metadata) await writeMetadataRows(trx, id, metadata);
      return metadata && JSON.stringify(metadata) !== doc.metadata ? metadata : null;
    });
  }

  /**
   * Moves a settled (ready or failed) document to another project, in one transaction with
   * its checks: a document being indexed stays (the worker writes its chunks under the project it read), and
   * a project holds each content, and each sync path, once. The caller moves the chunks. The row is read locked:
   * new bytes from its source (replaceContent) or a retry committed meanwhile queue it, and it is then busy; read
   * unlocked, the move went ahead on the status before, under a worker about to index it in the old project. The
   * project it goes to is locked too (lockPlaces). With `quota`, the document must fit the project's quota
   * (claimQuota); its uploader's does not change: it counts what they uploaded, wherever it went.
   */
  async move(id: string, projectId: string, quota?: QuotaTerms): Promise<MoveOutcome> {
    try {
      return await this.moveOnce(id, projectId, quota);
    } catch (err) {
      // An upload of the same bytes into the project committed between the check and the move: checked again, it clashes.
      if (!dialectOf(this.db).isUniqueViolation(err)) throw err;
      return this.moveOnce(id, projectId, quota);
    }
  }

  private async moveOnce(id: string, projectId: string, quota: QuotaTerms | undefined): Promise<MoveOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx.selectFrom('documents').selectAll().where('id', '=', id).where('trashed_at', 'is', null).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!doc) return { outcome: 'not_found' };
      if (doc.project_id === projectId) return { outcome: 'moved', document: toRecord(doc), from: projectId };
      if (doc.status === 'queued' || doc.status === 'processing') return { outcome: 'busy' };
      await this.lockPlaces(trx, projectId);
      const clash = await trx
        .selectFrom('documents')
        .select(['filename', 'sha256', 'path', 'trashed_at'])
        .where('project_id', '=', projectId)
        // The same bytes in the other project's trash, or in a version replaced there and not yet removed, clash too
        // (a project holds each content once: the unique index says so); a path only in use.
        .where((eb) =>
          doc.path === null
            ? eb('sha256', '=', doc.sha256)
            : eb.or([eb('sha256', '=', doc.sha256), eb.and([eb('path', '=', doc.path), eb('trashed_at', 'is', null), eb('replaced_by', 'is', null)])]),
        )
        .executeTakeFirst();
      if (clash) return { outcome: clash.sha256 === doc.sha256 ? 'same_content' : 'same_path', other: clash.filename, inTrash: clash.trashed_at !== null };
      if (quota) await claimQuota(trx, [{ userId: null, projectId, bytes: doc.size_bytes }], quota.defaultUserBytes, MOVE_WORDING);
      const now = this.now();
      await trx.updateTable('documents').set({ project_id: projectId, updated_at: now }).where('id', '=', id).execute();
      return { outcome: 'moved', document: toRecord({ ...doc, project_id: projectId, updated_at: now }), from: doc.project_id };
    });
  }

  /**
   * Makes moves and restores into a project wait for each other (PostgreSQL; SQLite's transactions never
   * interleave). "A project holds each path once" is checked by reading and cannot be the schema's: an upload at a
   * path is queued beside the version it replaces when ready, and a failed one stays beside it. Two moves or
   * restores reading at once both found the path free, and both took it; two moves of the same bytes failed on the
   * unique index instead of being refused. No key update: uploads into the project (a foreign key's share lock) go on.
   */
  private async lockPlaces(trx: Transaction<Database>, projectId: string): Promise<void> {
    if (dialectOf(this.db).lockRows) await trx.selectFrom('projects').select('id').where('id', '=', projectId).forNoKeyUpdate().execute();
  }

  /** Puts a moved document back where it was (its chunks could not be moved). */
  async unmove(id: string, projectId: string): Promise<void> {
    await this.db.updateTable('documents').set({ project_id: projectId, updated_at: this.now() }).where('id', '=', id).execute();
  }

  /**
   * A failed document goes back in the queue: its own job is reopened (pending, attempts from zero), so the
   * worker runs it exactly as a new upload. False when there is no such failed document.
   */
  async retry(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('documents')
        .set({ status: 'queued', progress: 0, error: null, updated_at: this.now() })
        .where('id', '=', id)
        .where('status', '=', 'failed')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      // A failed document's job failed with it (markFailed): anything else is a bug, and the transaction undoes the queueing.
      if ((await this.jobs.reopen(trx, id)) !== 1) throw new Error(`document ${id} is failed but has no failed job to reopen`);
      return true;
    });
  }

  /** How many documents of these projects (and of `documentIds`, when given; empty lists match nothing) are still queued or processing. */
  async countIndexing(projectIds: readonly string[], documentIds?: string[]): Promise<number> {
    if (projectIds.length === 0 || documentIds?.length === 0) return 0;
    let q = this.db
      .selectFrom('documents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', 'in', [...projectIds])
      .where('status', 'in', ['queued', 'processing'])
      .where('trashed_at', 'is', null);
    if (documentIds) q = q.where('id', 'in', documentIds);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }

  /** Ids and hashes of a project's documents (for removing a project's chunks and files). */
  async listInProject(projectId: string): Promise<{ id: string; sha256: string }[]> {
    return this.db.selectFrom('documents').select(['id', 'sha256']).where('project_id', '=', projectId).execute();
  }

  /** How many documents (any user, any project) reference these bytes: the file store keeps a file while > 0. */
  async countBySha(sha256: string): Promise<number> {
    const row = await this.db
      .selectFrom('documents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('sha256', '=', sha256)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Which of `ids` are documents (any user's, any status): the index's startup sweep. */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('documents').select('id').where(dialectOf(this.db).inValues('id', ids)).execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Every hash some document references, for the file store's startup sweep. */
  async allShas(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('documents').select('sha256').distinct().execute();
    return new Set(rows.map((r) => r.sha256));
  }

  /** For the worker about to run a document's job: marks it processing and returns it, or null when it was deleted. */
  async markProcessing(id: string): Promise<DocumentRecord | null> {
    const row = await this.db
      .updateTable('documents')
      .set({ status: 'processing', progress: 0, error: null, updated_at: this.now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async setProgress(id: string, progress: number): Promise<boolean> {
    const res = await this.db
      .updateTable('documents')
      .set({ progress: Math.max(0, Math.min(1, progress)), updated_at: this.now() })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * Marks a document ready and completes its job together. False when the document was deleted meanwhile;
   * LeaseLost (and nothing recorded) when another worker holds the job now. The same holds for the other
   * outcomes below: only the lease holder records one.
   */
  async markReady(
    id: string,
    job: JobLease,
    result: { chunkCount: number; pages: number | null; warnings: string[]; embedderId: string; metadata?: Record<string, unknown>; language?: string | null },
  ): Promise<boolean> {
    const now = this.now();
    const ready = {
      ...(result.metadata ? { metadata: JSON.stringify(result.metadata) } : {}),
      ...(result.language !== undefined ? { language: result.language ?? UNDETERMINED } : {}),
      status: 'ready',
      ready_at: now,
      progress: 1,
      chunk_count: result.chunkCount,
      pages: result.pages,
      warnings: JSON.stringify(result.warnings),
      error: null,
      embedder_id: result.embedderId,
      updated_at: now,
    } as const;
    if (dialectOf(this.db).writesInWith) {
      // One statement on PostgreSQL: the job done under its lease, and only then the document ready and what it replaces hidden.
      const done = await this.jobs
        .completeWith(this.db, job)
        .with('ready', (db) =>
          db
            .updateTable('documents')
            .set(ready)
            .where('id', '=', id)
            .where((eb) => eb.exists(eb.selectFrom('finished').select('finished.id')))
            .returning('id'),
        )
        // Only when `ready` updated the document: a lost lease leaves the older versions as they are.
        .with('hidden', () => hideReplaced(this.db, id, now).where(sql<boolean>`exists (select 1 from ready)`))
        .selectNoFrom((eb) => [
          eb.selectFrom('finished').select(eb.fn.countAll<number>().as('n')).as('finished'),
          eb.selectFrom('ready').select(eb.fn.countAll<number>().as('n')).as('ready'),
        ])
        .executeTakeFirstOrThrow();
      if (Number(done.finished) === 0) {
        await this.jobs.leaseLostUnlessGone(job);
        return false;
      }
      if (Number(done.ready) === 1 && result.metadata) await writeMetadataRows(this.db, id, result.metadata);
      return Number(done.ready) === 1;
    }
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.updateTable('documents').set(ready).where('id', '=', id).executeTakeFirst();
      await this.jobs.complete(job, trx);
      await hideReplaced(trx, id, now).execute();
      if (Number(res.numUpdatedRows) === 1 && result.metadata) await writeMetadataRows(trx, id, result.metadata);
      return Number(res.numUpdatedRows) === 1;
    });
  }

  /**
   * Marks a document failed (permanently) and fails its job together. The error may quote the file (a parser's
   * message): stored without NULs, which PostgreSQL refuses, so the failure is recorded on either engine.
   */
  async markFailed(id: string, job: JobLease, failure: string, warnings?: string[]): Promise<void> {
    const error = storableText(failure);
    await this.db.transaction().execute(async (trx) => {
      const set: Partial<Row> = { status: 'failed', progress: 0, chunk_count: 0, error, updated_at: this.now() };
      if (warnings) set.warnings = JSON.stringify(warnings);
      await trx.updateTable('documents').set(set).where('id', '=', id).execute();
      await this.jobs.fail(job, error, trx);
    });
  }

  /** A transient failure: the document waits in the queue again and its job runs after `runAfter`. */
  async requeue(id: string, job: JobLease, failure: string, runAfter: number): Promise<void> {
    const error = storableText(failure); // as markFailed
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('documents').set({ status: 'queued', progress: 0, updated_at: this.now() }).where('id', '=', id).execute();
      await this.jobs.retryLater(job, error, runAfter, trx);
    });
  }

  /** Puts a document being processed back in the queue, as if it had not been claimed (see JobStore.release). */
  async release(id: string, job: JobLease): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('documents').set({ status: 'queued', progress: 0, updated_at: this.now() }).where('id', '=', id).where('status', '=', 'processing').execute();
      await this.jobs.release(job, trx);
    });
  }

  /** Jobs this owner leased but no longer runs go back to the queue, uncounted, their documents with them (see JobStore). */
  async requeueIdleLeases(owner: string, running: number[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const ids = await this.jobs.releaseIdleLeases(owner, running, trx);
      if (ids.length > 0) await trx.updateTable('documents').set({ status: 'queued', progress: 0, updated_at: this.now() }).where('id', 'in', ids).execute();
      return ids.length;
    });
  }

  /** Records the embedder that produced a document's vectors (after a re-index). */
  async setEmbedderForAll(embedderId: string): Promise<void> {
    await this.db.updateTable('documents').set({ embedder_id: embedderId }).where('status', '=', 'ready').execute();
  }

  /** Documents hidden by a newer version at their path before `before`, waiting to be removed with their chunks and file. */
  async listReplaced(before: number): Promise<string[]> {
    const rows = await this.db.selectFrom('documents').select('id').where('replaced_by', 'is not', null).where('replaced_at', '<', before).execute();
    return rows.map((r) => r.id);
  }

  /** The documents that came attached to an e-mail (any status). */
  async attachmentsOf(id: string): Promise<string[]> {
    const rows = await this.db.selectFrom('documents').select('id').where('attached_to', '=', id).execute();
    return rows.map((r) => r.id);
  }

  /**
   * Links a document of the message's project to the message, at `path`: an attachment found already stored (the
   * same bytes, from a retried job or an earlier version of the message) belongs to this message from now on, so
   * removing the earlier version leaves it. A document that is no attachment (uploaded by itself) is left as it is.
   */
  async relinkAttachment(id: string, attachedTo: string, path: string | null): Promise<void> {
    await this.db
      .updateTable('documents')
      .set({ attached_to: attachedTo, path, updated_at: this.now() })
      .where('id', '=', id)
      .where('attached_to', 'is not', null)
      .execute();
  }

  /**
   * Gives a settled (ready or failed) document new bytes under the same id: the row is queued again with the new
   * name, type, size, hash and metadata, and its job run again as `released` (JobStore.rerun), so the worker's run first removes
   * the chunks of the old bytes. Search stops showing it at once (it is no longer ready) and shows the new version
   * once it is. A document being indexed is `busy` (its worker holds the job); bytes another document of the project
   * holds are `same_content` (a project holds each content once). With `quota`, what the new bytes add over the old
   * must fit the quotas (claimQuota).
   */
  async replaceContent(id: string, content: NewContent, quota?: QuotaTerms): Promise<ReplaceOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx.selectFrom('documents').selectAll().where('id', '=', id).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!doc || doc.replaced_by !== null) return { outcome: 'gone' };
      if (doc.status === 'queued' || doc.status === 'processing') return { outcome: 'busy' };
      const clash = await trx
        .selectFrom('documents')
        .select('id')
        .where('project_id', '=', doc.project_id)
        .where('sha256', '=', content.sha256)
        .where('id', '!=', id)
        .executeTakeFirst();
      if (clash) return { outcome: 'same_content', other: clash.id };
      if (quota) await claimQuota(trx, [{ userId: doc.user_id, projectId: doc.project_id, bytes: content.sizeBytes - doc.size_bytes }], quota.defaultUserBytes, REPLACE_WORDING);
      const now = this.now();
      const set = {
        filename: content.filename,
        content_type: content.contentType,
        size_bytes: content.sizeBytes,
        sha256: content.sha256,
        metadata: JSON.stringify(content.metadata),
        source_path: content.sourcePath,
        ...QUEUED,
        updated_at: now,
      } as const;
      await trx.updateTable('documents').set(set).where('id', '=', id).execute();
      await writeMetadataRows(trx, id, content.metadata);
      await this.jobs.rerun(trx, id, doc.user_id);
      return { outcome: 'replaced', document: toRecord({ ...doc, ...set }), previousSha256: doc.sha256 };
    });
  }

  /** The ids of the documents a source made (any status). */
  async ofSource(sourceId: string): Promise<{ id: string; userId: string }[]> {
    const rows = await this.db.selectFrom('documents').select(['id', 'user_id']).where('source_id', '=', sourceId).execute();
    return rows.map((r) => ({ id: r.id, userId: r.user_id }));
  }

  /** A removed source's documents stay as uploads: their source and source path are cleared. */
  async detachSource(sourceId: string): Promise<void> {
    await this.db.updateTable('documents').set({ source_id: null, source_path: null, updated_at: this.now() }).where('source_id', '=', sourceId).execute();
  }

  /**
   * Puts a document in the trash, with the attachments not already there (one instant for all, which is how a
   * restore knows them). Out of search, lists and counts at once; its chunks and original stay. False when it is
   * not there (deleted, or in the trash already).
   */
  async trash(id: string, by: string | null): Promise<boolean> {
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.updateTable('documents').set({ trashed_at: now, trashed_by: by }).where('id', '=', id).where('trashed_at', 'is', null).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
      await trx.updateTable('documents').set({ trashed_at: now, trashed_by: by }).where('attached_to', '=', id).where('trashed_at', 'is', null).execute();
      return true;
    });
  }

  /**
   * Puts the live attachments of a message in the trash into it with the message, at its instant (so they come back
   * with it): the ones its job made after it was deleted. The message row is read locked, so a delete committing
   * meanwhile either is seen here or trashes them itself.
   */
  async trashWithMessage(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const message = await trx.selectFrom('documents').select(['trashed_at', 'trashed_by']).where('id', '=', id).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!message || message.trashed_at === null) return;
      await trx.updateTable('documents').set({ trashed_at: message.trashed_at, trashed_by: message.trashed_by }).where('attached_to', '=', id).where('trashed_at', 'is', null).execute();
    });
  }

  /**
   * Takes a document out of the trash, with the attachments that went there with it: searchable again at once,
   * under the same id. Refused when another document now holds its path, or one of those attachments' paths, in its
   * project (a newer version was uploaded there since, or another restored or moved there: the projects are locked,
   * lockPlaces), and, with `quota`, when what comes back would pass a quota (claimQuota).
   */
  async restore(id: string, quota?: QuotaTerms): Promise<RestoreOutcome> {
    return this.db.transaction().execute(async (trx): Promise<RestoreOutcome> => {
      const doc = await trx.selectFrom('documents').selectAll().where('id', '=', id).where('trashed_at', 'is not', null).executeTakeFirst();
      if (!doc) return { outcome: 'not_found' };
      const attachments = await trx.selectFrom('documents').selectAll().where('attached_to', '=', id).where('trashed_at', '=', doc.trashed_at).execute();
      const back = [doc, ...attachments];
      if (quota) await claimQuota(trx, back.map((d) => ({ userId: d.user_id, projectId: d.project_id, bytes: d.size_bytes })), quota.defaultUserBytes, RESTORE_WORDING);
      const placed = back.filter((d) => d.path !== null);
      // An attachment stays in the project it was made in when its message moves: each project is locked, in id order.
      for (const projectId of [...new Set(placed.map((d) => d.project_id))].sort()) await this.lockPlaces(trx, projectId);
      for (const d of placed) {
        // Live documents only: what comes back is in the trash until this commits.
        const clash = await trx
          .selectFrom('documents')
          .select('filename')
          .where('project_id', '=', d.project_id)
          .where('path', '=', d.path)
          .where('trashed_at', 'is', null)
          .where('replaced_by', 'is', null)
          .executeTakeFirst();
        if (clash) return { outcome: 'same_path', other: clash.filename, ...(d.id === id ? {} : { attachment: d.filename }) };
      }
      await trx.updateTable('documents').set({ trashed_at: null, trashed_by: null }).where('id', '=', id).execute();
      await trx.updateTable('documents').set({ trashed_at: null, trashed_by: null }).where('attached_to', '=', id).where('trashed_at', '=', doc.trashed_at).execute();
      return { outcome: 'restored', document: toRecord({ ...doc, trashed_at: null, trashed_by: null }) };
    });
  }

  /**
   * A page of the trash of these projects, newest first: the documents deleted, without the attachments that went
   * with their message (they come back with it). `after` is where the previous page ended.
   */
  async listTrash(projectIds: readonly string[], limit: number, after?: TrashPosition): Promise<{ documents: DocumentRecord[]; next: TrashPosition | null }> {
    if (projectIds.length === 0) return { documents: [], next: null };
    let q = this.db
      .selectFrom('documents as d')
      .selectAll('d')
      .where('d.project_id', 'in', [...projectIds])
      .where('d.trashed_at', 'is not', null)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('documents as m')
              .select('m.id')
              .whereRef('m.id', '=', 'd.attached_to')
              .whereRef('m.trashed_at', '=', 'd.trashed_at'),
          ),
        ),
      )
      .orderBy('d.trashed_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit + 1);
    if (after) q = q.where((eb) => eb.or([eb('d.trashed_at', '<', after.trashedAt), eb.and([eb('d.trashed_at', '=', after.trashedAt), eb('d.id', '<', after.id)])]));
    const rows = await q.execute();
    const page = rows.slice(0, limit).map(toRecord);
    const last = page.at(-1);
    return { documents: page, next: rows.length > limit && last ? { trashedAt: last.trashedAt!, id: last.id } : null };
  }

  /**
   * The document of these bytes in the project when the project no longer holds them: in the trash, or hidden by a
   * newer version at its path (deleted for good after a grace). An upload of them is a new document, not that one.
   */
  async goneCopy(projectId: string, sha256: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('documents')
      .select('id')
      .where('project_id', '=', projectId)
      .where('sha256', '=', sha256)
      .where((eb) => eb.or([eb('trashed_at', 'is not', null), eb('replaced_by', 'is not', null)]))
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /** Which of these hashes the project holds in a live document: an upload of them is a duplicate and adds nothing. */
  async liveShas(projectId: string, sha256s: readonly string[]): Promise<Set<string>> {
    if (sha256s.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('documents')
      .select('sha256')
      .where('project_id', '=', projectId)
      .where('sha256', 'in', [...new Set(sha256s)])
      .where('trashed_at', 'is', null)
      .where('replaced_by', 'is', null)
      .execute();
    return new Set(rows.map((r) => r.sha256));
  }

  /** The document in a project's trash holding these bytes, if any (a project holds each content once, trash included). */
  async trashedCopy(projectId: string, sha256: string): Promise<string | null> {
    const row = await this.db.selectFrom('documents').select('id').where('project_id', '=', projectId).where('sha256', '=', sha256).where('trashed_at', 'is not', null).executeTakeFirst();
    return row?.id ?? null;
  }

  /** Documents in the trash since before `before` (epoch ms): their retention is over. */
  async expiredTrash(before: number, limit = 1000): Promise<string[]> {
    const rows = await this.db.selectFrom('documents').select('id').where('trashed_at', '<', before).orderBy('trashed_at').limit(limit).execute();
    return rows.map((r) => r.id);
  }

  /** Deletes the row (its job goes with it: ON DELETE CASCADE). */
  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('documents').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }
}
