import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

export interface SessionRow {
  idHash: string;
  userId: string | null;
  expiresAt: number;
  lastSeenAt: number;
  /** What a form left for the next page to show once, sealed; null when nothing is waiting. */
  onceSealed: string | null;
}

/** How often a session's sliding expiry is written at most. */
const TOUCH_INTERVAL_MS = 60_000;

/** Server-side web sessions, keyed by the SHA-256 of the cookie value. */
export class SessionStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async create(idHash: string, userId: string | null, ttlMs: number): Promise<void> {
    const now = this.now();
    await this.db
      .insertInto('sessions')
      .values({ id_hash: idHash, user_id: userId, created_at: now, expires_at: now + ttlMs, last_seen_at: now })
      .execute();
  }

  async find(idHash: string): Promise<SessionRow | null> {
    const row = await this.db
      .selectFrom('sessions as s')
      .leftJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id_hash', 's.user_id', 's.expires_at', 's.last_seen_at', 's.once_sealed'])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', this.now())
      // A disabled user's session is over, even before its row is deleted.
      .where((eb) => eb.or([eb('s.user_id', 'is', null), eb('u.disabled_at', 'is', null)]))
      .executeTakeFirst();
    return row ? { idHash: row.id_hash, userId: row.user_id, expiresAt: row.expires_at, lastSeenAt: row.last_seen_at, onceSealed: row.once_sealed } : null;
  }

  /**
   * Sliding expiry, written at most once a minute per session to spare the disk. `session` is the row the request
   * found: seen within the minute, no statement is sent at all.
   */
  async touch(session: Pick<SessionRow, 'idHash' | 'lastSeenAt'>, ttlMs: number): Promise<void> {
    const now = this.now();
    if (session.lastSeenAt >= now - TOUCH_INTERVAL_MS) return;
    await this.db
      .updateTable('sessions')
      .set({ last_seen_at: now, expires_at: now + ttlMs })
      .where('id_hash', '=', session.idHash)
      .where('last_seen_at', '<', now - TOUCH_INTERVAL_MS)
      .execute();
  }

  async setOnce(idHash: string, sealed: string): Promise<void> {
    await this.db.updateTable('sessions').set({ once_sealed: sealed }).where('id_hash', '=', idHash).execute();
  }

  /** Clears what `setOnce` left, if it is still `sealed`; true for the one caller that cleared it. */
  async clearOnce(idHash: string, sealed: string): Promise<boolean> {
    const res = await this.db.updateTable('sessions').set({ once_sealed: null }).where('id_hash', '=', idHash).where('once_sealed', '=', sealed).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Ends every session of a user but the one kept (a password change keeps the session that made it). */
  async deleteForUser(userId: string, keepIdHash?: string): Promise<number> {
    let q = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepIdHash) q = q.where('id_hash', '!=', keepIdHash);
    const res = await q.executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpired(): Promise<number> {
    const res = await this.db.deleteFrom('sessions').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
