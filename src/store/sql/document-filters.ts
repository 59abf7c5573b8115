/**
 * Filters (core/filters.ts) as SQL over the documents table, for lists and their counts: each field a predicate in
 * the list's own query (never rows read and dropped), names resolved by joins — an uploader by e-mail, a label by
 * name in the document's own project, metadata through `document_metadata`. Also the documents' metadata rows
 * themselves (written here, in the statements that change a document's metadata) and the lookups search needs to
 * turn names into the chunk columns' values (search/filters.ts).
 */
import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import { canonicalValue, type DocumentFilters, type MetadataCondition } from '../../core/filters.js';
import { metadataEntries } from '../../core/metadata-entries.js';
import { spellings } from '../../core/name-spellings.js';
import { dialectOf, equalsName, type SqlDialect } from './dialect.js';
import type { Database } from './schema.js';

type DocumentsEb = ExpressionBuilder<Database, 'documents'>;

/** `<document_id>:<n>` rows of a document's metadata (core/metadata-entries.ts). */
export function metadataRows(documentId: string, metadata: Record<string, unknown>) {
  return metadataEntries(metadata).map((e, i) => ({ id: `${documentId}:${i}`, document_id: documentId, ...e }));
}

/**
 * A document's metadata rows become those of `metadata` (inside the caller's transaction, where it has one). `fresh`:
 * the document was just made, so it has none to delete (a statement less per upload).
 */
export async function writeMetadataRows(db: Kysely<Database>, documentId: string, metadata: Record<string, unknown>, fresh = false): Promise<void> {
  if (!fresh) await db.deleteFrom('document_metadata').where('document_id', '=', documentId).execute();
  const rows = metadataRows(documentId, metadata);
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('document_metadata').values(rows.slice(i, i + 500)).execute();
}

/**
 * A path prefix compared exactly (LIKE folds case on SQLite, and would read `_` and `%` as wildcards), in either
 * Unicode spelling (core/name-spellings.ts): paths are kept as sent, and a Mac sends them decomposed.
 */
const startsWith = (column: string, prefix: string) =>
  sql<SqlBool>`(${sql.join(
    spellings(prefix).map((p) => sql`substr(${sql.ref(column)}, 1, ${[...p].length}) = ${p}`),
    sql` or `,
  )})`;

function metadataCondition(eb: DocumentsEb, c: MetadataCondition): Expression<SqlBool> {
  const rows = eb.selectFrom('document_metadata as m').select('m.id').whereRef('m.document_id', '=', 'documents.id').where('m.key', 'in', spellings(c.key));
  if (c.op === 'exists') return c.exists ? eb.exists(rows) : eb.not(eb.exists(rows));
  if (c.op === 'in') return eb.exists(rows.where('m.value', 'in', c.values.map(canonicalValue)));
  const column = c.kind === 'number' ? 'm.number' : 'm.moment';
  let q = rows.where(column, 'is not', null);
  if (c.gt !== undefined) q = q.where(column, '>', c.gt);
  if (c.gte !== undefined) q = q.where(column, '>=', c.gte);
  if (c.lt !== undefined) q = q.where(column, '<', c.lt);
  if (c.lte !== undefined) q = q.where(column, '<=', c.lte);
  return eb.exists(q);
}

/** The predicate a document of the `documents` table meets when it matches every field of `f`. */
export function matchesFilters(f: DocumentFilters, d: SqlDialect): (eb: DocumentsEb) => Expression<SqlBool> {
  return (eb) => {
    const all: Expression<SqlBool>[] = [];
    if (f.contentTypes) all.push(eb('documents.content_type', 'in', f.contentTypes));
    if (f.uploadedFrom !== undefined) all.push(eb('documents.created_at', '>=', f.uploadedFrom));
    if (f.uploadedBefore !== undefined) all.push(eb('documents.created_at', '<', f.uploadedBefore));
    if (f.pathPrefix !== undefined) all.push(startsWith('documents.path', f.pathPrefix));
    if (f.uploadedBy) {
      const emails = f.uploadedBy;
      all.push(eb('documents.user_id', 'in', eb.selectFrom('users').select('users.id').where((u) => u.or(emails.map((e) => equalsName(d, 'users.email', e))))));
    }
    if (f.sourceIds) all.push(eb('documents.source_id', 'in', f.sourceIds));
    if (f.languages) all.push(eb('documents.language', 'in', f.languages));
    for (const name of f.labels ?? []) {
      all.push(
        eb.exists(
          eb
            .selectFrom('document_labels as dl')
            .innerJoin('labels as l', 'l.id', 'dl.label_id')
            .select('dl.id')
            .whereRef('dl.document_id', '=', 'documents.id')
            .where(equalsName(d, 'l.name', name)),
        ),
      );
    }
    for (const c of f.metadata ?? []) all.push(metadataCondition(eb, c));
    return all.length === 0 ? sql<SqlBool>`1 = 1` : eb.and(all);
  };
}

/** What a search's facets count of each document. */
export interface FacetFields {
  contentType: string;
  projectId: string;
  userId: string;
  createdAt: number;
  /** Its language (most of its chunks'), null until it is ready. */
  language: string | null;
}

/**
 * The lookups that turn a search's filters into the chunk columns' values and count its facets: one query each,
 * over the projects searched or the candidate documents.
 */
export class FilterLookups {
  constructor(private readonly db: Kysely<Database>) {}

  /** The ids of the accounts with these e-mails (any case of A–Z, either Unicode spelling). */
  async userIds(emails: readonly string[]): Promise<string[]> {
    if (emails.length === 0) return [];
    const d = dialectOf(this.db);
    const rows = await this.db
      .selectFrom('users')
      .select('id')
      .where((eb) => eb.or(emails.map((e) => equalsName(d, 'email', e))))
      .execute();
    return rows.map((r) => r.id);
  }

  /** The values (JSON text) of `key` in range among the documents of these projects: what a range filter matches. */
  async valuesInRange(projectIds: readonly string[], c: Extract<MetadataCondition, { op: 'range' }>): Promise<string[]> {
    if (projectIds.length === 0) return [];
    const column = c.kind === 'number' ? 'm.number' : 'm.moment';
    let q = this.db
      .selectFrom('document_metadata as m')
      .innerJoin('documents as d', 'd.id', 'm.document_id')
      .select('m.value')
      .distinct()
      .where('m.key', 'in', spellings(c.key))
      .where('m.value', 'is not', null)
      .where(column, 'is not', null)
      .where('d.project_id', 'in', [...projectIds]);
    if (c.gt !== undefined) q = q.where(column, '>', c.gt);
    if (c.gte !== undefined) q = q.where(column, '>=', c.gte);
    if (c.lt !== undefined) q = q.where(column, '<', c.lt);
    if (c.lte !== undefined) q = q.where(column, '<=', c.lte);
    return (await q.execute()).map((r) => r.value!);
  }

  /** What facets count of these documents (absent ones are left out). */
  async facetFields(ids: readonly string[]): Promise<Map<string, FacetFields>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('documents')
      .select(['id', 'content_type', 'project_id', 'user_id', 'created_at', 'language'])
      .where(dialectOf(this.db).inValues('id', [...ids]))
      .execute();
    return new Map(rows.map((r) => [r.id, { contentType: r.content_type, projectId: r.project_id, userId: r.user_id, createdAt: Number(r.created_at), language: r.language ?? null }]));
  }

  /** The values (JSON text) of these keys on these documents: document → key → values. */
  async metadataOf(ids: readonly string[], keys: readonly string[]): Promise<Map<string, Map<string, string[]>>> {
    const out = new Map<string, Map<string, string[]>>();
    if (ids.length === 0 || keys.length === 0) return out;
    const rows = await this.db
      .selectFrom('document_metadata')
      .select(['document_id', 'key', 'value'])
      .where(dialectOf(this.db).inValues('document_id', [...ids]))
      .where('key', 'in', [...keys])
      .where('value', 'is not', null)
      .execute();
    for (const r of rows) {
      const byKey = out.get(r.document_id) ?? new Map<string, string[]>();
      byKey.set(r.key, [...(byKey.get(r.key) ?? []), r.value!]);
      out.set(r.document_id, byKey);
    }
    return out;
  }
}
