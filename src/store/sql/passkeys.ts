import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { PasskeysTable } from './schema.js';

export interface PasskeyRecord {
  id: string;
  userId: string;
  /** base64url, as the browser names the credential. */
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  backedUp: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

const toRecord = (r: PasskeysTable): PasskeyRecord => ({
  id: r.id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: JSON.parse(r.transports) as string[],
  name: r.name,
  backedUp: Number(r.backed_up) === 1,
  createdAt: Number(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
});

/** WebAuthn credentials of accounts (whether a passkey alone signs an account in is the account's: UserStore). */
export class PasskeyStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Stores a new passkey; null when that credential is registered already (to any account). */
  async add(p: Pick<PasskeyRecord, 'userId' | 'credentialId' | 'publicKey' | 'counter' | 'transports' | 'name' | 'backedUp'>): Promise<PasskeyRecord | null> {
    const now = this.now();
    const row: PasskeysTable = {
      id: newId('pk', now),
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: JSON.stringify(p.transports),
      name: p.name,
      backed_up: p.backedUp ? 1 : 0,
      created_at: now,
      last_used_at: null,
    };
    try {
      await this.db.insertInto('passkeys').values(row).execute();
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return null;
      throw err;
    }
    return toRecord(row);
  }

  async list(userId: string): Promise<PasskeyRecord[]> {
    return (await this.db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(toRecord);
  }

  async byCredentialId(credentialId: string): Promise<PasskeyRecord | null> {
    const row = await this.db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /**
   * After a sign-in with it: the authenticator's new signature counter and the time, if the stored counter is still
   * the one the sign-in was verified against (`from`). A counter that does not move forward (a cloned authenticator)
   * is the verifier's to refuse, before this; two sign-ins verified at once against the same counter are this
   * check's: the second finds it moved and gets false (written unconditionally, it could put the counter back).
   */
  async used(id: string, from: number, counter: number): Promise<boolean> {
    const res = await this.db.updateTable('passkeys').set({ counter, last_used_at: this.now() }).where('id', '=', id).where('counter', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async rename(userId: string, id: string, name: string): Promise<PasskeyRecord | null> {
    const res = await this.db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return null;
    const row = await this.db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async remove(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async removeAll(userId: string): Promise<number> {
    const res = await this.db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
