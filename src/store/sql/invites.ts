import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import { dialectOf, equalsName } from './dialect.js';

/** What the account an invitation makes gets. */
export interface InviteGrant {
  admin: boolean;
  /** A local group it joins. */
  groupId: string | null;
}

/** An open invitation as admins see it (never its link: that was shown once, or mailed). */
export interface OpenInvite extends InviteGrant {
  /** `inv_` and the first 16 hex digits of the link's hash: names it for revoking without revealing anything of the link. */
  id: string;
  email: string;
  createdAt: number;
  expiresAt: number;
  /** The admin who made it; null: an operator on the server machine. */
  createdBy: { id: string; email: string | null } | null;
}

export const inviteId = (tokenHash: string): string => `inv_${tokenHash.slice(0, 16)}`;
const hashPrefix = (id: string): string | null => (/^inv_[0-9a-f]{16}$/.test(id) ? id.slice(4) : null);

/** One-time invitation links (`invites`): only the SHA-256 of a link's token is kept. */
export class InviteStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /**
   * Records an invitation for `email`; earlier unused ones for the same address (any case of A–Z, either Unicode
   * spelling, as accounts compare theirs) stop working. `also` runs in the same
   * transaction (the mail that carries the link is queued there) and is told the stored end, which is also returned.
   */
  async create(tokenHash: string, email: string, by: string | null, ttlMs: number, grant: InviteGrant = { admin: false, groupId: null }, also?: (trx: Db, expiresAt: number) => Promise<unknown>): Promise<{ id: string; expiresAt: number }> {
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('invites').where('used_at', 'is', null).where((eb) => eb.or([equalsName(dialectOf(trx), 'email', email), eb('expires_at', '<=', now)])).execute();
      await trx
        .insertInto('invites')
        .values({ token_hash: tokenHash, email, created_by: by, created_at: now, expires_at: now + ttlMs, used_at: null, is_admin: grant.admin ? 1 : 0, group_id: grant.groupId })
        .execute();
      await also?.(trx, now + ttlMs);
    });
    return { id: inviteId(tokenHash), expiresAt: now + ttlMs };
  }

  /** The address an unused, unexpired invitation is for; null otherwise. */
  async emailFor(tokenHash: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('invites')
      .select('email')
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.now())
      .executeTakeFirst();
    return row?.email ?? null;
  }

  /** Uses an invitation: its address and grant for the one caller that did, null for any other (or a used, expired, unknown one). */
  async consume(tokenHash: string): Promise<({ email: string } & InviteGrant) | null> {
    const now = this.now();
    const rows = await this.db
      .updateTable('invites')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['email', 'is_admin', 'group_id'])
      .execute();
    const row = rows[0];
    return row ? { email: row.email, admin: Number(row.is_admin) === 1, groupId: row.group_id } : null;
  }

  /** Open invitations, newest first, with who made them. */
  async listOpen(): Promise<OpenInvite[]> {
    const rows = await this.db
      .selectFrom('invites')
      .leftJoin('users', 'users.id', 'invites.created_by')
      .select(['invites.token_hash', 'invites.email', 'invites.created_at', 'invites.expires_at', 'invites.created_by', 'invites.is_admin', 'invites.group_id', 'users.email as by_email', 'users.deleted_at as by_deleted'])
      .where('invites.used_at', 'is', null)
      .where('invites.expires_at', '>', this.now())
      .orderBy('invites.created_at', 'desc')
      .execute();
    return rows.map((r) => ({
      id: inviteId(r.token_hash),
      email: r.email,
      createdAt: Number(r.created_at),
      expiresAt: Number(r.expires_at),
      createdBy: r.created_by === null ? null : { id: r.created_by, email: r.by_deleted === null ? (r.by_email ?? null) : null },
      admin: Number(r.is_admin) === 1,
      groupId: r.group_id,
    }));
  }

  /** Revokes an open invitation: its link stops working. The address it was for, or null when there is no such open one. */
  async revoke(id: string): Promise<string | null> {
    const prefix = hashPrefix(id);
    if (!prefix) return null;
    const now = this.now();
    const rows = await this.db
      .deleteFrom('invites')
      .where('token_hash', 'like', `${prefix}%`)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('email')
      .execute();
    return rows[0]?.email ?? null;
  }
}
