import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import type { OAuthClientsTable } from './schema.js';

export interface OAuthClientRecord {
  id: string;
  /** Owner (Settings → Applications); null for operator-registered and built-in clients. */
  userId: string | null;
  name: string;
  /** SHA-256 of the client secret; null for public clients. */
  secretHash: string | null;
  isPublic: boolean;
  redirectUris: string[];
  /** RFC 8252 §7.3: any port on 127.0.0.1 / [::1] is accepted (native apps). */
  loopbackAnyPort: boolean;
  createdAt: number;
  updatedAt: number;
}

export type NewOAuthClient = Pick<OAuthClientRecord, 'id' | 'userId' | 'name' | 'secretHash' | 'isPublic' | 'redirectUris'>;

type Row = OAuthClientsTable;

const toRecord = (r: Row): OAuthClientRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  secretHash: r.secret_hash,
  isPublic: r.is_public === 1,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  loopbackAnyPort: r.loopback_any_port === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** OAuth clients (registered applications). */
export class OAuthClientStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async create(c: NewOAuthClient): Promise<OAuthClientRecord> {
    const now = this.now();
    const row: Row = {
      id: c.id,
      user_id: c.userId,
      name: c.name,
      secret_hash: c.secretHash,
      is_public: c.isPublic ? 1 : 0,
      redirect_uris: JSON.stringify(c.redirectUris),
      loopback_any_port: 0,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('oauth_clients').values(row).execute();
    return toRecord(row);
  }

  async find(id: string): Promise<OAuthClientRecord | null> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The applications a user registered, oldest first. */
  async listOwned(userId: string): Promise<OAuthClientRecord[]> {
    const rows = await this.db.selectFrom('oauth_clients').selectAll().where('user_id', '=', userId).orderBy('created_at', 'asc').orderBy('id').execute();
    return rows.map(toRecord);
  }

  /** Replaces the secret of a confidential client the user owns; false when not theirs. */
  async replaceSecret(userId: string, id: string, secretHash: string): Promise<boolean> {
    const res = await this.db
      .updateTable('oauth_clients')
      .set({ secret_hash: secretHash, updated_at: this.now() })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('is_public', '=', 0)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Deletes a client the user owns; its codes, grants and tokens go with it (foreign-key cascade). */
  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('oauth_clients').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }
}
