import type { Kysely, Transaction } from 'kysely';
import { formatBytes } from '../../core/bytes.js';
import { AppError } from '../../core/errors.js';
import { liveUsage } from './account-overview.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { Database } from './schema.js';

/** The limits that apply to an upload by one account into one project (bytes; null: none set). */
export interface QuotaLimits {
  user: { email: string; quotaBytes: number | null };
  project: { name: string; quotaBytes: number | null };
}

/**
 * Live bytes a write adds: counted against the account that uploaded them (`userId`; null when its uploads do not
 * change, as in a move) and against the project that holds them.
 */
export interface QuotaCharge {
  userId: string | null;
  projectId: string;
  bytes: number;
}

/** What a write is held to: the quotas its rows say, accounts without one of their own `--quota-default` (bytes; null: none). */
export interface QuotaTerms {
  defaultUserBytes: number | null;
}

/** How a refusal names what was refused: "this upload 16 KiB", "so nothing of it was stored". */
export interface QuotaWording {
  adds: string;
  kept: string;
}

export const UPLOAD_WORDING: QuotaWording = { adds: 'this upload', kept: 'nothing of it was stored' };

const bytesOrNull = (v: number | string | null) => (v === null ? null : Number(v));

/**
 * Refuses (`quota_exceeded`) a write whose charges would take an account or a project past its quota, inside the
 * write's transaction, so the check and the write it allows are one. The rows of the accounts and projects whose
 * quota applies are locked first (PostgreSQL; SQLite's transactions never interleave): two writes that each fit
 * alone and not together, in this process or in two replicas, take turns, and the second reads the first's bytes.
 * A write under no quota locks nothing. Accounts before projects, each in id order, in every write: no deadlock.
 * `defaultUserBytes` is `--quota-default`.
 */
export async function claimQuota(trx: Transaction<Database>, charges: readonly QuotaCharge[], defaultUserBytes: number | null, wording: QuotaWording): Promise<void> {
  const byUser = total(charges.flatMap((c) => (c.userId === null ? [] : [[c.userId, c.bytes] as const])));
  const byProject = total(charges.map((c) => [c.projectId, c.bytes] as const));
  if (byUser.size === 0 && byProject.size === 0) return;
  const [users, projects] = await Promise.all([
    byUser.size === 0 ? [] : trx.selectFrom('users').select(['id', 'quota_bytes']).where('id', 'in', [...byUser.keys()]).execute(),
    byProject.size === 0 ? [] : trx.selectFrom('projects').select(['id', 'quota_bytes']).where('id', 'in', [...byProject.keys()]).execute(),
  ]);
  const limitedUsers = users.filter((u) => (bytesOrNull(u.quota_bytes) ?? defaultUserBytes) !== null).map((u) => u.id).sort();
  const limitedProjects = projects.filter((p) => p.quota_bytes !== null).map((p) => p.id).sort();
  const lock = dialectOf(trx).lockRows;
  for (const id of limitedUsers) {
    const row = await trx.selectFrom('users').select(['email', 'quota_bytes']).where('id', '=', id).$if(lock, (q) => q.forNoKeyUpdate()).executeTakeFirstOrThrow();
    const limit = bytesOrNull(row.quota_bytes) ?? defaultUserBytes;
    if (limit !== null) await refuseOver(trx, 'user', id, `the quota of ${row.email}`, limit, byUser.get(id)!, wording);
  }
  for (const id of limitedProjects) {
    const row = await trx.selectFrom('projects').select(['name', 'quota_bytes']).where('id', '=', id).$if(lock, (q) => q.forNoKeyUpdate()).executeTakeFirstOrThrow();
    const limit = bytesOrNull(row.quota_bytes);
    if (limit !== null) await refuseOver(trx, 'project', id, `the quota of the project ${row.name}`, limit, byProject.get(id)!, wording);
  }
}

function total(entries: readonly (readonly [string, number])[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, bytes] of entries) if (bytes > 0) out.set(id, (out.get(id) ?? 0) + bytes);
  return out;
}

async function refuseOver(db: Kysely<Database>, scope: 'user' | 'project', id: string, quota: string, limit: number, bytes: number, wording: QuotaWording): Promise<void> {
  const used = (await liveUsage(db, scope === 'user' ? 'user_id' : 'project_id', [id])).get(id)?.bytes ?? 0;
  if (used + bytes > limit) throw quotaExceeded(quota, scope, limit, used, bytes, wording);
}

/** A 507 naming the quota and its figures (`details.quota`: docs/api.md). */
function quotaExceeded(quota: string, scope: 'user' | 'project', limit: number, used: number, bytes: number, wording: QuotaWording): AppError {
  return new AppError(
    'quota_exceeded',
    `over ${quota} (${formatBytes(limit)}: ${formatBytes(used)} used, ${wording.adds} ${formatBytes(bytes)}), so ${wording.kept}; delete documents or ask an admin to raise the quota`,
    { expose: true, logLevel: 'warn', details: { quota: { scope, limit_bytes: limit, used_bytes: used, upload_bytes: bytes } } },
  );
}

export const isQuotaExceeded = (err: unknown): err is AppError => err instanceof AppError && err.code === 'quota_exceeded';

/** Admins' quotas on accounts and projects (`users.quota_bytes`, `projects.quota_bytes`, migration 025). */
export class QuotaStore {
  constructor(private readonly db: Db) {}

  async limits(userId: string, projectId: string): Promise<QuotaLimits | null> {
    const [user, project] = await Promise.all([
      this.db.selectFrom('users').select(['email', 'quota_bytes']).where('id', '=', userId).executeTakeFirst(),
      this.db.selectFrom('projects').select(['name', 'quota_bytes']).where('id', '=', projectId).executeTakeFirst(),
    ]);
    if (!user || !project) return null;
    return { user: { email: user.email, quotaBytes: bytesOrNull(user.quota_bytes) }, project: { name: project.name, quotaBytes: bytesOrNull(project.quota_bytes) } };
  }

  async userQuotas(userIds: readonly string[]): Promise<Map<string, number | null>> {
    if (userIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('users').select(['id', 'quota_bytes']).where('id', 'in', [...new Set(userIds)]).execute();
    return new Map(rows.map((r) => [r.id, bytesOrNull(r.quota_bytes)]));
  }

  async projectQuota(projectId: string): Promise<number | null> {
    const row = await this.db.selectFrom('projects').select('quota_bytes').where('id', '=', projectId).executeTakeFirst();
    return row?.quota_bytes == null ? null : Number(row.quota_bytes);
  }

  async setUser(userId: string, bytes: number | null): Promise<void> {
    await this.db.updateTable('users').set({ quota_bytes: bytes }).where('id', '=', userId).execute();
  }

  async setProject(projectId: string, bytes: number | null): Promise<void> {
    await this.db.updateTable('projects').set({ quota_bytes: bytes }).where('id', '=', projectId).execute();
  }

  /** Throws `quota_exceeded` when these charges would pass a quota now: a look ahead of the writes, which claim again. */
  async check(charges: readonly QuotaCharge[], defaultUserBytes: number | null): Promise<void> {
    await this.db.transaction().execute((trx) => claimQuota(trx, charges, defaultUserBytes, UPLOAD_WORDING));
  }
}
