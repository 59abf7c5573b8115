import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { foldAscii } from '../../core/name-order.js';
import type { Db } from './database.js';
import { dialectOf, nameHeld } from './dialect.js';

/**
 * Saved searches (issue 60, docs/api.md#saved-searches): a person's named search (query, scope, filters, facets,
 * kept as the search body's JSON), each name once per person in any case; shared with a project's members when
 * `projectId` is set. Who may see or delete one is decided by access/ (`AccessControl.savedSearch`); every method
 * takes ids the caller checked. Only this module writes `saved_searches`.
 */

export interface SavedSearch {
  id: string;
  userId: string;
  /** The author's e-mail (for the members it is shared with). */
  userEmail: string;
  /** Shared with this project's members; null: the author's alone. */
  projectId: string | null;
  name: string;
  /** The search body (POST /search), as saved. */
  search: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

type Row = { id: string; user_id: string; email: string; project_id: string | null; name: string; search: string; created_at: number; updated_at: number };

/**
 * The body a saved search runs: one shared with a project and saved without `project_ids` searches that project, not
 * every project each member reads (a shared search may search only its project, docs/api.md#saved-searches). Read
 * here, not only at save, so that those saved before run so too.
 */
function searchOf(r: Pick<Row, 'project_id' | 'search'>): Record<string, unknown> {
  const search = JSON.parse(r.search) as Record<string, unknown>;
  // An empty list too: the web page reads it as "all projects" (no `project` in the address).
  const unscoped = search.project_ids === undefined || (Array.isArray(search.project_ids) && search.project_ids.length === 0);
  return r.project_id !== null && unscoped ? { ...search, project_ids: [r.project_id] } : search;
}

const toSaved = (r: Row): SavedSearch => ({
  id: r.id,
  userId: r.user_id,
  userEmail: r.email,
  projectId: r.project_id,
  name: r.name,
  search: searchOf(r),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export class SavedSearchStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  private select() {
    // A deleted account's are deleted with it (TeamAdmin); any left from before that are not shown either.
    return this.db.selectFrom('saved_searches as s').innerJoin('users as u', 'u.id', 's.user_id').where('u.deleted_at', 'is', null).selectAll('s').select('u.email');
  }

  /** The person's own saved searches and those shared with any of `projectIds`, by name (own first on a tie); access/ keeps those the caller sees. */
  async visible(userId: string, projectIds: readonly string[]): Promise<SavedSearch[]> {
    const rows = await this.select()
      .where((eb) => (projectIds.length > 0 ? eb.or([eb('s.user_id', '=', userId), eb('s.project_id', 'in', [...projectIds])]) : eb('s.user_id', '=', userId)))
      .orderBy(sql`lower(${dialectOf(this.db).bytewise('s.name')})`)
      .orderBy(sql`case when s.user_id = ${userId} then 0 else 1 end`)
      .orderBy('s.id')
      .execute();
    return rows.map(toSaved);
  }

  async get(id: string): Promise<SavedSearch | null> {
    const row = await this.select().where('s.id', '=', id).executeTakeFirst();
    return row ? toSaved(row) : null;
  }

  /** A new saved search; null when the person has one of that name already (any case, either spelling). */
  async create(userId: string, name: string, search: Record<string, unknown>, projectId: string | null): Promise<SavedSearch | null> {
    if (await nameHeld(this.db, 'saved_searches', userId, name)) return null;
    const now = this.now();
    const id = newId('srch', now);
    try {
      await this.db.insertInto('saved_searches').values({ id, user_id: userId, project_id: projectId, name, search: JSON.stringify(search), created_at: now, updated_at: now }).execute();
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return null;
      throw err;
    }
    return this.get(id);
  }

  /** The saved search under a new name; null when its author has another of that name (any case, either spelling). */
  async rename(id: string, name: string): Promise<SavedSearch | null> {
    const author = await this.db.selectFrom('saved_searches').select('user_id').where('id', '=', id).executeTakeFirst();
    if (author && (await nameHeld(this.db, 'saved_searches', author.user_id, name, id))) return null;
    try {
      await this.db.updateTable('saved_searches').set({ name, updated_at: this.now() }).where('id', '=', id).execute();
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return null;
      throw err;
    }
    return this.get(id);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('saved_searches').where('id', '=', id).execute();
  }

  /**
   * A project's label renamed: the saved searches over that project alone that ask for it by its old name (in any case
   * of A–Z, as the filter matches names) ask for the new one, so they go on finding what they found — documents carry
   * the label itself, searches its name. One over other projects too keeps the old name: a label of that name there
   * still answers it. How many changed.
   */
  async renameLabel(projectId: string, from: string, to: string): Promise<number> {
    const old = foldAscii(from);
    // Shared with the project, or naming it in its body (a superset: `_` in an id matches any one character).
    const rows = await this.db
      .selectFrom('saved_searches')
      .selectAll()
      .where((eb) => eb.or([eb('project_id', '=', projectId), eb('search', 'like', `%${projectId}%`)]))
      .execute();
    let changed = 0;
    for (const r of rows) {
      const scope = searchOf(r).project_ids;
      if (!Array.isArray(scope) || scope.length === 0 || !scope.every((id) => id === projectId)) continue;
      const search = JSON.parse(r.search) as { filters?: { labels?: string | string[] } };
      const asked = search.filters?.labels;
      if (asked === undefined || ![asked].flat().some((name) => foldAscii(name) === old)) continue;
      const renamed = [...new Set([asked].flat().map((name) => (foldAscii(name) === old ? to : name)))];
      search.filters!.labels = typeof asked === 'string' ? renamed[0]! : renamed;
      // updated_at stays its author's last change: the time of this one would tell an author who has left the project
      // that a label was renamed there (they are shown it without its label filters, api/saved-searches.ts).
      await this.db.updateTable('saved_searches').set({ search: JSON.stringify(search) }).where('id', '=', r.id).execute();
      changed++;
    }
    return changed;
  }

  /** Deletes every saved search of a person (their account deleted); how many. */
  async deleteAllOf(userId: string): Promise<number> {
    const res = await this.db.deleteFrom('saved_searches').where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
