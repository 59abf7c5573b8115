import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import type { ApiKeysTable } from './schema.js';

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string | null;
  prefix: string;
  last4: string;
  scopes: string[];
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** The projects the key is limited to; null: every project its user may read. */
  projectIds: string[] | null;
  /** When the key stops authenticating (ms); null: never. */
  expiresAt: number | null;
}

export interface NewApiKey {
  userId: string;
  name: string | null;
  prefix: string;
  last4: string;
  keyHash: string;
  scopes: string[];
  projectIds?: string[] | null;
  expiresAt?: number | null;
  /** The moment its expiry was reckoned from, so that "30 days" is 30 days to the millisecond; default: now. */
  createdAt?: number;
}

type Row = Omit<ApiKeysTable, 'key_hash'>;

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  prefix: r.prefix,
  last4: r.last4,
  scopes: r.scopes.split(' ').filter(Boolean),
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  projectIds: r.project_ids === null ? null : (JSON.parse(r.project_ids) as string[]),
  expiresAt: r.expires_at,
});

/** How stale `last_used_at` may be. */
const USE_GRANULARITY_MS = 60_000;

const COLUMNS = ['id', 'user_id', 'name', 'prefix', 'last4', 'scopes', 'created_at', 'last_used_at', 'revoked_at', 'project_ids', 'expires_at'] as const;

export class ApiKeyStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Stores a key, its name composed (NFC: core/name-spellings.ts), so a list shows one spelling whatever was typed. */
  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    const now = key.createdAt ?? this.now();
    const row: Row = {
      id: newId('key', now),
      user_id: key.userId,
      name: key.name === null ? null : key.name.normalize('NFC'),
      prefix: key.prefix,
      last4: key.last4,
      scopes: key.scopes.join(' '),
      created_at: now,
      last_used_at: null,
      revoked_at: null,
      project_ids: key.projectIds ? JSON.stringify(key.projectIds) : null,
      expires_at: key.expiresAt ?? null,
    };
    await this.db.insertInto('api_keys').values({ ...row, key_hash: key.keyHash }).execute();
    return toRecord(row);
  }

  /** A user's keys not revoked, newest first: expired ones too, so their owner sees why a script stopped working. */
  async listActive(userId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(COLUMNS)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }

  /**
   * The key with this hash, while it is not revoked and its user is neither disabled nor deleted. An expired key is
   * still found: the caller refuses it, saying when it expired.
   */
  async findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .select(COLUMNS.map((c) => `k.${c}` as const))
      .where('k.key_hash', '=', keyHash)
      .where('k.revoked_at', 'is', null)
      .where('u.disabled_at', 'is', null)
      .where('u.deleted_at', 'is', null)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Revokes every key of a user (disabled or deleted); how many were active. */
  async revokeAllOf(userId: string): Promise<number> {
    const res = await this.db.updateTable('api_keys').set({ revoked_at: this.now() }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** Revokes one of the user's keys; false when it is not theirs or already revoked. */
  async revoke(userId: string, id: string): Promise<boolean> {
    const res = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: this.now() })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /**
   * Records use at minute granularity, so a busy CI key doesn't write on every request. `key` is the record the
   * request was authenticated with: when it shows a use within the minute, no statement is sent at all (each is a
   * round trip on PostgreSQL); the condition in SQL keeps concurrent requests from writing twice.
   */
  async touch(key: Pick<ApiKeyRecord, 'id' | 'lastUsedAt'>): Promise<void> {
    const now = this.now();
    if (key.lastUsedAt !== null && key.lastUsedAt >= now - USE_GRANULARITY_MS) return;
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', key.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - USE_GRANULARITY_MS)]))
      .execute();
  }
}
