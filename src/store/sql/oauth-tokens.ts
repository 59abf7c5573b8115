import { sql } from 'kysely';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export type TokenKind = 'access' | 'refresh';

export interface OAuthTokenRecord {
  tokenHash: string;
  kind: TokenKind;
  grantId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  revokedAt: number | null;
  /** When the token's grant was revoked (which revokes the token too). */
  grantRevokedAt: number | null;
  /** RFC 8707 resource the token is for; null = the REST API. */
  resource: string | null;
}

export interface ConnectedApp {
  clientId: string;
  clientName: string;
  scopes: string[];
  /** First consent still in force. */
  grantedAt: number;
  /** Most recent token issued under it. */
  lastIssuedAt: number;
}

const split = (s: string) => s.split(' ').filter(Boolean);

/** OAuth grants (one per exchanged authorization code) and the access/refresh tokens issued under them. */
export class OAuthTokenStore {
  constructor(private readonly db: Db) {}

  async createGrant(g: { id: string; userId: string; clientId: string; scopes: string[]; createdAt: number; resource: string | null }): Promise<void> {
    await this.db
      .insertInto('oauth_grants')
      .values({ id: g.id, user_id: g.userId, client_id: g.clientId, scopes: g.scopes.join(' '), created_at: g.createdAt, revoked_at: null, resource: g.resource })
      .execute();
  }

  async insertToken(t: Omit<OAuthTokenRecord, 'usedAt' | 'revokedAt' | 'grantRevokedAt'>): Promise<void> {
    await this.db
      .insertInto('oauth_tokens')
      .values({
        token_hash: t.tokenHash,
        kind: t.kind,
        grant_id: t.grantId,
        client_id: t.clientId,
        user_id: t.userId,
        scopes: t.scopes.join(' '),
        created_at: t.createdAt,
        expires_at: t.expiresAt,
        used_at: null,
        revoked_at: null,
        resource: t.resource,
      })
      .execute();
  }

  /**
   * The token with its grant's revocation. `forUpdate` (inside a transaction that may rotate the token) locks
   * the token's row until that transaction ends, so a concurrent refresh with the same token in another process
   * waits and then sees it used.
   */
  async find(tokenHash: string, opts: { forUpdate?: boolean } = {}): Promise<OAuthTokenRecord | null> {
    const row = await this.db
      .selectFrom('oauth_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .innerJoin('users as u', 'u.id', 't.user_id')
      .selectAll('t')
      // A disabled (or deleted) user's grants count as revoked, whatever their rows say.
      .select((eb) => eb.fn.coalesce('g.revoked_at', 'u.disabled_at').as('grant_revoked_at'))
      .where('t.token_hash', '=', tokenHash)
      .$if(!!opts.forUpdate && dialectOf(this.db).lockRows, (q) => q.forUpdate(['t']))
      .executeTakeFirst();
    if (!row) return null;
    return {
      tokenHash: row.token_hash,
      kind: row.kind,
      grantId: row.grant_id,
      clientId: row.client_id,
      userId: row.user_id,
      scopes: split(row.scopes),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      usedAt: row.used_at,
      revokedAt: row.revoked_at,
      grantRevokedAt: row.grant_revoked_at,
      resource: row.resource,
    };
  }

  /** Marks a refresh token rotated; false when it already was (the reuse guard). */
  async markUsed(tokenHash: string, at: number): Promise<boolean> {
    const res = await this.db.updateTable('oauth_tokens').set({ used_at: at }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async revokeToken(tokenHash: string, at: number): Promise<void> {
    await this.db.updateTable('oauth_tokens').set({ revoked_at: at }).where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).execute();
  }

  /** Revokes a grant and, with it, every token issued under it. */
  async revokeGrant(grantId: string, at: number): Promise<void> {
    await this.db.updateTable('oauth_grants').set({ revoked_at: at }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
    await this.db.updateTable('oauth_tokens').set({ revoked_at: at }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
  }

  /**
   * Revokes every grant of a user, with their tokens (the account is disabled or deleted); how many were live. The
   * codes not exchanged yet go first: exchanged later (once the account is enabled again), each would be a live grant.
   */
  async revokeAllOfUser(userId: string, at: number): Promise<number> {
    await this.db.deleteFrom('oauth_codes').where('user_id', '=', userId).where('used_at', 'is', null).execute();
    const grants = await this.db.selectFrom('oauth_grants').select('id').where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
    for (const g of grants) await this.revokeGrant(g.id, at);
    return grants.length;
  }

  /** Revokes every grant a user gave one client (Connected apps → Revoke). */
  async revokeUserClient(userId: string, clientId: string, at: number): Promise<number> {
    const grants = await this.db
      .selectFrom('oauth_grants')
      .select('id')
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .execute();
    for (const g of grants) await this.revokeGrant(g.id, at);
    return grants.length;
  }

  /**
   * Applications holding a live grant of the user: not revoked and with at least one token that
   * is neither revoked nor expired. Scopes are the union over that client's live grants.
   */
  async listConnected(userId: string, now: number): Promise<ConnectedApp[]> {
    const rows = await this.db
      .selectFrom('oauth_grants as g')
      .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
      .innerJoin('oauth_tokens as t', 't.grant_id', 'g.id')
      .select([
        'g.client_id',
        'c.name',
        // string_agg: PostgreSQL, and SQLite since 3.44 (better-sqlite3 bundles a newer one).
        sql<string>`string_agg(g.scopes, ' ')`.as('scopes'),
        sql<number>`min(g.created_at)`.as('granted_at'),
        sql<number>`max(t.created_at)`.as('last_issued_at'),
      ])
      .where('g.user_id', '=', userId)
      .where('g.revoked_at', 'is', null)
      .where('t.revoked_at', 'is', null)
      .where('t.expires_at', '>', now)
      .groupBy(['g.client_id', 'c.name'])
      .orderBy('c.name')
      .execute();
    return rows.map((r) => ({
      clientId: r.client_id,
      clientName: r.name,
      scopes: [...new Set(split(r.scopes))],
      grantedAt: Number(r.granted_at),
      lastIssuedAt: Number(r.last_issued_at),
    }));
  }

  /** Drops tokens that expired before `before` (nothing can use them any more). */
  async purgeExpired(before: number): Promise<number> {
    const res = await this.db.deleteFrom('oauth_tokens').where('expires_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
