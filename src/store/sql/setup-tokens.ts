import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

/** An unused token this old is removed when another is issued. */
const UNUSED_KEPT_MS = 24 * 3600_000;

/**
 * One-time first-run setup tokens (hashed). Each daemon start issues one (every replica prints its own link);
 * using any of them uses them all, so the first account is created once however many links are out.
 */
export class SetupTokenStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Adds a token; unused ones issued more than a day ago go. */
  async issue(tokenHash: string): Promise<void> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('setup_tokens').where('used_at', 'is', null).where('created_at', '<', now - UNUSED_KEPT_MS).execute();
      await trx.insertInto('setup_tokens').values({ token_hash: tokenHash, created_at: now, used_at: null }).execute();
    });
  }

  async isValid(tokenHash: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('setup_tokens')
      .select('token_hash')
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Marks every unused token used, provided this one is among them: true only for the single caller that
   * did so. One conditional update: concurrent callers (in any process) wait for each other's row locks and
   * then find nothing left unused.
   */
  async consume(tokenHash: string): Promise<boolean> {
    const rows = await this.db
      .updateTable('setup_tokens')
      .set({ used_at: this.now() })
      .where('used_at', 'is', null)
      .where((eb) =>
        eb.exists(eb.selectFrom('setup_tokens as presented').select('presented.token_hash').where('presented.token_hash', '=', tokenHash).where('presented.used_at', 'is', null)),
      )
      .returning('token_hash')
      .execute();
    return rows.some((r) => r.token_hash === tokenHash);
  }
}
