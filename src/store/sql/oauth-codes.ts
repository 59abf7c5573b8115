import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { OAuthCodesTable } from './schema.js';

export interface AuthorizationCodeRecord {
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  /** The S256 code_challenge sent to the authorize endpoint, if any. */
  codeChallenge: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  grantId: string | null;
  /** RFC 8707 resource the tokens will be for; null = the REST API. */
  resource: string | null;
}

type Row = OAuthCodesTable;

const toRecord = (r: Row): AuthorizationCodeRecord => ({
  codeHash: r.code_hash,
  clientId: r.client_id,
  userId: r.user_id,
  redirectUri: r.redirect_uri,
  scopes: r.scopes.split(' ').filter(Boolean),
  codeChallenge: r.code_challenge,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  grantId: r.grant_id,
  resource: r.resource,
});

/** Authorization codes, by SHA-256 of the code. Callers consume them inside a transaction. */
export class OAuthCodeStore {
  constructor(private readonly db: Db) {}

  async create(c: Omit<AuthorizationCodeRecord, 'usedAt' | 'grantId'>): Promise<void> {
    await this.db
      .insertInto('oauth_codes')
      .values({
        code_hash: c.codeHash,
        client_id: c.clientId,
        user_id: c.userId,
        redirect_uri: c.redirectUri,
        scopes: c.scopes.join(' '),
        code_challenge: c.codeChallenge,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
        used_at: null,
        grant_id: null,
        resource: c.resource,
      })
      .execute();
  }

  /**
   * The code's record. `forUpdate` (inside a transaction that may consume the code) locks the row until that
   * transaction ends, so a concurrent exchange of the same code in another process waits and then sees it used.
   */
  async find(codeHash: string, opts: { forUpdate?: boolean } = {}): Promise<AuthorizationCodeRecord | null> {
    const row = await this.db
      .selectFrom('oauth_codes')
      .selectAll()
      .where('code_hash', '=', codeHash)
      .$if(!!opts.forUpdate && dialectOf(this.db).lockRows, (q) => q.forUpdate())
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Marks the code used by `grantId`; false when someone used it first (the single-use guard). */
  async markUsed(codeHash: string, grantId: string, at: number): Promise<boolean> {
    const res = await this.db
      .updateTable('oauth_codes')
      .set({ used_at: at, grant_id: grantId })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Deletes the codes a user's approvals gave a client that it has not exchanged yet. */
  async deleteUnused(userId: string, clientId: string): Promise<void> {
    await this.db.deleteFrom('oauth_codes').where('user_id', '=', userId).where('client_id', '=', clientId).where('used_at', 'is', null).execute();
  }

  /**
   * Deletes codes that expired before `before`. Callers pass a time well in the past, so that a
   * late replay of a used code is still recognised as reuse (and revokes its grant).
   */
  async purgeExpired(before: number): Promise<number> {
    const res = await this.db.deleteFrom('oauth_codes').where('expires_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
