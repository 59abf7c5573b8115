import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { storableText } from '../../core/storable-text.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';

/**
 * The sources and source_items tables (migration 014): sources that keep a project current, their schedule and
 * state, and what their passes saw of each item. Only this module writes them.
 */
export type SourceRow = Database['sources'];

export interface SourceRecord {
  id: string;
  projectId: string;
  userId: string;
  kind: string;
  url: string;
  everyMs: number;
  options: Record<string, unknown>;
  /** Sealed under the library's secrets key (core/sealed-secret.ts); never leaves the server. */
  sealedSecrets: string | null;
  status: 'active' | 'paused';
  pausedReason: string | null;
  confirmDeletions: boolean;
  cursor: string | null;
  pass: number;
  resumeAfter: string | null;
  nextSyncAt: number;
  requestedAt: number | null;
  syncingSince: number | null;
  syncingOn: string | null;
  lastSyncAt: number | null;
  lastResult: PassResult | null;
  error: string | null;
  failures: number;
  /** Label names it puts on every document it brings. */
  labels: string[];
  createdAt: number;
  updatedAt: number;
  /** Deletions the guard holds while passes go on (null: none). */
  heldDeletions: HeldDeletions | null;
}

/** The deletions the guard holds for an owner's confirmation (sync.ts). */
export interface HeldDeletions {
  /** Why, in words for the owner. */
  reason: string;
  /** Documents it would remove. */
  count: number;
  /** The first of them by path (sync.ts HELD_LISTED), with their document's id and name. */
  items: { path: string; documentId: string; filename: string | null }[];
}

/** What a finished pass did, item by item. */
export interface PassResult {
  listed: number;
  added: number;
  changed: number;
  deleted: number;
  unchanged: number;
  failed: number;
  /** Changed items left for the next pass: their document was still being indexed. */
  deferred: number;
  ms: number;
}

export interface SourceItem {
  path: string;
  version: string;
  sha256: string | null;
  documentId: string | null;
  error: string | null;
  seenIn: number;
}

/** Another source's item that records a document: where the document goes when its own source lets it go. */
export interface OtherItem {
  source: SourceRecord;
  path: string;
}

export type NewSource = Pick<SourceRecord, 'id' | 'projectId' | 'userId' | 'kind' | 'url' | 'everyMs' | 'options' | 'sealedSecrets'> & { labels?: string[] };

export interface SourcePatch {
  everyMs?: number;
  options?: Record<string, unknown>;
  sealedSecrets?: string | null;
  labels?: string[];
  /** Pausing, or resuming (which confirms the deletions a guard paused for, and runs a pass now). */
  status?: 'active' | 'paused';
}

/** How a pass ended, as recorded on the source. */
export interface PassEnd {
  cursor: string | null;
  result: PassResult | null;
  error: string | null;
  failures: number;
  /** A finished pass: the deletions it held (null: none, which lifts an earlier hold). Absent: as they were. */
  held?: HeldDeletions | null;
  /** Pauses the source with this reason (a quota reached: documents/quotas.ts), until its owner resumes it. */
  pausedReason?: string;
  nextSyncAt: number;
  /** The pass ran with its owner's confirmation of held deletions, which it spends (a finished pass only). */
  confirmed?: boolean;
  /** Keep the pass open: the next one continues this listing (it stopped on an error or a shutdown). */
  keepOpen?: boolean;
}

const toRecord = (r: SourceRow): SourceRecord => ({
  id: r.id,
  projectId: r.project_id,
  userId: r.user_id,
  kind: r.kind,
  url: r.url,
  everyMs: Number(r.every_ms),
  options: JSON.parse(r.options) as Record<string, unknown>,
  sealedSecrets: r.secrets,
  status: r.status,
  pausedReason: r.paused_reason,
  confirmDeletions: r.confirm_deletions === 1,
  cursor: r.cursor,
  pass: r.pass,
  resumeAfter: r.resume_after,
  nextSyncAt: Number(r.next_sync_at),
  requestedAt: r.requested_at === null ? null : Number(r.requested_at),
  syncingSince: r.syncing_since === null ? null : Number(r.syncing_since),
  syncingOn: r.syncing_on,
  lastSyncAt: r.last_sync_at === null ? null : Number(r.last_sync_at),
  lastResult: r.last_result === null ? null : (JSON.parse(r.last_result) as PassResult),
  error: r.error,
  failures: r.failures,
  labels: JSON.parse(r.labels) as string[],
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  heldDeletions: r.held_deletions === null ? null : (JSON.parse(r.held_deletions) as HeldDeletions),
});

const toItem = (r: Database['source_items']): SourceItem => ({
  path: r.path,
  version: r.version,
  sha256: r.sha256,
  documentId: r.document_id,
  error: r.error,
  seenIn: r.seen_in,
});

/** An item's key: paths hold no newline (kinds make them from file names, keys and URLs, which the engine checks). */
const itemKey = (sourceId: string, path: string) => `${sourceId}\n${path}`;

/** Paths per statement when a pass records what it saw (bound as one parameter: SqlDialect.inValues). */
const SEEN_BATCH = 1000;

export class SourceStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Whether any source holds sealed credentials (a new secrets key would make them unreadable). */
  async anySealed(): Promise<boolean> {
    return (await this.db.selectFrom('sources').select('id').where('secrets', 'is not', null).limit(1).executeTakeFirst()) !== undefined;
  }

  /** A new source, due at once. */
  async create(input: NewSource): Promise<SourceRecord> {
    const now = this.now();
    const row: SourceRow = {
      id: input.id,
      project_id: input.projectId,
      user_id: input.userId,
      kind: input.kind,
      url: input.url,
      every_ms: input.everyMs,
      options: JSON.stringify(input.options),
      secrets: input.sealedSecrets,
      status: 'active',
      paused_reason: null,
      confirm_deletions: 0,
      cursor: null,
      pass: 0,
      resume_after: null,
      next_sync_at: now,
      requested_at: now,
      syncing_since: null,
      syncing_on: null,
      last_sync_at: null,
      last_result: null,
      error: null,
      failures: 0,
      created_at: now,
      updated_at: now,
      held_deletions: null,
      labels: JSON.stringify(input.labels ?? []),
    };
    await this.db.insertInto('sources').values(row).execute();
    return toRecord(row);
  }

  /** The source when it belongs to the project; null otherwise. */
  async get(projectId: string, id: string): Promise<SourceRecord | null> {
    const row = await this.db.selectFrom('sources').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** For the scheduler, which acts for whoever owns the source. */
  async getById(id: string): Promise<SourceRecord | null> {
    const row = await this.db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every source of the library, with its project's name and owner (Admin → Sources: their state, never their documents). */
  async listAll(): Promise<(SourceRecord & { projectName: string; ownerEmail: string | null })[]> {
    const rows = await this.db
      .selectFrom('sources as s')
      .innerJoin('projects as p', 'p.id', 's.project_id')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'p.user_id').on('u.deleted_at', 'is', null))
      .selectAll('s')
      .select(['p.name as project_name', 'u.email as owner_email'])
      .orderBy(dialectOf(this.db).bytewise('p.name'))
      .orderBy('s.id')
      .execute();
    return rows.map((r) => ({ ...toRecord(r), projectName: r.project_name, ownerEmail: r.owner_email }));
  }

  async listInProject(projectId: string): Promise<SourceRecord[]> {
    const rows = await this.db.selectFrom('sources').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
    return rows.map(toRecord);
  }

  /**
   * Changes the schedule, options or credentials, pauses, or resumes. Resuming confirms the deletions a guard
   * held and makes the source due now, as new options or credentials do; a new schedule takes effect from the last
   * pass.
   */
  async update(id: string, patch: SourcePatch): Promise<SourceRecord | null> {
    const now = this.now();
    const current = await this.getById(id);
    if (!current) return null;
    // A source the guard holds deletions of is paused to its owners though its row stays active (passes go on).
    const resume = patch.status === 'active' && (current.status === 'paused' || current.heldDeletions !== null);
    await this.db
      .updateTable('sources')
      .set({
        ...(patch.everyMs !== undefined ? { every_ms: patch.everyMs, next_sync_at: Math.min(current.nextSyncAt, (current.lastSyncAt ?? now) + patch.everyMs) } : {}),
        // New globs or options take effect at once: a pass now.
        ...(patch.options !== undefined ? { options: JSON.stringify(patch.options), next_sync_at: now, requested_at: now } : {}),
        ...(patch.labels !== undefined ? { labels: JSON.stringify(patch.labels) } : {}),
        ...(patch.sealedSecrets !== undefined ? { secrets: patch.sealedSecrets, error: null, failures: 0, next_sync_at: now, requested_at: now } : {}),
        ...(patch.status === 'paused' ? { status: 'paused', paused_reason: current.pausedReason ?? 'paused by its owner' } : {}),
        ...(resume ? { status: 'active', paused_reason: null, confirm_deletions: 1, next_sync_at: now, requested_at: now } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
    return this.getById(id);
  }

  /** A pass now (or right after the one running); `confirm` resumes a paused source and lets its deletions through once. */
  async requestSync(id: string, confirm: boolean): Promise<SourceRecord | null> {
    const now = this.now();
    await this.db
      .updateTable('sources')
      .set({ next_sync_at: now, requested_at: now, updated_at: now, ...(confirm ? { status: 'active', paused_reason: null, confirm_deletions: 1 } : {}) })
      .where('id', '=', id)
      .execute();
    return this.getById(id);
  }

  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('sources').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }

  /** Active sources whose pass is due, the longest waiting first. */
  async due(limit: number): Promise<SourceRecord[]> {
    const rows = await this.db
      .selectFrom('sources')
      .selectAll()
      .where('status', '=', 'active')
      .where('next_sync_at', '<=', this.now())
      .orderBy('next_sync_at')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** When the next active source falls due; null when none is active. */
  async nextDueAt(): Promise<number | null> {
    const row = await this.db.selectFrom('sources').select((eb) => eb.fn.min<number>('next_sync_at').as('at')).where('status', '=', 'active').executeTakeFirst();
    return row?.at == null ? null : Number(row.at);
  }

  /**
   * Marks a pass begun by `owner` (who holds the source's lock): a new pass number, unless the last one stopped
   * midway with a resumable listing. Returns the source as the pass sees it, or null when it is gone or no longer
   * due (another process ran it meanwhile) or paused.
   */
  async beginPass(id: string, owner: string, resumable: boolean): Promise<SourceRecord | null> {
    const now = this.now();
    const current = await this.getById(id);
    if (!current || current.status !== 'active' || current.nextSyncAt > now) return null;
    const resume = resumable && current.resumeAfter !== null;
    await this.db
      .updateTable('sources')
      .set({ syncing_since: now, syncing_on: owner, updated_at: now, ...(resume ? {} : { pass: current.pass + 1, resume_after: null }) })
      .where('id', '=', id)
      .execute();
    return { ...current, syncingSince: now, syncingOn: owner, ...(resume ? {} : { pass: current.pass + 1, resumeAfter: null }) };
  }

  /**
   * Records how a pass ended. A request for a pass that came in while it ran (`requested_at` after `startedAt`)
   * makes the source due again at once instead of at `nextSyncAt`, a schedule shortened meanwhile counts from now,
   * and a confirmation the pass did not run with stays for the next one. Decided in the one statement, on the row as it is when written: a request another
   * replica commits while this end is recorded is not written over with what was read before it.
   */
  async endPass(id: string, startedAt: number, end: PassEnd): Promise<void> {
    const now = this.now();
    const requested = sql<boolean>`(requested_at is not null and requested_at > ${startedAt})`;
    await this.db
      .updateTable('sources')
      .set({
        cursor: end.cursor,
        syncing_since: null,
        syncing_on: null,
        // A server's own words may carry a NUL, which PostgreSQL refuses (store/sql/documents.ts markFailed).
        error: end.error === null ? null : storableText(end.error),
        failures: end.failures,
        // No later than the schedule in force: the owner may have shortened it while the pass ran (`end.nextSyncAt`
        // was reckoned from the schedule the pass began with).
        next_sync_at: sql<number>`case when ${requested} then cast(${now} as bigint) when every_ms + ${now} < ${end.nextSyncAt} then every_ms + ${now} else cast(${end.nextSyncAt} as bigint) end`,
        ...(end.keepOpen ? {} : { resume_after: null }),
        ...(end.result ? { last_result: JSON.stringify(end.result), last_sync_at: now, ...(end.confirmed ? { confirm_deletions: 0 } : {}) } : {}),
        ...(end.held !== undefined ? { held_deletions: end.held === null ? null : JSON.stringify(end.held) } : {}),
        ...(end.pausedReason ? { status: 'paused', paused_reason: end.pausedReason } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  }

  /** Every item a source has recorded, by path. */
  async items(sourceId: string): Promise<Map<string, SourceItem>> {
    const rows = await this.db.selectFrom('source_items').selectAll().where('source_id', '=', sourceId).execute();
    return new Map(rows.map((r) => [r.path, toItem(r)]));
  }

  /**
   * Another source of the project whose item records the document (its lowest source id, then path), or null: the
   * source a document two sources list goes to when the one that made it lets it go. Each source of the project is
   * looked up through source_items_document (source_id, document_id).
   */
  async otherItemOf(projectId: string, sourceId: string, documentId: string): Promise<OtherItem | null> {
    const row = await this.db
      .selectFrom('source_items')
      .innerJoin('sources', 'sources.id', 'source_items.source_id')
      .selectAll('sources')
      .select('source_items.path as item_path')
      .where('sources.project_id', '=', projectId)
      .where('sources.id', '<>', sourceId)
      .where('source_items.document_id', '=', documentId)
      .orderBy('sources.id')
      .orderBy('source_items.path')
      .limit(1)
      .executeTakeFirst();
    if (!row) return null;
    const { item_path, ...source } = row;
    return { source: toRecord(source), path: item_path };
  }

  /**
   * otherItemOf for many documents at once, in statements of SEEN_BATCH ids (a pass letting many documents go asks
   * once, not once a document): each document another source of the project lists, with the item it goes to.
   */
  async otherItemsOf(projectId: string, sourceId: string, documentIds: readonly string[]): Promise<Map<string, OtherItem>> {
    const d = dialectOf(this.db);
    const out = new Map<string, OtherItem>();
    const sources = new Map<string, SourceRecord>();
    for (let i = 0; i < documentIds.length; i += SEEN_BATCH) {
      const rows = await this.db
        .selectFrom('source_items')
        .innerJoin('sources', 'sources.id', 'source_items.source_id')
        .selectAll('sources')
        .select(['source_items.path as item_path', 'source_items.document_id as item_document'])
        .where('sources.project_id', '=', projectId)
        .where('sources.id', '<>', sourceId)
        .where(d.inValues('source_items.document_id', documentIds.slice(i, i + SEEN_BATCH)))
        .orderBy('sources.id')
        .orderBy('source_items.path')
        .execute();
      // The first row of each document is otherItemOf's (the lowest source id, then path).
      for (const { item_path, item_document, ...source } of rows) {
        if (item_document === null || out.has(item_document)) continue;
        const record = sources.get(source.id) ?? toRecord(source);
        sources.set(source.id, record);
        out.set(item_document, { source: record, path: item_path });
      }
    }
    return out;
  }

  /** Writes what a pass learnt of one item (listed in pass `seenIn`). */
  async putItem(sourceId: string, item: SourceItem): Promise<void> {
    const values = { version: item.version, sha256: item.sha256, document_id: item.documentId, error: item.error === null ? null : storableText(item.error), seen_in: item.seenIn, updated_at: this.now() };
    await this.db
      .insertInto('source_items')
      .values({ id: itemKey(sourceId, item.path), source_id: sourceId, path: item.path, ...values })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  }

  /**
   * Unchanged items a pass listed, recorded as seen in it, and how far a resumable listing got: `resumeAfter`, the
   * last path listed, where the next pass continues if this one stops.
   */
  async markSeen(sourceId: string, pass: number, paths: string[], resumeAfter: string | null): Promise<void> {
    const d = dialectOf(this.db);
    for (let i = 0; i < paths.length; i += SEEN_BATCH) {
      await this.db
        .updateTable('source_items')
        .set({ seen_in: pass })
        .where(d.inValues('id', paths.slice(i, i + SEEN_BATCH).map((p) => itemKey(sourceId, p))))
        .execute();
    }
    if (resumeAfter !== null) await this.db.updateTable('sources').set({ resume_after: resumeAfter }).where('id', '=', sourceId).execute();
  }

  async deleteItems(sourceId: string, paths: string[]): Promise<void> {
    const d = dialectOf(this.db);
    for (let i = 0; i < paths.length; i += SEEN_BATCH) {
      await this.db.deleteFrom('source_items').where(d.inValues('id', paths.slice(i, i + SEEN_BATCH).map((p) => itemKey(sourceId, p)))).execute();
    }
  }

  /** Items whose last fetch failed, with why (the most recently failed first), and how many there are. */
  async itemErrors(sourceId: string, limit: number): Promise<{ count: number; items: { path: string; error: string; at: number }[] }> {
    const base = this.db.selectFrom('source_items').where('source_id', '=', sourceId).where('error', 'is not', null);
    const [count, rows] = await Promise.all([
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      base.select(['path', 'error', 'updated_at']).orderBy('updated_at', 'desc').limit(limit).execute(),
    ]);
    return { count: Number(count.n), items: rows.map((r) => ({ path: r.path, error: r.error!, at: Number(r.updated_at) })) };
  }

  /** Sources by state, and items with an error, across the library (metrics, read at each scrape). */
  async stats(): Promise<{ states: Record<'active' | 'paused' | 'syncing' | 'error', number>; itemErrors: number }> {
    const rows = await this.db
      .selectFrom('sources')
      .select((eb) => [
        'status',
        eb.fn.countAll<number>().as('n'),
        eb.fn.count<number>('syncing_since').as('syncing'),
        eb.fn.count<number>('error').as('failing'),
        eb.fn.count<number>('held_deletions').as('held'),
      ])
      .groupBy('status')
      .execute();
    const states = { active: 0, paused: 0, syncing: 0, error: 0 };
    for (const r of rows) {
      // A source whose deletions the guard holds is paused for them, though its passes go on.
      const held = r.status === 'active' ? Number(r.held) : 0;
      states[r.status] += Number(r.n) - held;
      states.paused += held;
      states.syncing += Number(r.syncing);
      states.error += Number(r.failing);
    }
    const errors = await this.db
      .selectFrom('source_items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('error', 'is not', null)
      .executeTakeFirstOrThrow();
    return { states, itemErrors: Number(errors.n) };
  }
}
