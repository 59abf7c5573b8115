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

  /** Milliseconds until the key may try again, or 0. */
  async lockedFor(key: string): Promise<number> {
    const row = await this.db.selectFrom('login_attempts').select('locked_until').where('key', '=', key).executeTakeFirst();
    const until = row?.locked_until ?? 0;
    return Math.max(0, until - this.now());
  }

  async recordFailure(key: string, policy: ThrottlePolicy): Promise<void> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('login_attempts').selectAll().where('key', '=', key).executeTakeFirst();
      const fresh = !row || now - row.window_start > policy.windowMs;
      const failures = fresh ? 1 : row.failures + 1;
      const lockedUntil = failures >= policy.maxFailures ? now + policy.lockMs : null;
      await trx
        .insertInto('login_attempts')
        .values({ key, failures, window_start: fresh ? now : row.window_start, locked_until: lockedUntil })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({ failures, window_start: fresh ? now : row.window_start, locked_until: lockedUntil }),
        )
        .execute();
    });
  }

  async clear(key: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('key', '=', key).execute();
  }
}
