/**
 * Quotas (docs/operations.md#quotas): what the live documents an account uploaded, or a project holds, may add up to.
 * Checked when an upload is accepted, before anything of it is stored, on every surface (REST, web, MCP, sources all
 * go through DocumentService.accept): past a quota the whole upload is refused with a 507 `quota_exceeded` that names
 * the quota, and nothing of it is kept. Two uploads at once may both fit alone and together pass a quota by one
 * upload's size: a quota is a budget, not a hard disk limit.
 */
import { formatBytes } from '../core/bytes.js';
import { AppError } from '../core/errors.js';
import type { AccountOverviewStore } from '../store/sql/account-overview.js';
import type { QuotaStore } from '../store/sql/quotas.js';

export interface QuotaDeps {
  store: QuotaStore;
  usage: Pick<AccountOverviewStore, 'usageOf'>;
  /** `--quota-default`: the quota of an account without one of its own (bytes); null: none. */
  defaultUserBytes: number | null;
}

export class Quotas {
  constructor(private readonly deps: QuotaDeps) {}

  /** The quota that applies to an account: its own, else the default; null: none. */
  userQuota(own: number | null): number | null {
    return own ?? this.deps.defaultUserBytes;
  }

  /** Throws `quota_exceeded` when `bytes` more, uploaded by this account into this project, would pass a quota. */
  async check(userId: string, projectId: string, bytes: number): Promise<void> {
    const limits = await this.deps.store.limits(userId, projectId);
    if (!limits) return;
    const userQuota = this.userQuota(limits.user.quotaBytes);
    if (userQuota !== null) {
      const used = (await this.deps.usage.usageOf('user_id', [userId])).get(userId)?.bytes ?? 0;
      if (used + bytes > userQuota) throw quotaExceeded(`the quota of ${limits.user.email}`, 'user', userQuota, used, bytes);
    }
    if (limits.project.quotaBytes !== null) {
      const used = (await this.deps.usage.usageOf('project_id', [projectId])).get(projectId)?.bytes ?? 0;
      if (used + bytes > limits.project.quotaBytes) throw quotaExceeded(`the quota of the project ${limits.project.name}`, 'project', limits.project.quotaBytes, used, bytes);
    }
  }
}

function quotaExceeded(quota: string, scope: 'user' | 'project', limit: number, used: number, bytes: number): AppError {
  return new AppError(
    'quota_exceeded',
    `over ${quota} (${formatBytes(limit)}: ${formatBytes(used)} used, this upload ${formatBytes(bytes)}), so nothing of it was stored; delete documents or ask an admin to raise the quota`,
    { expose: true, logLevel: 'warn', details: { quota: { scope, limit_bytes: limit, used_bytes: used, upload_bytes: bytes } } },
  );
}

export const isQuotaExceeded = (err: unknown): err is AppError => err instanceof AppError && err.code === 'quota_exceeded';
