import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { ProjectsTable } from './schema.js';

export interface Project {
  id: string;
  userId: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  isDefault: boolean;
  documentCount: number;
  chunkCount: number;
  sizeBytes: number;
  createdAt: number;
  updatedAt: number;
}

export interface ProjectPatch {
  name?: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

export const DEFAULT_PROJECT_NAME = 'default';

export class ProjectStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Projects with live counts from the documents table. */
  private query(userId: string) {
    return this.db
      .selectFrom('projects as p')
      .leftJoin(
        (eb) =>
          eb
            .selectFrom('documents')
            .select((e) => [
              'project_id',
              e.fn.countAll<number>().as('document_count'),
              e.fn.sum<number>('chunk_count').as('chunk_count'),
              e.fn.sum<number>('size_bytes').as('size_bytes'),
            ])
            .where('user_id', '=', userId)
            .groupBy('project_id')
            .as('d'),
        (join) => join.onRef('d.project_id', '=', 'p.id'),
      )
      .select([
        'p.id',
        'p.user_id',
        'p.name',
        'p.description',
        'p.metadata',
        'p.is_default',
        'p.created_at',
        'p.updated_at',
        sql<number>`coalesce(d.document_count, 0)`.as('document_count'),
        sql<number>`coalesce(d.chunk_count, 0)`.as('chunk_count'),
        sql<number>`coalesce(d.size_bytes, 0)`.as('size_bytes'),
      ])
      .where('p.user_id', '=', userId);
  }

  private static toProject(r: ProjectsTable & { document_count: number; chunk_count: number; size_bytes: number }): Project {
    return {
      id: r.id,
      userId: r.user_id,
      name: r.name,
      description: r.description,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
      isDefault: r.is_default === 1,
      documentCount: Number(r.document_count),
      chunkCount: Number(r.chunk_count),
      sizeBytes: Number(r.size_bytes),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  }

  /** Page of a user's projects in creation order; `after` is the last id of the previous page. */
  async list(userId: string, limit: number, after?: string): Promise<{ projects: Project[]; hasMore: boolean }> {
    let q = this.query(userId).orderBy('p.id', 'asc').limit(limit + 1);
    if (after) q = q.where('p.id', '>', after);
    const rows = await q.execute();
    return { projects: rows.slice(0, limit).map(ProjectStore.toProject), hasMore: rows.length > limit };
  }

  async get(userId: string, id: string): Promise<Project | null> {
    const row = await this.query(userId).where('p.id', '=', id).executeTakeFirst();
    return row ? ProjectStore.toProject(row) : null;
  }

  /**
   * The id of the user's project `id`, or without one of their default project (made when missing); null when
   * the user has no such project. No counts: an upload needs only the id, and the counts aggregate every document
   * of the user, once per upload.
   */
  async resolveId(userId: string, id?: string): Promise<string | null> {
    const own = this.db.selectFrom('projects').select('id').where('user_id', '=', userId);
    if (id) return (await own.where('id', '=', id).executeTakeFirst())?.id ?? null;
    return (await own.where('is_default', '=', 1).executeTakeFirst())?.id ?? (await this.ensureDefault(userId)).id;
  }

  /** Ids and names only (no counts): what search results carry, without aggregating documents. */
  async names(userId: string, ids: string[]): Promise<{ id: string; name: string }[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('projects').select(['id', 'name']).where('user_id', '=', userId).where('id', 'in', ids).execute();
  }

  async findByName(userId: string, name: string): Promise<Project | null> {
    const row = await this.query(userId)
      .where(dialectOf(this.db).equalsIgnoreCase('p.name', name))
      .executeTakeFirst();
    return row ? ProjectStore.toProject(row) : null;
  }

  /** Creates a project; null when the user already has one with that name. */
  async create(
    userId: string,
    input: { name: string; description?: string; metadata?: Record<string, unknown>; isDefault?: boolean },
  ): Promise<Project | null> {
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
    return this.get(userId, id);
  }

  /** The user's default project, created on first need. */
  async ensureDefault(userId: string): Promise<Project> {
    const row = await this.query(userId).where('p.is_default', '=', 1).executeTakeFirst();
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

  /** Applies a patch; 'conflict' when the new name is taken, null when not found. */
  async update(userId: string, id: string, patch: ProjectPatch): Promise<Project | null | 'conflict'> {
    const set: { name?: string; description?: string; metadata?: string; updated_at: number } = { updated_at: this.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.metadata !== undefined) set.metadata = JSON.stringify(patch.metadata);
    try {
      const res = await this.db.updateTable('projects').set(set).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return null;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
    return this.get(userId, id);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('projects').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }
}
