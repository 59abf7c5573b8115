import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf, equalsName } from './dialect.js';
import type { GroupsTable } from './schema.js';

export interface Group {
  id: string;
  name: string;
  description: string;
  /** 'local' (managed by admins here) or the identity provider's (synced at sign-in, read-only here). */
  source: string;
  memberCount: number;
  createdAt: number;
}

export const LOCAL_GROUPS = 'local';

const toGroup = (r: GroupsTable & { member_count: number | string }): Group => ({
  id: r.id,
  name: r.name,
  description: r.description,
  source: r.source,
  memberCount: Number(r.member_count),
  createdAt: r.created_at,
});

/** Groups of users (`groups`, `group_members`): who is in which. Only this module writes those tables. */
export class GroupStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  private query() {
    return this.db
      .selectFrom('groups as g')
      .selectAll('g')
      .select((eb) =>
        eb
          .selectFrom('group_members as gm')
          .innerJoin('users as u', 'u.id', 'gm.user_id')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('gm.group_id', '=', 'g.id')
          .where('u.deleted_at', 'is', null)
          .as('member_count'),
      );
  }

  async list(): Promise<Group[]> {
    return (await this.query().orderBy(dialectOf(this.db).bytewise('g.name')).execute()).map((r) => toGroup({ ...r, member_count: r.member_count ?? 0 }));
  }

  async get(id: string): Promise<Group | null> {
    const row = await this.query().where('g.id', '=', id).executeTakeFirst();
    return row ? toGroup({ ...row, member_count: row.member_count ?? 0 }) : null;
  }

  async findByName(name: string): Promise<Group | null> {
    const row = await this.query().where(equalsName(dialectOf(this.db), 'g.name', name)).executeTakeFirst();
    return row ? toGroup({ ...row, member_count: row.member_count ?? 0 }) : null;
  }

  /**
   * Creates a group, its name composed (NFC: core/name-spellings.ts; the admin API, the operator command and SSO all
   * come here); null when the name is taken (ignoring ASCII case, in either spelling: the unique index compares bytes,
   * and would not see a decomposed name stored before).
   */
  async create(given: string, description = '', source = LOCAL_GROUPS): Promise<Group | null> {
    const name = given.normalize('NFC');
    if (await this.findByName(name)) return null;
    const now = this.now();
    const id = newId('grp', now);
    const res = await this.db
      .insertInto('groups')
      .values({ id, name, description, source, created_at: now, updated_at: now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return this.get(id);
  }

  /** Removes a group and its memberships (the caller removes its project grants in the same breath). */
  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('groups').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Adds a user to a group; false when they already were in it. */
  async addMember(groupId: string, userId: string): Promise<boolean> {
    const res = await this.db
      .insertInto('group_members')
      .values({ id: `${groupId}:${userId}`, group_id: groupId, user_id: userId, created_at: this.now() })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async removeMember(groupId: string, userId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** The live members of a group, by e-mail. */
  async members(groupId: string): Promise<{ id: string; email: string }[]> {
    return this.db
      .selectFrom('group_members as gm')
      .innerJoin('users as u', 'u.id', 'gm.user_id')
      .select(['u.id', 'u.email'])
      .where('gm.group_id', '=', groupId)
      .where('u.deleted_at', 'is', null)
      .orderBy('u.email')
      .execute();
  }

  /** The groups a user is in. */
  async groupsOf(userId: string): Promise<Group[]> {
    const rows = await this.query()
      .where((eb) => eb.exists(eb.selectFrom('group_members as mine').select('mine.group_id').whereRef('mine.group_id', '=', 'g.id').where('mine.user_id', '=', userId)))
      .orderBy(dialectOf(this.db).bytewise('g.name'))
      .execute();
    return rows.map((r) => toGroup({ ...r, member_count: r.member_count ?? 0 }));
  }

  /** Takes a user out of every group (the account is deleted). */
  async leaveAll(userId: string): Promise<void> {
    await this.db.deleteFrom('group_members').where('user_id', '=', userId).execute();
  }
}
