import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { compareNames, foldAscii } from '../../core/name-order.js';
import { nameKey, spellings } from '../../core/name-spellings.js';
import type { Db } from './database.js';
import { dialectOf, equalsName } from './dialect.js';

/**
 * Labels: each project's vocabulary (a name once per project, any case, with a colour) and the labels on its
 * documents. Who may read or change them is decided by access/ (a project's viewers see them, editors set them);
 * every method takes ids the caller checked. Only this module writes `labels` and `document_labels`.
 */

/** The colours a label may have: the web page draws each (docs/web.md). */
export const LABEL_COLORS = ['gray', 'red', 'orange', 'yellow', 'green', 'teal', 'blue', 'purple', 'pink'] as const;
export type LabelColor = (typeof LABEL_COLORS)[number];

export interface Label {
  id: string;
  projectId: string;
  name: string;
  color: LabelColor;
  createdAt: number;
  updatedAt: number;
}

export interface LabelWithCount extends Label {
  /** Documents carrying it (not those in the trash, nor versions a newer one replaced). */
  documentCount: number;
}

/** A new label's colour when none is asked for: one of the palette by its name, so a name keeps its colour everywhere. */
export function defaultColor(name: string): LabelColor {
  let h = 0;
  for (const c of name.toLowerCase()) h = (h * 31 + c.codePointAt(0)!) >>> 0;
  return LABEL_COLORS[1 + (h % (LABEL_COLORS.length - 1))]!;
}

type LabelRow = { id: string; project_id: string; name: string; color: string; created_at: number; updated_at: number };

const toLabel = (r: LabelRow): Label => ({ id: r.id, projectId: r.project_id, name: r.name, color: r.color as LabelColor, createdAt: r.created_at, updatedAt: r.updated_at });

export class LabelStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** The vocabularies of these projects, by name, each label with its document count; with `match`, the labels whose name holds it (see page). */
  async list(projectIds: readonly string[], match?: string): Promise<LabelWithCount[]> {
    if (projectIds.length === 0) return [];
    const rows = await this.counted()
      .where('l.project_id', 'in', [...projectIds])
      .$if(Boolean(match), (q) => q.where(this.holds(match!)))
      .orderBy(this.nameOrder())
      .orderBy('l.id')
      .execute();
    return rows.map((r) => ({ ...toLabel(r), documentCount: Number(r.document_count ?? 0) }));
  }

  /** One label with its document count (a label's own, not its vocabulary's: a confirmation names it); null when it is gone. */
  async withCount(id: string): Promise<LabelWithCount | null> {
    const row = await this.counted().where('l.id', '=', id).executeTakeFirst();
    return row ? { ...toLabel(row), documentCount: Number(row.document_count ?? 0) } : null;
  }

  /**
   * A page of a project's vocabulary in list's order: `limit` labels after the label `afterId` (where it sorts now);
   * `more` when there are others after them. Null when `afterId` is no label of the project (deleted since). With
   * `match`, of the labels whose name holds it anywhere, in any case of A–Z and either Unicode spelling (as names are
   * compared: core/name-spellings.ts), `%` and `_` as themselves; `afterId` may be any label of the project.
   */
  async page(projectId: string, limit: number, afterId?: string, match?: string): Promise<{ labels: LabelWithCount[]; more: boolean } | null> {
    const key = this.nameOrder();
    let after: { id: string; key: string } | undefined;
    if (afterId !== undefined) {
      const row = await this.db.selectFrom('labels as l').select(['l.id', key.as('sort_key')]).where('l.id', '=', afterId).where('l.project_id', '=', projectId).executeTakeFirst();
      if (!row) return null;
      after = { id: row.id, key: row.sort_key };
    }
    const rows = await this.counted()
      .where('l.project_id', '=', projectId)
      .$if(Boolean(match), (q) => q.where(this.holds(match!)))
      .$if(after !== undefined, (q) => q.where((eb) => eb.or([eb(key, '>', after!.key), eb.and([eb(key, '=', after!.key), eb('l.id', '>', after!.id)])])))
      .orderBy(key)
      .orderBy('l.id')
      .limit(limit + 1)
      .execute();
    return { labels: rows.slice(0, limit).map((r) => ({ ...toLabel(r), documentCount: Number(r.document_count ?? 0) })), more: rows.length > limit };
  }

  /** The vocabulary's order: names A–Z folded, then by code point, as on both engines (then by id). */
  private nameOrder() {
    return sql<string>`lower(${dialectOf(this.db).bytewise('l.name')})`;
  }

  /**
   * A name holding `text`: the folded name (nameOrder's, A–Z only on both engines) against each spelling folded the
   * same way, LIKE's wildcards and its escape escaped. No index serves a match inside names; a vocabulary is small.
   */
  private holds(text: string) {
    const patterns = spellings(text).map((s) => `%${foldAscii(s).replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    return sql<boolean>`(${sql.join(patterns.map((p) => sql`${this.nameOrder()} like ${p} escape '\\'`), sql` or `)})`;
  }

  /** Labels with their document counts, to narrow and order. */
  private counted() {
    return this.db
      .selectFrom('labels as l')
      .selectAll('l')
      .select((eb) =>
        eb
          .selectFrom('document_labels as dl')
          .innerJoin('documents as d', 'd.id', 'dl.document_id')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('dl.label_id', '=', 'l.id')
          .where('d.trashed_at', 'is', null)
          .where('d.replaced_by', 'is', null)
          .as('document_count'),
      );
  }

  async get(id: string): Promise<Label | null> {
    const row = await this.db.selectFrom('labels').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toLabel(row) : null;
  }

  /** The project's label of this name (any case), or null. */
  async byName(projectId: string, name: string): Promise<Label | null> {
    const row = await this.db.selectFrom('labels').selectAll().where('project_id', '=', projectId).where(equalsName(dialectOf(this.db), 'name', name)).executeTakeFirst();
    return row ? toLabel(row) : null;
  }

  /** A new label; null when the project has one of that name already (any case, either spelling). */
  async create(projectId: string, name: string, color: LabelColor = defaultColor(name)): Promise<Label | null> {
    // The unique index compares bytes: a decomposed name stored before names were composed would not stop its twin.
    if (await this.byName(projectId, name)) return null;
    const now = this.now();
    const row: LabelRow = { id: newId('lbl', now), project_id: projectId, name, color, created_at: now, updated_at: now };
    try {
      await this.db.insertInto('labels').values(row).execute();
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return null;
      throw err;
    }
    return toLabel(row);
  }

  /**
   * The project's labels of these names (any case), made where missing (with their default colour), in the order
   * of `names`. Two callers making the same name at once get the same label.
   */
  async ensure(projectId: string, names: readonly string[]): Promise<Label[]> {
    const out: Label[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(nameKey(name))) continue;
      seen.add(nameKey(name));
      const label = (await this.byName(projectId, name)) ?? (await this.create(projectId, name)) ?? (await this.byName(projectId, name));
      if (label) out.push(label);
    }
    return out;
  }

  /** Renames or recolours a label: 'conflict' when another of its project has the name, null when it is gone. */
  async update(id: string, patch: { name?: string; color?: LabelColor }): Promise<Label | 'conflict' | null> {
    const set = { ...(patch.name !== undefined ? { name: patch.name } : {}), ...(patch.color !== undefined ? { color: patch.color } : {}), updated_at: this.now() };
    if (patch.name !== undefined) {
      // As in create: the other spelling of another label's name is that name.
      const label = await this.get(id);
      const held = label && (await this.byName(label.projectId, patch.name));
      if (held && held.id !== id) return 'conflict';
    }
    try {
      const row = await this.db.updateTable('labels').set(set).where('id', '=', id).returningAll().executeTakeFirst();
      return row ? toLabel(row) : null;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
  }

  /** Deletes a label (off every document with it); the documents that carried it, for their chunks. */
  async delete(id: string): Promise<string[] | null> {
    return this.db.transaction().execute(async (trx) => {
      const docs = await trx.selectFrom('document_labels').select('document_id').where('label_id', '=', id).execute();
      const res = await trx.deleteFrom('labels').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) === 1 ? docs.map((d) => d.document_id) : null;
    });
  }

  /** Each document's labels, by name. Documents without any are absent. */
  async ofDocuments(documentIds: readonly string[]): Promise<Map<string, Label[]>> {
    const out = new Map<string, Label[]>();
    if (documentIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('document_labels as dl')
      .innerJoin('labels as l', 'l.id', 'dl.label_id')
      .select(['dl.document_id', 'l.id', 'l.project_id', 'l.name', 'l.color', 'l.created_at', 'l.updated_at'])
      .where(dialectOf(this.db).inValues('dl.document_id', [...documentIds]))
      .execute();
    for (const r of rows) {
      const list = out.get(r.document_id) ?? [];
      list.push(toLabel(r));
      out.set(r.document_id, list);
    }
    for (const list of out.values()) list.sort((a, b) => compareNames(a.name, b.name) || (a.id < b.id ? -1 : 1));
    return out;
  }

  /** The ids of a document's labels. */
  async idsOf(documentId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('document_labels').select('label_id').where('document_id', '=', documentId).orderBy('label_id').execute();
    return rows.map((r) => r.label_id);
  }

  /**
   * Puts labels on documents (those already there stay): each label on the documents of its project only, decided in
   * the write. A document moved meanwhile (its labels carried over to its new project) is not given its old project's
   * label, and a label deleted meanwhile is put on nothing (its link's foreign key failed the request before). The rows
   * are share-locked first on PostgreSQL: a move in progress (DocumentStore.move, carryOver) holds a document's row,
   * and the insert then reads the project it moved to. With `inProject` (the project the caller read them in), only
   * the documents still in it are labelled; the ones it labelled are returned, so that only they are audited.
   */
  async add(documentIds: readonly string[], labelIds: readonly string[], inProject?: string): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const there = await documentsIn(trx, documentIds, inProject);
      if (there.length > 0 && labelIds.length > 0) await linkWithinProject(trx, there, labelIds, this.now());
      return there;
    });
  }

  /** Takes labels off documents; with `inProject`, off those still in it. The documents it looked at (see add). */
  async remove(documentIds: readonly string[], labelIds: readonly string[], inProject?: string): Promise<string[]> {
    const d = dialectOf(this.db);
    return this.db.transaction().execute(async (trx) => {
      const there = await documentsIn(trx, documentIds, inProject);
      if (there.length > 0 && labelIds.length > 0) await trx.deleteFrom('document_labels').where(d.inValues('document_id', there)).where(d.inValues('label_id', [...labelIds])).execute();
      return there;
    });
  }

  /**
   * A document's labels become exactly these (those of its project: see add). The document's row is locked first, so
   * two sets at once (two replicas) run one after the other and the last one's labels are the document's: unlocked,
   * neither deleted what the other inserted, and the document kept both sets (or one set failed on the other's
   * uncommitted row). With `inProject` (the project the caller read it in), false when it has moved since: its labels,
   * carried over to its new project, stay as they are.
   */
  async set(documentId: string, labelIds: readonly string[], inProject?: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx.selectFrom('documents').select('project_id').where('id', '=', documentId).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!doc || (inProject !== undefined && doc.project_id !== inProject)) return false;
      await trx.deleteFrom('document_labels').where('document_id', '=', documentId).execute();
      if (labelIds.length > 0) await linkWithinProject(trx, [documentId], labelIds, this.now());
      return true;
    });
  }

  /**
   * A document moved to `projectId` keeps its labels: those of another project (the one it left) become the labels
   * of the same names there, made where missing; those of its new project (added since it arrived) stay. One
   * transaction with the document's row locked, so a label added at once is either there before (and carried) or
   * comes after, in its new project's terms (add). Null when the document is not in that project (gone); else the ids
   * it had, to put back if the move is undone. (The moved chunks read its labels anew: LabelService.withCurrentLabels.)
   */
  async carryOver(documentId: string, projectId: string): Promise<{ before: string[] } | null> {
    const d = dialectOf(this.db);
    return this.db.transaction().execute(async (trx) => {
      const doc = await trx.selectFrom('documents').select('id').where('id', '=', documentId).where('project_id', '=', projectId).$if(d.lockRows, (q) => q.forUpdate()).executeTakeFirst();
      if (!doc) return null;
      const had = await trx
        .selectFrom('document_labels as dl')
        .innerJoin('labels as l', 'l.id', 'dl.label_id')
        .select(['l.id', 'l.project_id', 'l.name'])
        .where('dl.document_id', '=', documentId)
        .orderBy('l.id')
        .execute();
      const stale = had.filter((l) => l.project_id !== projectId);
      if (stale.length > 0) {
        const names = [...new Map(stale.map((l) => [nameKey(l.name), l.name.normalize('NFC')])).values()];
        const now = this.now();
        const named = () =>
          trx
            .selectFrom('labels')
            .select(['id', 'name'])
            .where('project_id', '=', projectId)
            .where((eb) => eb.or(names.map((n) => equalsName(d, 'name', n))))
            .execute();
        // Made where missing (a name there in its other spelling is there: the index would not see it); a name made
        // meanwhile is taken as it is.
        const there = new Set((await named()).map((l) => nameKey(l.name)));
        const missing = names.filter((n) => !there.has(nameKey(n)));
        if (missing.length > 0)
          await trx
            .insertInto('labels')
            .values(missing.map((name) => ({ id: newId('lbl', now), project_id: projectId, name, color: defaultColor(name), created_at: now, updated_at: now })))
            .onConflict((oc) => oc.doNothing())
            .execute();
        const carried = await named();
        await trx.deleteFrom('document_labels').where('document_id', '=', documentId).where(d.inValues('label_id', stale.map((l) => l.id))).execute();
        await linkWithinProject(trx, [documentId], carried.map((l) => l.id), now);
      }
      return { before: had.map((l) => l.id) };
    });
  }

  /**
   * The ids of the labels of these projects named so (any case), per name as given: what a `labels` filter looks
   * for (a name may be a label in several projects). A name no project has maps to no ids.
   */
  async idsByName(projectIds: readonly string[], names: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map(names.map((n) => [n, [] as string[]]));
    if (projectIds.length === 0 || names.length === 0) return out;
    const d = dialectOf(this.db);
    // Folded as the database folds (A–Z only): toLowerCase would also fold "Ä", and then match no row of "Ärger".
    const folded = [...new Set(names.map(nameKey))];
    const rows = await this.db
      .selectFrom('labels')
      .select(['id', 'name'])
      .where('project_id', 'in', [...projectIds])
      .where((eb) => eb.or(folded.map((n) => equalsName(d, 'name', n))))
      .execute();
    for (const name of names) out.set(name, rows.filter((r) => nameKey(r.name) === nameKey(name)).map((r) => r.id));
    return out;
  }
}

/** Of these documents, those that exist (and are in `projectId`, when given), share-locked on PostgreSQL: see add. */
async function documentsIn(db: Db, documentIds: readonly string[], projectId: string | undefined): Promise<string[]> {
  if (documentIds.length === 0) return [];
  const d = dialectOf(db);
  const rows = await db
    .selectFrom('documents')
    .select('id')
    .where(d.inValues('id', [...documentIds]))
    .$if(projectId !== undefined, (q) => q.where('project_id', '=', projectId!))
    .orderBy('id')
    .$if(d.lockRows, (q) => q.forShare())
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Links each of `labelIds` to each of `documentIds` in its project (a label on a document of another project is no
 * label of it), in the caller's transaction, one INSERT … SELECT per batch: the documents' projects as they are when
 * it runs. A link's id is `<document>:<label>`, so a link made twice is one.
 */
async function linkWithinProject(db: Db, documentIds: readonly string[], labelIds: readonly string[], now: number): Promise<void> {
  const d = dialectOf(db);
  const labels = [...new Set(labelIds)];
  // A label being deleted on another replica is waited for (the insert then finds it gone): the link's foreign key
  // would wait too, but then fail on it.
  if (d.lockRows) await db.selectFrom('labels').select('id').where(d.inValues('id', labels)).orderBy('id').forKeyShare().execute();
  const perBatch = Math.max(1, Math.floor(1000 / labels.length));
  for (let i = 0; i < documentIds.length; i += perBatch) {
    const batch = documentIds.slice(i, i + perBatch);
    await db
      .insertInto('document_labels')
      .columns(['id', 'document_id', 'label_id', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('documents as d')
          .innerJoin('labels as l', 'l.project_id', 'd.project_id')
          .select([sql<string>`d.id || ':' || l.id`.as('id'), 'd.id as document_id', 'l.id as label_id', sql<number>`cast(${now} as bigint)`.as('created_at')])
          .where(d.inValues('d.id', batch))
          .where(d.inValues('l.id', labels)),
      )
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }
}
