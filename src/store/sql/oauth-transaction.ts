import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import { OAuthClientStore } from './oauth-clients.js';
import { OAuthCodeStore } from './oauth-codes.js';
import { OAuthTokenStore } from './oauth-tokens.js';

export interface OAuthStores {
  clients: OAuthClientStore;
  codes: OAuthCodeStore;
  tokens: OAuthTokenStore;
}

/**
 * The OAuth stores, plus a way to run several steps as one transaction. A code or refresh token checked and
 * consumed inside `transaction` cannot be consumed twice by concurrent requests, in this process or another:
 * on SQLite, Kysely runs the transaction on its single connection, so transactions never interleave; on
 * PostgreSQL (READ COMMITTED, several replicas) the transaction reads what it consumes with `forUpdate`, which
 * locks that row until it commits, and the consuming update is conditional as well.
 */
export interface OAuthStoreSet extends OAuthStores {
  transaction<T>(fn: (stores: OAuthStores) => Promise<T>): Promise<T>;
}

export function openOAuthStores(db: Db, now: Clock): OAuthStoreSet {
  const bind = (d: Db): OAuthStores => ({ clients: new OAuthClientStore(d, now), codes: new OAuthCodeStore(d), tokens: new OAuthTokenStore(d) });
  return {
    ...bind(db),
    transaction: (fn) => db.transaction().execute((trx) => fn(bind(trx))),
  };
}
