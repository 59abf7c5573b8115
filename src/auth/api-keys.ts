import type { AuditLog } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import { randomBase62, sha256Hex } from '../core/secrets.js';
import type { ApiKeyRecord, ApiKeyStore } from '../store/sql/api-keys.js';
import type { Principal } from './principal.js';
import { DEFAULT_SCOPES, type Scope } from './scopes.js';

export const API_KEY_PREFIX = 'dsk_';
const KEY_BODY_LENGTH = 43;
const API_KEY_PATTERN = /^dsk_[0-9A-Za-z]{43}$/;

export interface IssuedApiKey {
  /** The full key. Returned once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

export function looksLikeApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** API keys: `dsk_` + 43 base62 chars (≈ 256 bits). Only the SHA-256 is stored; prefix and last 4 identify it in lists. */
export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly now: Clock,
    /** Where keys made and revoked are recorded. */
    private readonly audit: AuditLog,
  ) {}

  /** A new key; `projectIds` limits it to those projects (the caller checked its user may read them). */
  async issue(userId: string, name: string | null, scopes: readonly Scope[] = DEFAULT_SCOPES, projectIds: string[] | null = null): Promise<IssuedApiKey> {
    const key = API_KEY_PREFIX + randomBase62(KEY_BODY_LENGTH);
    const record = await this.store.create({
      userId,
      name,
      prefix: key.slice(0, API_KEY_PREFIX.length + 4),
      last4: key.slice(-4),
      keyHash: sha256Hex(key),
      scopes: [...scopes],
      projectIds,
    });
    await this.audit.record({ type: 'api_key.created', target: { type: 'api_key', id: record.id, label: name ?? record.prefix }, details: { owner: userId, scopes: [...scopes], project_ids: projectIds } });
    return { key, record };
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
   * reveals nothing about stored keys; a revoked key stops matching at once.
   */
  async resolve(credential: string): Promise<Principal | null> {
    if (!looksLikeApiKey(credential)) return null;
    const record = await this.store.findActiveByHash(sha256Hex(credential));
    if (!record) return null;
    await this.store.touch(record);
    return { userId: record.userId, scopes: record.scopes as Scope[], kind: 'api_key', credentialId: record.id, resource: null, projectLimit: record.projectIds };
  }
}
