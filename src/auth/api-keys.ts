import type { AuditLog } from '../core/audit.js';
import { type Clock, toIso } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { DAY_MS, type KeyExpiry, MAX_KEY_DAYS } from '../core/key-expiry.js';
import { randomBase62, sha256Hex } from '../core/secrets.js';
import type { ApiKeyRecord, ApiKeyStore } from '../store/sql/api-keys.js';
import type { CredentialRefused, Principal } from './principal.js';
import { DEFAULT_SCOPES, type Scope } from './scopes.js';

export const API_KEY_PREFIX = 'dsk_';
const KEY_BODY_LENGTH = 43;
const API_KEY_PATTERN = /^dsk_[0-9A-Za-z]{43}$/;

export interface IssuedApiKey {
  /** The full key. Returned once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

export interface KeyOptions {
  scopes?: readonly Scope[];
  /** Limits the key to these projects (the caller checked its user may read them); null: every project. */
  projectIds?: string[] | null;
  expires?: KeyExpiry;
}

export function looksLikeApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** `2027-01-05 14:03 UTC`: said in a header, so ASCII. */
const utcMinute = (ms: number): string => `${toIso(ms).replace('T', ' ').slice(0, 16)} UTC`;

/** API keys: `dsk_` + 43 base62 chars (≈ 256 bits). Only the SHA-256 is stored; prefix and last 4 identify it in lists. */
export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly now: Clock,
    /** Where keys made and revoked are recorded. */
    private readonly audit: AuditLog,
  ) {}

  /** A new key, with the document scopes given (default: both), for every project or some, expiring or not. */
  async issue(userId: string, name: string | null, { scopes = DEFAULT_SCOPES, projectIds = null, expires = 'never' }: KeyOptions = {}): Promise<IssuedApiKey> {
    const createdAt = this.now();
    const expiresAt = this.expiresAtFor(expires, createdAt);
    const key = API_KEY_PREFIX + randomBase62(KEY_BODY_LENGTH);
    const record = await this.store.create({
      userId,
      name,
      prefix: key.slice(0, API_KEY_PREFIX.length + 4),
      last4: key.slice(-4),
      keyHash: sha256Hex(key),
      scopes: [...scopes],
      projectIds,
      expiresAt,
      createdAt,
    });
    await this.audit.record({
      type: 'api_key.created',
      target: { type: 'api_key', id: record.id, label: name ?? record.prefix },
      details: { owner: userId, scopes: [...scopes], project_ids: projectIds, expires_at: expiresAt === null ? null : toIso(expiresAt) },
    });
    return { key, record };
  }

  /** The moment a key made now expires (null: never); a moment already past or more than MAX_KEY_DAYS away is refused. */
  expiresAtFor(expires: KeyExpiry, now = this.now()): number | null {
    if (expires === 'never') return null;
    if ('days' in expires) {
      if (!Number.isInteger(expires.days) || expires.days < 1 || expires.days > MAX_KEY_DAYS) throw new AppError('invalid_request', `a key lasts 1 to ${MAX_KEY_DAYS} days, not ${expires.days}`);
      return now + expires.days * DAY_MS;
    }
    if (expires.at <= now) throw new AppError('invalid_request', `the expiry ${toIso(expires.at)} has already passed: give a moment in the future`);
    if (expires.at > now + MAX_KEY_DAYS * DAY_MS) throw new AppError('invalid_request', `the expiry ${toIso(expires.at)} is more than ${MAX_KEY_DAYS} days away`);
    return expires.at;
  }

  /** Whether a key has expired by now (its owner's lists say so). */
  expired(record: Pick<ApiKeyRecord, 'expiresAt'>): boolean {
    return record.expiresAt !== null && record.expiresAt <= this.now();
  }

  list(userId: string): Promise<ApiKeyRecord[]> {
    return this.store.listActive(userId);
  }

  async revoke(userId: string, id: string): Promise<boolean> {
    const revoked = await this.store.revoke(userId, id);
    if (revoked) await this.audit.record({ type: 'api_key.revoked', target: { type: 'api_key', id }, details: { owner: userId } });
    return revoked;
  }

  /**
   * Bearer resolver for API keys. The lookup is by SHA-256 of the presented value, so timing
   * reveals nothing about stored keys; a revoked key stops matching at once. An expired key is refused saying
   * when it expired, so a broken CI job says why: only someone holding the key learns that.
   */
  async resolve(credential: string): Promise<Principal | CredentialRefused | null> {
    if (!looksLikeApiKey(credential)) return null;
    const record = await this.store.findActiveByHash(sha256Hex(credential));
    if (!record) return null;
    if (this.expired(record)) return { refused: `the API key expired on ${utcMinute(record.expiresAt!)}` };
    await this.store.touch(record);
    return {
      userId: record.userId,
      scopes: record.scopes as Scope[],
      kind: 'api_key',
      credentialId: record.id,
      ...(record.expiresAt === null ? {} : { expiresAt: record.expiresAt }),
      resource: null,
      projectLimit: record.projectIds,
    };
  }
}
