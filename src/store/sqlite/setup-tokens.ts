import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

/** One-time first-run setup tokens (hashed). A new token replaces any unused one. */
export class SetupTokenStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async replace(tokenHash: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('setup_tokens').where('used_at', 'is', null).execute();
      await trx.insertInto('setup_tokens').values({ token_hash: tokenHash, created_at: this.now(), used_at: null }).execute();
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

  /** Marks the token used; true only for the single caller that consumed it. */
  async consume(tokenHash: string): Promise<boolean> {
    const res = await this.db
      .updateTable('setup_tokens')
      .set({ used_at: this.now() })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
