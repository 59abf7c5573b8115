import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

/** One-time password reset links (`password_resets`): only the SHA-256 of a link's token is kept. */
export class PasswordResetStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Records a link for the account; its earlier unused ones stop working. `also` runs in the same transaction (the
   * mail that carries the link is queued there, so there is never a link without its mail, nor a mail without a link)
   * and is told the stored end, which is also returned: what the mail and the caller show is what is kept. With
   * `askedGapMs` (a link the person asked for themselves) nothing is made, and null returned, while a link they asked
   * for less than that long ago is open: the throttle on "Forgot password?".
   *
   * The account's row is locked first, so links made for one account at once (on any replica) are made one after
   * the other, each seeing the one before: unlocked, two requests at once both found no recent link and both mailed
   * one (the throttle passed by as many requests as were sent together), and each kept the other's link working.
   */
  async create(tokenHash: string, userId: string, by: string | null, ttlMs: number, also?: (trx: Db, expiresAt: number) => Promise<unknown>, opts: { askedGapMs?: number } = {}): Promise<number | null> {
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      await trx.selectFrom('users').select('id').where('id', '=', userId).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).execute();
      if (opts.askedGapMs !== undefined) {
        const last = await trx
          .selectFrom('password_resets')
          .select('token_hash')
          .where('user_id', '=', userId)
          .where('created_by', 'is', null)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .where('created_at', '>', now - opts.askedGapMs)
          .executeTakeFirst();
        if (last) return null;
      }
      await trx.deleteFrom('password_resets').where('user_id', '=', userId).where('used_at', 'is', null).execute();
      await trx.insertInto('password_resets').values({ token_hash: tokenHash, user_id: userId, created_by: by, created_at: now, expires_at: now + ttlMs, used_at: null }).execute();
      await also?.(trx, now + ttlMs);
      return now + ttlMs;
    });
  }

  /** The account an unused, unexpired link is for; null otherwise. */
  async userFor(tokenHash: string): Promise<string | null> {
    const row = await this.db.selectFrom('password_resets').select('user_id').where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', this.now()).executeTakeFirst();
    return row?.user_id ?? null;
  }

  /** Uses a link: its account for the one caller that did, null for any other (or a used, expired, unknown link). */
  async consume(tokenHash: string): Promise<string | null> {
    const now = this.now();
    const rows = await this.db.updateTable('password_resets').set({ used_at: now }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now).returning('user_id').execute();
    return rows[0]?.user_id ?? null;
  }

  async purgeExpired(): Promise<void> {
    await this.db.deleteFrom('password_resets').where('expires_at', '<=', this.now()).execute();
  }
}
