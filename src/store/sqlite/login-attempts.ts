import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** Failed-login counters per key (email, client address) for login throttling. */
export class LoginAttemptStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Counts an attempt on every key before the password is checked, in one transaction: when any key is
   * locked nothing is counted and the wait is returned; otherwise each key's count goes up (locking it at
   * the limit) and 0 is returned. Concurrent guesses therefore cannot all pass the check before the first
   * failure is recorded. A successful login gives its attempt back with `refund`.
   */
  async take(keys: readonly string[], policy: ThrottlePolicy): Promise<number> {
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('login_attempts').selectAll().where('key', 'in', [...keys]).execute();
      const wait = Math.max(0, ...rows.map((r) => (r.locked_until ?? 0) - now));
      if (wait > 0) return wait;
      for (const key of keys) {
        const row = rows.find((r) => r.key === key);
        const fresh = !row || now - row.window_start > policy.windowMs;
        const failures = fresh ? 1 : row.failures + 1;
        const values = { failures, window_start: fresh ? now : row.window_start, locked_until: failures >= policy.maxFailures ? now + policy.lockMs : null };
        await trx
          .insertInto('login_attempts')
          .values({ key, ...values })
          .onConflict((oc) => oc.column('key').doUpdateSet(values))
          .execute();
      }
      return 0;
    });
  }

  /** Gives back an attempt counted by `take` that turned out to be a success. */
  async refund(key: string, policy: ThrottlePolicy): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('login_attempts').selectAll().where('key', '=', key).executeTakeFirst();
      if (!row) return;
      const failures = Math.max(0, row.failures - 1);
      await trx
        .updateTable('login_attempts')
        .set({ failures, locked_until: failures >= policy.maxFailures ? row.locked_until : null })
        .where('key', '=', key)
        .execute();
    });
  }

  async clear(key: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('key', '=', key).execute();
  }
}
