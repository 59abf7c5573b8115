import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

/** Browsers each account signed in from (`known_devices`), by the SHA-256 of the account id and the browser's cookie. */
export class KnownDeviceStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Records a sign-in from this browser; true when the account had not signed in from it before. */
  async seen(id: string, userId: string, userAgent: string | null): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .updateTable('known_devices')
      .set({ last_seen_at: now })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return false;
    // New only for the one sign-in whose row this is: another from the same browser at once (another replica) made it first.
    const made = await this.db
      .insertInto('known_devices')
      .values({ id, user_id: userId, user_agent: userAgent?.slice(0, 400) ?? null, created_at: now, last_seen_at: now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(made.numInsertedOrUpdatedRows ?? 0) > 0;
  }
}
