import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf, nameHeld } from './dialect.js';
import type { ProjectsTable } from './schema.js';

export interface Project {
  id: string;
  userId: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  isDefault: boolean;
  /** The language its documents are set to (ISO 639-1), or null: each chunk's is detected. */
  language: string | null;
  /** The OCR languages its uploads are read in ("deu+eng"), or null: the operator's `--ocr-languages`. */
  ocrLanguages: string | null;
  documentCount: number;
  chunkCount: number;
  sizeBytes: number;
  createdAt: number;
  updatedAt: number;
}

export interface ProjectPatch {
  name?: string;
  description?: string;
  language?: string | null;
  ocrLanguages?: string | null;
  metadata?: Record<string, unknown>;
}

export const DEFAULT_PROJECT_NAME = 'default';

/**
 * Projects and their counts. Who may see or change which project is not decided here (access/ does): every
 * method takes project ids the caller already checked, except those named for one user's own projects.
 */
export class ProjectStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Projects with live counts over every document in them, whoever uploaded it. */
  /** With each project's counts: documents in its trash are not counted. */
  private query() {
    return this.db
      .selectFrom('projects as p')
      .select([
        'p.id',
        'p.user_id',
        'p.name',
        'p.description',
        'p.metadata',
        'p.is_default',
        'p.language',
        'p.ocr_languages',
        'p.created_at',
        'p.updated_at',
        (eb) => eb.selectFrom('documents as d').select((e) => e.fn.countAll<number>().as('n')).whereRef('d.project_id', '=', 'p.id').where('d.trashed_at', 'is', null).as('document_count'),
        (eb) => eb.selectFrom('documents as d').select((e) => e.fn.sum<number>('d.chunk_count').as('n')).whereRef('d.project_id', '=', 'p.id').where('d.trashed_at', 'is', null).as('chunk_count'),
        (eb) => eb.selectFrom('documents as d').select((e) => e.fn.sum<number>('d.size_bytes').as('n')).whereRef('d.project_id', '=', 'p.id').where('d.trashed_at', 'is', null).as('size_bytes'),
      ]);
  }

  private static toProject(r: Omit<ProjectsTable, 'quota_bytes'> & { document_count: number | null; chunk_count: number | null; size_bytes: number | null }): Project {
    return {
      id: r.id,
      userId: r.user_id,
      name: r.name,
      description: r.description,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
      isDefault: r.is_default === 1,
      language: r.language ?? null,
      ocrLanguages: r.ocr_languages ?? null,
      documentCount: Number(r.document_count ?? 0),
      chunkCount: Number(r.chunk_count ?? 0),
      sizeBytes: Number(r.size_bytes ?? 0),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  }

  /** A page of the projects among `ids` in creation order; `after` is the last id of the previous page. */
  async listAmong(ids: readonly string[], limit: number, after?: string): Promise<{ projects: Project[]; hasMore: boolean }> {
    if (ids.length === 0) return { projects: [], hasMore: false };
    let q = this.query().where(dialectOf(this.db).inValues('p.id', ids)).orderBy('p.id', 'asc').limit(limit + 1);
    if (after) q = q.where('p.id', '>', after);
    const rows = await q.execute();
    return { projects: rows.slice(0, limit).map(ProjectStore.toProject), hasMore: rows.length > limit };
  }

  async get(id: string): Promise<Project | null> {
    const row = await this.query().where('p.id', '=', id).executeTakeFirst();
    return row ? ProjectStore.toProject(row) : null;
  }

  /** Id, name and owner of record of the projects among `ids`, without counts. */
  async heads(ids: readonly string[]): Promise<{ id: string; name: string; userId: string; isDefault: boolean }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('projects').select(['id', 'name', 'user_id', 'is_default']).where(dialectOf(this.db).inValues('id', ids)).execute();
    return rows.map((r) => ({ id: r.id, name: r.name, userId: r.user_id, isDefault: r.is_default === 1 }));
  }

  /** Ids and names only (no counts): what search results carry, without aggregating documents. */
  async names(ids: readonly string[]): Promise<{ id: string; name: string }[]> {
    return (await this.heads(ids)).map(({ id, name }) => ({ id, name }));
  }

  /** The id of a user's own default project, made when missing. */
  async defaultId(userId: string): Promise<string> {
    const own = await this.db.selectFrom('projects').select('id').where('user_id', '=', userId).where('is_default', '=', 1).executeTakeFirst();
    return own?.id ?? (await this.ensureDefault(userId)).id;
  }

  /** The projects a user is the owner of record of. */
  async ownedBy(userId: string): Promise<{ id: string; name: string; isDefault: boolean }[]> {
    const rows = await this.db.selectFrom('projects').select(['id', 'name', 'is_default']).where('user_id', '=', userId).orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, name: r.name, isDefault: r.is_default === 1 }));
  }

  /** Creates a project owned by `userId`; null when they already own one with that name. */
  async create(
    userId: string,
    input: { name: string; description?: string; metadata?: Record<string, unknown>; isDefault?: boolean },
  ): Promise<Project | null> {
    if (await nameHeld(this.db, 'projects', userId, input.name)) return null;
    const now = this.now();
    const id = newId('prj', now);
    const res = await this.db
      .insertInto('projects')
      .values({
        id,
        user_id: userId,
        name: input.name,
        description: input.description ?? '',
        metadata: JSON.stringify(input.metadata ?? {}),
        is_default: input.isDefault ? 1 : 0,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return this.get(id);
  }

  /** The user's default project, created on first need. */
  async ensureDefault(userId: string): Promise<Project> {
    const row = await this.query().where('p.user_id', '=', userId).where('p.is_default', '=', 1).executeTakeFirst();
    if (row) return ProjectStore.toProject(row);
    const created = await this.create(userId, { name: DEFAULT_PROJECT_NAME, description: 'Default project', isDefault: true });
    if (created) return created;
    // A project the user named "default" themselves becomes the default one.
    await this.db
      .updateTable('projects')
      .set({ is_default: 1 })
      .where('user_id', '=', userId)
      .where(dialectOf(this.db).equalsIgnoreCase('name', DEFAULT_PROJECT_NAME))
      .execute();
    return this.ensureDefault(userId);
  }

  /** Applies a patch; 'conflict' when its owner already has a project of the new name, null when not found. */
  async update(id: string, patch: ProjectPatch): Promise<Project | null | 'conflict'> {
    const set: { name?: string; description?: string; metadata?: string; language?: string | null; ocr_languages?: string | null; updated_at: number } = { updated_at: this.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.language !== undefined) set.language = patch.language;
    if (patch.ocrLanguages !== undefined) set.ocr_languages = patch.ocrLanguages;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.metadata !== undefined) set.metadata = JSON.stringify(patch.metadata);
    if (patch.name !== undefined) {
      const owner = await this.db.selectFrom('projects').select('user_id').where('id', '=', id).executeTakeFirst();
      if (owner && (await nameHeld(this.db, 'projects', owner.user_id, patch.name, id))) return 'conflict';
    }
    try {
      const res = await this.db.updateTable('projects').set(set).where('id', '=', id).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return null;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
    return this.get(id);
  }

  /**
   * Makes `userId` the owner of record, taking it from `from`; 'conflict' when they already own a project of this
   * name, false when the project is gone or `from` no longer owns it (another owner transferred it meanwhile: taken
   * from whoever held it, the transfer wrote over theirs, and the one it went to had lost their member row to it). A
   * default project stops being one: its new owner has their own.
   */
  async setOwner(id: string, userId: string, from: string): Promise<boolean | 'conflict'> {
    try {
      const res = await this.db.updateTable('projects').set({ user_id: userId, is_default: 0, updated_at: this.now() }).where('id', '=', id).where('user_id', '=', from).executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
  }

  /** The projects among `ids` whose trash holds documents (what a project's counts leave out). */
  async withTrash(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('documents').select('project_id').distinct().where('project_id', 'in', [...ids]).where('trashed_at', 'is not', null).execute();
    return new Set(rows.map((r) => r.project_id));
  }

  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }
}
