import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

/** Thrown inside `take`'s transaction to roll back the counts of an attempt that is refused. */
class Refused extends Error {
  constructor(readonly waitMs: number) {
    super('locked');
  }
}

/** Failed-login counters per key (email, client address) for login throttling. */
export class LoginAttemptStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Counts an attempt on every key before the password is checked, and says whether it may go on: 0, or the
   * wait when a key is locked (and then nothing is counted). Each key's count is one atomic upsert whose
   * RETURNING decides: the attempt goes on while the count stays within `maxFailures`, and the attempt that
   * reaches it locks the key for `lockMs`. A window older than `windowMs`, or a lock that has ended, starts the
   * count over. The upserts hold their rows until the transaction ends, so concurrent attempts on one key (from
   * any process) are counted one after another: however many arrive at once, at most `maxFailures` passwords
   * are checked. A successful login gives its attempt back with `refund`. `locking`, when given, hears the keys this
   * attempt locked (it was their last allowed one): a lockout begins if it fails (the audit log records it).
   */
  async take(keys: readonly string[], policy: ThrottlePolicy, locking?: string[]): Promise<number> {
    const now = this.now();
    const lockedUntil = now + policy.lockMs;
    const existing = sql.table('login_attempts');
    const locked = sql<boolean>`coalesce(${existing}.locked_until, 0) > ${now}`;
    const startsOver = sql<boolean>`(coalesce(${existing}.locked_until, 0) <= ${now} and (${existing}.window_start < ${now - policy.windowMs} or ${existing}.locked_until is not null))`;
    const failures = sql<number>`case when ${startsOver} then 1 else ${existing}.failures + 1 end`;
    try {
      await this.db.transaction().execute(async (trx) => {
        // Always in the same order, so two attempts never wait on each other's rows crosswise.
        for (const key of [...keys].sort()) {
          const row = await trx
            .insertInto('login_attempts')
            .values({ key, failures: 1, window_start: now, locked_until: policy.maxFailures <= 1 ? lockedUntil : null })
            .onConflict((oc) =>
              oc.column('key').doUpdateSet({
                failures,
                window_start: sql<number>`case when ${startsOver} then ${now} else ${existing}.window_start end`,
                locked_until: sql<number | null>`case when ${locked} then ${existing}.locked_until when ${failures} >= ${policy.maxFailures} then ${lockedUntil} else null end`,
              }),
            )
            .returning(['failures', 'locked_until'])
            .executeTakeFirstOrThrow();
          if (row.failures > policy.maxFailures) throw new Refused(Math.max(1, (row.locked_until ?? now) - now));
          if (Number(row.failures) === policy.maxFailures) locking?.push(key);
        }
      });
      return 0;
    } catch (err) {
      if (err instanceof Refused) return err.waitMs;
      throw err;
    }
  }

  /** Gives back an attempt counted by `take` that turned out to be a success (one conditional update). */
  async refund(key: string, policy: ThrottlePolicy): Promise<void> {
    await this.db
      .updateTable('login_attempts')
      .set({
        failures: sql<number>`case when failures > 0 then failures - 1 else 0 end`,
        locked_until: sql<number | null>`case when failures - 1 >= ${policy.maxFailures} then locked_until else null end`,
      })
      .where('key', '=', key)
      .execute();
  }

  /**
   * Deletes counters whose window began before `before` and that hold no lock still in force: every unknown e-mail
   * tried at the login form (and every address that registered a client) leaves a row, which nobody signed in sent.
   * Windows last an hour at most, so a counter that old counts nothing any more.
   */
  async purgeStale(before: number): Promise<number> {
    const res = await this.db
      .deleteFrom('login_attempts')
      .where('window_start', '<', before)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', this.now())]))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async clear(key: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('key', '=', key).execute();
  }
}
