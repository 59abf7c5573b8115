import type { Db } from './database.js';

/** The limits that apply to an upload by one account into one project (bytes; null: none set). */
export interface QuotaLimits {
  user: { email: string; quotaBytes: number | null };
  project: { name: string; quotaBytes: number | null };
}

/** Admins' quotas on accounts and projects (`users.quota_bytes`, `projects.quota_bytes`, migration 025). */
export class QuotaStore {
  constructor(private readonly db: Db) {}

  async limits(userId: string, projectId: string): Promise<QuotaLimits | null> {
    const [user, project] = await Promise.all([
      this.db.selectFrom('users').select(['email', 'quota_bytes']).where('id', '=', userId).executeTakeFirst(),
      this.db.selectFrom('projects').select(['name', 'quota_bytes']).where('id', '=', projectId).executeTakeFirst(),
    ]);
    if (!user || !project) return null;
    const n = (v: number | string | null) => (v === null ? null : Number(v));
    return { user: { email: user.email, quotaBytes: n(user.quota_bytes) }, project: { name: project.name, quotaBytes: n(project.quota_bytes) } };
  }

  async userQuotas(userIds: readonly string[]): Promise<Map<string, number | null>> {
    if (userIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('users').select(['id', 'quota_bytes']).where('id', 'in', [...new Set(userIds)]).execute();
    return new Map(rows.map((r) => [r.id, r.quota_bytes === null ? null : Number(r.quota_bytes)]));
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
}
