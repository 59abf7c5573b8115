import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

/** One-time password reset links (`password_resets`): only the SHA-256 of a link's token is kept. */
export class PasswordResetStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Records a link for the account; its earlier unused ones stop working. `also` runs in the same transaction (the
   * mail that carries the link is queued there, so there is never a link without its mail, nor a mail without a link)
   * and is told the stored end, which is also returned: what the mail and the caller show is what is kept.
   */
  async create(tokenHash: string, userId: string, by: string | null, ttlMs: number, also?: (trx: Db, expiresAt: number) => Promise<unknown>): Promise<number> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('password_resets').where('user_id', '=', userId).where('used_at', 'is', null).execute();
      await trx.insertInto('password_resets').values({ token_hash: tokenHash, user_id: userId, created_by: by, created_at: now, expires_at: now + ttlMs, used_at: null }).execute();
      await also?.(trx, now + ttlMs);
    });
    return now + ttlMs;
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

  /** When the account's newest link the person asked for themselves was made (a throttle on "Forgot password?"); null: none open. */
  async lastAskedAt(userId: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('password_resets')
      .select((eb) => eb.fn.max('created_at').as('at'))
      .where('user_id', '=', userId)
      .where('created_by', 'is', null)
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.now())
      .executeTakeFirst();
    return row?.at == null ? null : Number(row.at);
  }

  async purgeExpired(): Promise<void> {
    await this.db.deleteFrom('password_resets').where('expires_at', '<=', this.now()).execute();
  }
}
