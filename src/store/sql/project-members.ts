import { sql } from 'kysely';
import { compareNames } from '../../core/name-order.js';
import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import type { ProjectMembersTable } from './schema.js';

export type Role = ProjectMembersTable['role'];
export type MemberKind = ProjectMembersTable['member_kind'];

/** How a user holds a role on a project: as its owner of record, directly, or through a group. */
export interface Grant {
  projectId: string;
  role: Role;
  via: 'owner' | 'user' | 'group';
}

export interface MemberRow {
  projectId: string;
  memberId: string;
  kind: MemberKind;
  role: Role;
  /** The user's e-mail or the group's name. */
  label: string;
  createdAt: number;
}

/**
 * Who holds which role on which project (`project_members`), and every grant one user holds. Only this module
 * writes the table; access/ decides what the grants allow.
 */
export class ProjectMemberStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Every grant of a live user, in one statement: the projects they own of record, their own rows, and their groups'
   * rows. A user with several grants on a project gets each (the access module takes the highest).
   */
  async grantsOf(userId: string): Promise<Grant[]> {
    const rows = await sql<{ project_id: string; role: Role; via: Grant['via'] }>`
      select p.id as project_id, 'owner' as role, 'owner' as via from projects p where p.user_id = ${userId}
      union all
      select m.project_id, m.role, 'user' as via from project_members m where m.member_id = ${userId}
      union all
      select m.project_id, m.role, 'group' as via
        from group_members g join project_members m on m.member_id = g.group_id
        where g.user_id = ${userId}`.execute(this.db);
    return rows.rows.map((r) => ({ projectId: r.project_id, role: r.role, via: r.via }));
  }

  /**
   * The live, enabled accounts that hold one of `roles` on a project: its owner of record (as `owner`), and members
   * with such a role directly or through a group. Access decides what roles mean; this only reads the rows.
   */
  async holders(projectId: string, roles: readonly Role[]): Promise<{ id: string; email: string }[]> {
    const wanted = [...roles];
    const owner = wanted.includes('owner') ? sql`select p.user_id as id from projects p where p.id = ${projectId} union ` : sql``;
    const rows = await sql<{ id: string; email: string }>`
      select u.id, u.email from users u where u.deleted_at is null and u.disabled_at is null and u.id in (
        ${owner}select m.member_id from project_members m where m.project_id = ${projectId} and m.member_kind = 'user' and m.role in (${sql.join(wanted)})
        union
        select g.user_id from group_members g join project_members m on m.member_id = g.group_id where m.project_id = ${projectId} and m.role in (${sql.join(wanted)}))
      order by u.email`.execute(this.db);
    return rows.rows;
  }

  /** A project's members with their e-mails or group names (deleted users absent), oldest first. */
  list(projectId: string): Promise<MemberRow[]> {
    return this.listOf([projectId]);
  }

  /** The members of several projects, as `list` gives them, oldest first. */
  async listOf(projectIds: readonly string[]): Promise<MemberRow[]> {
    if (projectIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('project_members as m')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'm.member_id').on('u.deleted_at', 'is', null))
      .leftJoin('groups as g', 'g.id', 'm.member_id')
      .select(['m.project_id', 'm.member_id', 'm.member_kind', 'm.role', 'm.created_at', 'u.email', 'g.name'])
      .where('m.project_id', 'in', [...projectIds])
      .orderBy('m.created_at')
      .orderBy('m.member_id')
      .execute();
    return rows.flatMap((r) => {
      const label = r.member_kind === 'user' ? r.email : r.name;
      return label === null ? [] : [{ projectId: r.project_id, memberId: r.member_id, kind: r.member_kind, role: r.role, label, createdAt: r.created_at }];
    });
  }

  /**
   * Gives a user or a group a role on a project, or changes it: whether the row is new. The writes decide, not a read
   * before them: two grants at once (two requests, two replicas) are one 'created' and one 'updated' (or
   * 'unchanged'), so the audit event and the answer's status say what each did.
   */
  async upsert(projectId: string, member: { id: string; kind: MemberKind }, role: Role, by: string | null): Promise<'created' | 'updated' | 'unchanged'> {
    const id = `${projectId}:${member.id}`;
    for (;;) {
      const now = this.now();
      const inserted = await this.db
        .insertInto('project_members')
        .values({ id, project_id: projectId, member_id: member.id, member_kind: member.kind, role, created_by: by, created_at: now, updated_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return 'created';
      const updated = await this.db.updateTable('project_members').set({ role, updated_at: now }).where('id', '=', id).where('role', '!=', role).executeTakeFirst();
      if (Number(updated.numUpdatedRows) > 0) return 'updated';
      if (await this.db.selectFrom('project_members').select('id').where('id', '=', id).executeTakeFirst()) return 'unchanged';
      // Removed between the two writes: grant it anew.
    }
  }

  async remove(projectId: string, memberId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('project_members').where('project_id', '=', projectId).where('member_id', '=', memberId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** How many projects a user or a group is a member of. */
  async countFor(memberId: string): Promise<number> {
    const row = await this.db.selectFrom('project_members').select((eb) => eb.fn.countAll<number | string>().as('n')).where('member_id', '=', memberId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * The projects shared with a user or a group, with the role given and each project's name and owner of record (null:
   * a deleted account), by name (Admin → Groups → a group).
   */
  async sharedWith(memberId: string): Promise<{ projectId: string; name: string; role: Role; ownerEmail: string | null }[]> {
    const rows = await this.db
      .selectFrom('project_members as m')
      .innerJoin('projects as p', 'p.id', 'm.project_id')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'p.user_id').on('u.deleted_at', 'is', null))
      .select(['m.project_id', 'm.role', 'p.name', 'u.email'])
      .where('m.member_id', '=', memberId)
      .execute();
    // By name as both engines sort names (their collations differ: core/name-order.ts), then by id.
    return rows
      .map((r) => ({ projectId: r.project_id, name: r.name, role: r.role, ownerEmail: r.email }))
      .sort((a, b) => compareNames(a.name, b.name) || (a.projectId < b.projectId ? -1 : 1));
  }

  /** Removes a user or a group from every project (the account or group is gone). */
  async removeEverywhere(memberId: string): Promise<void> {
    await this.db.deleteFrom('project_members').where('member_id', '=', memberId).execute();
  }
}
