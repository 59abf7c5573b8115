import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';

/** A notice as the bell lists it. */
export interface Notice {
  id: string;
  kind: string;
  projectId: string | null;
  subjectId: string | null;
  message: string;
  link: string | null;
  createdAt: number;
  readAt: number | null;
}

export interface NewNotice {
  kind: string;
  projectId: string | null;
  subjectId: string | null;
  message: string;
  link: string | null;
}

/** Notices kept per person: the newest; older read ones go (the bell is not an archive). */
const KEPT = 200;

/**
 * What the web's bell shows each person (`notices`, migration 019): a source of theirs that holds deletions or keeps
 * failing. One unread notice per person, kind and subject: telling again updates it rather than piling up.
 */
export class NoticeStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Tells each of `userIds`; who got a new notice (not one updated). */
  async notify(userIds: readonly string[], notice: NewNotice): Promise<string[]> {
    const now = this.now();
    const fresh: string[] = [];
    for (const userId of new Set(userIds)) {
      let q = this.db.updateTable('notices').set({ message: notice.message, link: notice.link, created_at: now }).where('user_id', '=', userId).where('kind', '=', notice.kind).where('read_at', 'is', null);
      q = notice.subjectId === null ? q.where('subject_id', 'is', null) : q.where('subject_id', '=', notice.subjectId);
      if (Number((await q.executeTakeFirst()).numUpdatedRows) > 0) continue;
      await this.db
        .insertInto('notices')
        .values({ id: newId('ntc', now), user_id: userId, kind: notice.kind, project_id: notice.projectId, subject_id: notice.subjectId, message: notice.message, link: notice.link, created_at: now, read_at: null })
        .execute();
      fresh.push(userId);
      await this.trim(userId);
    }
    return fresh;
  }

  private async trim(userId: string): Promise<void> {
    const old = await this.db.selectFrom('notices').select('id').where('user_id', '=', userId).orderBy('id', 'desc').offset(KEPT).limit(1000).execute();
    if (old.length) await this.db.deleteFrom('notices').where('id', 'in', old.map((o) => o.id)).where('read_at', 'is not', null).execute();
  }

  async unreadCount(userId: string): Promise<number> {
    const row = await this.db.selectFrom('notices').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A person's notices, the newest first; `before`: those older than this one (the next page of the bell's list). */
  async list(userId: string, limit: number, before?: string): Promise<Notice[]> {
    let q = this.db.selectFrom('notices').selectAll().where('user_id', '=', userId);
    if (before) q = q.where('id', '<', before);
    const rows = await q.orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      projectId: r.project_id,
      subjectId: r.subject_id,
      message: r.message,
      link: r.link,
      createdAt: Number(r.created_at),
      readAt: r.read_at === null ? null : Number(r.read_at),
    }));
  }

  /** Marks a person's notices read: these, or all of them. How many were unread. */
  async markRead(userId: string, ids: readonly string[] | 'all'): Promise<number> {
    let q = this.db.updateTable('notices').set({ read_at: this.now() }).where('user_id', '=', userId).where('read_at', 'is', null);
    if (ids !== 'all') {
      if (ids.length === 0) return 0;
      q = q.where('id', 'in', [...ids]);
    }
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }
}
