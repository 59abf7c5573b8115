/**
 * Quotas (docs/operations.md#quotas): what the live documents an account uploaded, or a project holds, may add up to.
 * Every write that adds live bytes is held to them: an upload (REST, web, MCP and sources all go through
 * DocumentService.accept), a source's new version of a file, a restore from the trash, a move into another project,
 * an e-mail's attachments. An upload is checked whole first, before anything of it is stored; then each write
 * decides again in its own transaction, its account's and project's rows locked (store/sql/quotas.ts claimQuota),
 * so two writes at once, in one process or in two replicas, cannot pass a quota together.
 */
import { isQuotaExceeded, type QuotaStore } from '../store/sql/quotas.js';

export { isQuotaExceeded };

export interface QuotaDeps {
  store: QuotaStore;
  /** `--quota-default`: the quota of an account without one of its own (bytes); null: none. */
  defaultUserBytes: number | null;
}

export class Quotas {
  constructor(private readonly deps: QuotaDeps) {}

  /** `--quota-default` (bytes), which the writes' own checks apply to accounts without a quota of their own. */
  get defaultUserBytes(): number | null {
    return this.deps.defaultUserBytes;
  }

  /** The quota that applies to an account: its own, else the default; null: none. */
  userQuota(own: number | null): number | null {
    return own ?? this.deps.defaultUserBytes;
  }

  /**
   * Throws `quota_exceeded` when what an upload by this account into this project adds (`measure`, asked only when a
   * quota applies) would pass a quota; true when a quota applies (the upload's writes then claim it again as they are
   * made), false when none does.
   */
  async check(userId: string, projectId: string, measure: () => Promise<number>): Promise<boolean> {
    const limits = await this.deps.store.limits(userId, projectId);
    if (!limits || (this.userQuota(limits.user.quotaBytes) === null && limits.project.quotaBytes === null)) return false;
    const bytes = await measure();
    // Nothing new (every file a duplicate) fits even a quota an admin lowered below what is held.
    if (bytes > 0) await this.deps.store.check([{ userId, projectId, bytes }], this.deps.defaultUserBytes);
    return true;
  }
}
