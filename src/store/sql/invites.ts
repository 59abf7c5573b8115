import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

/** One-time invitation links (`invites`): only the SHA-256 of a link's token is kept. */
export class InviteStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Records an invitation for `email`; earlier unused ones for the same address stop working. */
  async create(tokenHash: string, email: string, by: string | null, ttlMs: number): Promise<void> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('invites').where('used_at', 'is', null).where((eb) => eb.or([eb('email', '=', email), eb('expires_at', '<=', now)])).execute();
      await trx.insertInto('invites').values({ token_hash: tokenHash, email, created_by: by, created_at: now, expires_at: now + ttlMs, used_at: null }).execute();
    });
  }

  /** The address an unused, unexpired invitation is for; null otherwise. */
  async emailFor(tokenHash: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('invites')
      .select('email')
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.now())
      .executeTakeFirst();
    return row?.email ?? null;
  }

  /** Uses an invitation: its address for the one caller that did, null for any other (or a used, expired, unknown one). */
  async consume(tokenHash: string): Promise<string | null> {
    const now = this.now();
    const rows = await this.db
      .updateTable('invites')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('email')
      .execute();
    return rows[0]?.email ?? null;
  }

  /** Open invitations, newest first (never their links: those were shown once). */
  async listOpen(): Promise<{ email: string; createdAt: number; expiresAt: number }[]> {
    const rows = await this.db
      .selectFrom('invites')
      .select(['email', 'created_at', 'expires_at'])
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.now())
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((r) => ({ email: r.email, createdAt: r.created_at, expiresAt: r.expires_at }));
  }
}
