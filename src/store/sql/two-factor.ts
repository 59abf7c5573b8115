import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export interface TotpRow {
  userId: string;
  secretSealed: string;
  enabledAt: number | null;
  lastStep: number | null;
}

/**
 * Second factors that are not passkeys: an account's authenticator-app secret (sealed by the caller) and its
 * one-time recovery codes (their hashes). Consuming either is one conditional UPDATE, so two requests presenting the
 * same code at once, on one replica or two, see it accepted once.
 */
export class TwoFactorStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async totp(userId: string): Promise<TotpRow | null> {
    const row = await this.db.selectFrom('totp_secrets').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row ? { userId: row.user_id, secretSealed: row.secret_sealed, enabledAt: row.enabled_at === null ? null : Number(row.enabled_at), lastStep: row.last_step === null ? null : Number(row.last_step) } : null;
  }

  /** A new secret being set up: replaces one not yet enabled; false when one is enabled already. */
  async startTotp(userId: string, secretSealed: string): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .insertInto('totp_secrets')
      .values({ user_id: userId, secret_sealed: secretSealed, created_at: now, enabled_at: null, last_step: null })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_sealed: secretSealed, created_at: now, last_step: null }).where('totp_secrets.enabled_at', 'is', null))
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * Records that the code of time step `step` was accepted (enabling a secret being set up): true only for the
   * first request to present a step later than every one accepted before, and only while the secret is still the
   * one the code was checked against (`secretSealed`): a new secret set up meanwhile (another tab, another replica)
   * is not put in force by a code of the one it replaced.
   */
  async acceptStep(userId: string, step: number, secretSealed: string): Promise<boolean> {
    const res = await this.db
      .updateTable('totp_secrets')
      .set((eb) => ({ last_step: step, enabled_at: eb.fn.coalesce('enabled_at', eb.val(this.now())) }))
      .where('user_id', '=', userId)
      .where('secret_sealed', '=', secretSealed)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async removeTotp(userId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('totp_secrets').where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /**
   * The account's first recovery codes: stored, and true, only while it has none left. The account's row is locked
   * first, so two second factors set up at once (two tabs, two replicas) store one set: checked unlocked, both found
   * none and the second set replaced the first, whose codes had been shown as working.
   */
  async addRecoveryCodesIfNone(userId: string, hashes: readonly string[]): Promise<boolean> {
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      await trx.selectFrom('users').select('id').where('id', '=', userId).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).execute();
      const left = await trx.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
      if (left) return false;
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx.insertInto('recovery_codes').values(hashes.map((code_hash) => ({ code_hash, user_id: userId, created_at: now, used_at: null }))).execute();
      return true;
    });
  }

  /** Replaces the account's recovery codes with these hashes. */
  async replaceRecoveryCodes(userId: string, hashes: readonly string[]): Promise<void> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      if (hashes.length) await trx.insertInto('recovery_codes').values(hashes.map((code_hash) => ({ code_hash, user_id: userId, created_at: now, used_at: null }))).execute();
    });
  }

  /** Uses a recovery code: true for the one request that used it, never again. */
  async useRecoveryCode(userId: string, hash: string): Promise<boolean> {
    const res = await this.db.updateTable('recovery_codes').set({ used_at: this.now() }).where('code_hash', '=', hash).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async recoveryCodesLeft(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async removeRecoveryCodes(userId: string): Promise<number> {
    const res = await this.db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Whether the account has a second factor: an enabled authenticator app or a passkey. */
  async hasSecondFactor(userId: string): Promise<boolean> {
    const row = await this.db
      .selectNoFrom((eb) => [
        eb.exists(eb.selectFrom('totp_secrets').select('user_id').where('user_id', '=', userId).where('enabled_at', 'is not', null)).as('totp'),
        eb.exists(eb.selectFrom('passkeys').select('id').where('user_id', '=', userId)).as('passkey'),
      ])
      .executeTakeFirstOrThrow();
    return Boolean(Number(row.totp)) || Boolean(Number(row.passkey));
  }

  /** Whether any authenticator-app secret is stored (sealed under the library's secrets key). */
  async anySealed(): Promise<boolean> {
    return (await this.db.selectFrom('totp_secrets').select('user_id').limit(1).executeTakeFirst()) !== undefined;
  }
}
