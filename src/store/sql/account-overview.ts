import type { Kysely } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/** What an admin checks about an account daily (Admin → Users, `GET /api/v1/admin/users`). */
export interface AccountOverview {
  userId: string;
  lastSignInAt: number | null;
  /** The identity providers the account is linked at (empty: a local account). */
  providers: string[];
  totp: boolean;
  passkeys: number;
  usage: Usage;
}

/** What an account's (or a project's) documents hold: live ones (not replaced by a newer version, not in the Trash). */
export interface Usage {
  documents: number;
  bytes: number;
  chunks: number;
}

const NONE: Usage = { documents: 0, bytes: 0, chunks: 0 };

/**
 * Per-account figures for admins, in a few grouped queries (one per table, never one per account). Usage counts
 * what an account uploaded, wherever it went; attachments (a mail's files) count as the documents they are.
 */
export class AccountOverviewStore {
  constructor(private readonly db: Db) {}

  async all(userIds: readonly string[]): Promise<Map<string, AccountOverview>> {
    const out = new Map<string, AccountOverview>();
    if (userIds.length === 0) return out;
    const ids = [...new Set(userIds)];
    const [users, identities, totp, passkeys, usage] = await Promise.all([
      this.db.selectFrom('users').select(['id', 'last_sign_in_at']).where('id', 'in', ids).execute(),
      this.db.selectFrom('identities').select(['user_id', 'provider']).where('user_id', 'in', ids).execute(),
      this.db.selectFrom('totp_secrets').select('user_id').where('user_id', 'in', ids).where('enabled_at', 'is not', null).execute(),
      this.db.selectFrom('passkeys').select((eb) => ['user_id', eb.fn.countAll<number>().as('n')]).where('user_id', 'in', ids).groupBy('user_id').execute(),
      this.usageOf('user_id', ids),
    ]);
    for (const u of users) out.set(u.id, { userId: u.id, lastSignInAt: u.last_sign_in_at === null ? null : Number(u.last_sign_in_at), providers: [], totp: false, passkeys: 0, usage: usage.get(u.id) ?? NONE });
    for (const i of identities) out.get(i.user_id)?.providers.push(i.provider);
    for (const t of totp) out.get(t.user_id)!.totp = true;
    for (const p of passkeys) out.get(p.user_id)!.passkeys = Number(p.n);
    return out;
  }

  /** What the live documents uploaded by each account (`user_id`) or held by each project (`project_id`) add up to. */
  usageOf(by: 'user_id' | 'project_id', ids: readonly string[]): Promise<Map<string, Usage>> {
    return liveUsage(this.db, by, ids);
  }
}

/** AccountOverviewStore.usageOf on any handle: a quota's check reads it in the transaction of the write it allows (quotas.ts). */
export async function liveUsage(db: Kysely<Database>, by: 'user_id' | 'project_id', ids: readonly string[]): Promise<Map<string, Usage>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('documents')
    .select((eb) => [by, eb.fn.countAll<number>().as('documents'), eb.fn.sum<number>('size_bytes').as('bytes'), eb.fn.sum<number>('chunk_count').as('chunks')])
    .where(by, 'in', [...new Set(ids)])
    .where('replaced_by', 'is', null)
    .where('trashed_at', 'is', null)
    .groupBy(by)
    .execute();
  return new Map(rows.map((r) => [String((r as Record<string, unknown>)[by]), { documents: Number(r.documents), bytes: Number(r.bytes ?? 0), chunks: Number(r.chunks ?? 0) }]));
}
