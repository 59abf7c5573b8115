import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { ProjectStore } from './projects.js';
import { UserStore } from './users.js';

export interface Identity {
  userId: string;
  provider: string;
  subject: string;
  createdAt: number;
  lastSignInAt: number;
}

/** Links between accounts and who they are at an identity provider (`identities`). Only this module writes it. */
export class IdentityStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async find(provider: string, subject: string): Promise<Identity | null> {
    const row = await this.db.selectFrom('identities').selectAll().where('provider', '=', provider).where('subject', '=', subject).executeTakeFirst();
    return row ? { userId: row.user_id, provider: row.provider, subject: row.subject, createdAt: row.created_at, lastSignInAt: row.last_sign_in_at } : null;
  }

  /** Whether the account is linked at this provider (under any subject). */
  async linked(userId: string, provider: string): Promise<boolean> {
    const row = await this.db.selectFrom('identities').select('id').where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Links the account to this subject; false when the subject is linked already (to whichever account), or the
   * account is linked at this provider already (to whichever subject): the unique indexes decide, so of two links
   * made at once one is refused.
   */
  async link(userId: string, provider: string, subject: string): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .insertInto('identities')
      .values({ id: newId('idn', now), user_id: userId, provider, subject, created_at: now, last_sign_in_at: now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Drops a link (its account was deleted: the subject may make a new one). */
  async unlink(provider: string, subject: string): Promise<void> {
    await this.db.deleteFrom('identities').where('provider', '=', provider).where('subject', '=', subject).execute();
  }

  async signedIn(provider: string, subject: string): Promise<void> {
    await this.db.updateTable('identities').set({ last_sign_in_at: this.now() }).where('provider', '=', provider).where('subject', '=', subject).execute();
  }
}

/** What a first sign-in through a provider writes: the account, its default project, its link. */
export interface NewAccountStores {
  users: UserStore;
  projects: ProjectStore;
  identities: IdentityStore;
}

/**
 * Those stores, and a way to write an account and its link as one transaction: a concurrent first sign-in of the
 * same person waits on the account's e-mail (SQLite's one connection; PostgreSQL's unique index) until the first
 * has committed both, then finds the link, never an account it may not take.
 */
export function openNewAccountStores(db: Db, now: Clock): NewAccountStores & { transaction<T>(fn: (stores: NewAccountStores) => Promise<T>): Promise<T> } {
  const bind = (d: Db): NewAccountStores => ({ users: new UserStore(d, now), projects: new ProjectStore(d, now), identities: new IdentityStore(d, now) });
  return { ...bind(db), transaction: (fn) => db.transaction().execute((trx) => fn(bind(trx))) };
}
