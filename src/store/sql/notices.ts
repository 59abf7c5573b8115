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
 * Where a page of a person's notices ends: the time its last notice was last told and its id. Lists go by the time
 * last told, newest first, as telling again moves a notice to the top; the id orders notices told in the same
 * millisecond, and stays the notice's own however often it is told.
 */
export interface NoticePosition {
  at: number;
  id: string;
}

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
    const old = await this.db.selectFrom('notices').select('id').where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(KEPT).limit(1000).execute();
    if (old.length) await this.db.deleteFrom('notices').where('id', 'in', old.map((o) => o.id)).where('read_at', 'is not', null).execute();
  }

  async unreadCount(userId: string): Promise<number> {
    const row = await this.db.selectFrom('notices').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A person's notices, the last told first; `after`: those after this position (the next page of the bell's list). */
  async list(userId: string, limit: number, after?: NoticePosition): Promise<Notice[]> {
    let q = this.db.selectFrom('notices').selectAll().where('user_id', '=', userId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.at, after.id)));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
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

  /** How many of a person's notices were told (or told again) after `at`: those a list begun then has not shown. */
  async toldSince(userId: string, at: number): Promise<number> {
    const row = await this.db.selectFrom('notices').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('created_at', '>', at).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Marks a person's notices read: all of them, or those last told at `through` or before (the newest a page showed:
   * one told again since is news the person has not seen). How many were unread.
   */
  async markRead(userId: string, through?: number): Promise<number> {
    let q = this.db.updateTable('notices').set({ read_at: this.now() }).where('user_id', '=', userId).where('read_at', 'is', null);
    if (through !== undefined) q = q.where('created_at', '<=', through);
    return Number((await q.executeTakeFirst()).numUpdatedRows);
  }
}
