import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf, equalsName } from './dialect.js';
import type { UsersTable } from './schema.js';

export interface User {
  id: string;
  email: string;
  createdAt: number;
  isAdmin: boolean;
  /** When the account was disabled; null while it may sign in. */
  disabledAt: number | null;
  /** The identity provider that sets the admin flag at each sign-in (`--sso-admin-group`); null: it is set here. */
  adminManagedBy: string | null;
}

export interface UserWithHash extends User {
  passwordHash: string;
}

/** A change refused because it would leave the library without an active admin. */
export const LAST_ADMIN = 'last_admin';

const COLUMNS = ['id', 'email', 'created_at', 'is_admin', 'disabled_at', 'admin_managed_by'] as const;

const toUser = (r: Pick<UsersTable, (typeof COLUMNS)[number]>): User => ({
  id: r.id,
  email: r.email,
  createdAt: r.created_at,
  isAdmin: Number(r.is_admin) === 1,
  disabledAt: r.disabled_at,
  adminManagedBy: r.admin_managed_by,
});

/**
 * Accounts. A deleted account keeps its row (the uploader of documents that stay in other people's projects), with
 * its e-mail and password gone: no lookup here returns it but `findById` with `includeDeleted`.
 */
export class UserStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  private live() {
    return this.db.selectFrom('users').where('deleted_at', 'is', null);
  }

  async count(): Promise<number> {
    const row = await this.live().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Whether a live account other than `except` has this e-mail, in any case of A–Z and either Unicode spelling: the
   * unique index compares bytes, and would not see an address stored decomposed before addresses were composed.
   */
  private async emailHeld(db: Db, email: string, except?: string): Promise<boolean> {
    const row = await db
      .selectFrom('users')
      .select('id')
      .where('deleted_at', 'is', null)
      .where(equalsName(dialectOf(db), 'email', email))
      .$if(except !== undefined, (q) => q.where('id', '!=', except!))
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Creates a user, its e-mail composed (NFC: core/name-spellings.ts); returns null when the email is taken (ignoring
   * ASCII case, as the unique index compares, and in either Unicode spelling). The first account of a library is its
   * admin: decided in the insert itself, and on PostgreSQL, while the library has
   * no account, behind a lock on the table (until the transaction ends), so that two first accounts made at once on
   * two replicas are made one after the other and only one is admin: each insert alone saw the table empty.
   * Once there is an account there always is one (the last admin is never deleted), and no lock is taken.
   */
  async create(emailInput: string, passwordHash: string, opts: { admin?: boolean } = {}): Promise<User | null> {
    const email = emailInput.normalize('NFC');
    const now = this.now();
    const id = newId('usr', now);
    const firstIsAdmin = sql<number>`(case when exists (select 1 from users where deleted_at is null) then 0 else 1 end)`;
    // Two addresses made at once in the two spellings are both composed here, so the unique index parts them.
    const insert = async (db: Db): Promise<boolean> => {
      if (await this.emailHeld(db, email)) return false;
      const res = await db
        .insertInto('users')
        .values({ id, email, password_hash: passwordHash, created_at: now, updated_at: now, is_admin: opts.admin ? 1 : firstIsAdmin, disabled_at: null, deleted_at: null })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    };
    const first = !opts.admin && dialectOf(this.db).lockRows && (await this.count()) === 0;
    const alone = async (db: Db) => {
      // Writers of the table wait; readers do not.
      await sql`lock table users in share row exclusive mode`.execute(db);
      return insert(db);
    };
    const made = first ? await (this.db.isTransaction ? alone(this.db) : this.db.transaction().execute(alone)) : await insert(this.db);
    if (!made) return null;
    return this.findById(id);
  }

  /**
   * The live account with this e-mail, in any case of A–Z and either Unicode spelling (core/name-spellings.ts). Two
   * accounts made in the two spellings before addresses were composed are each found by their own.
   */
  async findByEmail(email: string): Promise<UserWithHash | null> {
    const d = dialectOf(this.db);
    const row = await this.live()
      .select([...COLUMNS, 'password_hash'])
      .where(equalsName(d, 'email', email))
      .orderBy(sql`case when ${d.equalsIgnoreCase('email', email)} then 0 else 1 end`)
      .executeTakeFirst();
    return row ? { ...toUser(row), passwordHash: row.password_hash } : null;
  }

  async findWithHashById(id: string): Promise<UserWithHash | null> {
    const row = await this.live().select([...COLUMNS, 'password_hash']).where('id', '=', id).executeTakeFirst();
    return row ? { ...toUser(row), passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<boolean> {
    const res = await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: this.now() }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Changes a user's email, composed (NFC); 'conflict' when another account has it (ignoring ASCII case, as the unique
   * index compares, and in either Unicode spelling).
   */
  async setEmail(id: string, emailInput: string): Promise<boolean | 'conflict'> {
    const email = emailInput.normalize('NFC');
    if (await this.emailHeld(this.db, email, id)) return 'conflict';
    try {
      const res = await this.db.updateTable('users').set({ email, updated_at: this.now() }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
  }

  async findById(id: string): Promise<User | null> {
    const row = await this.live().select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  /** E-mails of these users (deleted ones absent), for showing who uploaded or owns what. */
  async emails(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.live().select(['id', 'email']).where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((r) => [r.id, r.email]));
  }

  /** Every account but deleted ones, in creation order. */
  async list(): Promise<User[]> {
    return (await this.live().select(COLUMNS).orderBy('created_at').orderBy('id').execute()).map(toUser);
  }

  /** Makes or unmakes an admin; with `keepAnAdmin`, 'last_admin' (and nothing changed) when unmaking it would leave no active admin. */
  async setAdmin(id: string, admin: boolean, opts: { keepAnAdmin?: boolean } = {}): Promise<boolean | typeof LAST_ADMIN> {
    const change = async (db: Db) => {
      const res = await db.updateTable('users').set({ is_admin: admin ? 1 : 0, updated_at: this.now() }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    };
    return opts.keepAnAdmin && !admin ? this.keepingAnAdmin(id, change) : change(this.db);
  }

  /**
   * Runs a change that may take an active admin away (`id` unmade, disabled or deleted) only while another active
   * admin stays: 'last_admin' otherwise, and nothing is changed. The active admins' rows are locked first, in id
   * order, so two such changes at once (two admins unmaking each other, on two replicas) run one after the other
   * and the second counts what the first left: counted without the lock, both saw two admins and both went ahead,
   * leaving none.
   */
  private async keepingAnAdmin<T>(id: string, change: (db: Db) => Promise<T>): Promise<T | typeof LAST_ADMIN> {
    return this.db.transaction().execute(async (trx) => {
      const admins = await trx
        .selectFrom('users')
        .select('id')
        .where('is_admin', '=', 1)
        .where('disabled_at', 'is', null)
        .where('deleted_at', 'is', null)
        .orderBy('id')
        .$if(dialectOf(this.db).lockRows, (q) => q.forUpdate())
        .execute();
      if (admins.length <= 1 && admins.some((a) => a.id === id)) return LAST_ADMIN;
      return change(trx);
    });
  }

  /**
   * Lets the identity provider take this local account over at its next sign-in with the same verified e-mail (an
   * operator's or admin's offer, `at`), or takes the offer back (null: once linked).
   */
  async offerProviderLink(id: string, at: number | null): Promise<void> {
    await this.db.updateTable('users').set({ link_offered_at: at }).where('id', '=', id).execute();
  }

  /** When the provider was last offered this account (offerProviderLink), or null. */
  async providerLinkOffered(id: string): Promise<number | null> {
    const row = await this.db.selectFrom('users').select('link_offered_at').where('id', '=', id).executeTakeFirst();
    return row?.link_offered_at == null ? null : Number(row.link_offered_at);
  }

  /** Names the provider that sets this account's admin flag from now on (null: it is set here again). */
  async setAdminManagedBy(id: string, provider: string | null): Promise<void> {
    await this.db.updateTable('users').set({ admin_managed_by: provider }).where('id', '=', id).execute();
  }

  /**
   * At the daemon's start: the accounts linked at these providers (identities) have their admin flag set by
   * `provider` when it maps an admin group; with no admin group (null) no account's flag is the provider's.
   */
  async markAdminsManagedBy(provider: string | null, linkedAt: readonly string[]): Promise<void> {
    if (provider === null || linkedAt.length === 0) {
      await this.db.updateTable('users').set({ admin_managed_by: null }).where('admin_managed_by', 'is not', null).execute();
      return;
    }
    const linked = this.db.selectFrom('identities').select('user_id').where('provider', 'in', [...linkedAt]);
    await this.db.updateTable('users').set({ admin_managed_by: provider }).where('id', 'in', linked).where('deleted_at', 'is', null).execute();
    await this.db.updateTable('users').set({ admin_managed_by: null }).where('admin_managed_by', 'is not', null).where('id', 'not in', linked).execute();
  }

  /**
   * Disables (a time) or enables (null) an account; false when there is no such live account. With `keepAnAdmin`,
   * 'last_admin' (and nothing changed) when disabling it would leave no active admin.
   */
  async setDisabled(id: string, at: number | null, opts: { keepAnAdmin?: boolean } = {}): Promise<boolean | typeof LAST_ADMIN> {
    const change = async (db: Db) => {
      const res = await db.updateTable('users').set({ disabled_at: at, updated_at: this.now() }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    };
    return opts.keepAnAdmin && at !== null ? this.keepingAnAdmin(id, change) : change(this.db);
  }

  /**
   * Deletes an account, keeping its row as a tombstone: the e-mail becomes one that can't be typed (so the address
   * is free for a new account), the password a hash nothing matches.
   */
  async tombstone(id: string): Promise<boolean> {
    const now = this.now();
    const res = await this.db
      .updateTable('users')
      .set({ email: `deleted-${id}@deleted.invalid`, password_hash: '!', is_admin: 0, disabled_at: now, deleted_at: now, updated_at: now })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Records a sign-in (Admin → Users' "last sign-in"); the time it had before, null for a first sign-in. Read and
   * written in one transaction with the row locked, so of two sign-ins at once only one is the first (both read null
   * before, and a second browser's sign-in went without its notice).
   */
  async signedIn(id: string): Promise<number | null> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('users').select('last_sign_in_at').where('id', '=', id).$if(dialectOf(this.db).lockRows, (q) => q.forUpdate()).executeTakeFirst();
      await trx.updateTable('users').set({ last_sign_in_at: this.now() }).where('id', '=', id).execute();
      return before?.last_sign_in_at == null ? null : Number(before.last_sign_in_at);
    });
  }

  /** Whether a passkey alone signs the account in (passwordless), rather than being a second factor after the password. */
  async passkeySignIn(id: string): Promise<boolean> {
    const row = await this.live().select('passkey_sign_in').where('id', '=', id).executeTakeFirst();
    return Number(row?.passkey_sign_in ?? 0) === 1;
  }

  async setPasskeySignIn(id: string, on: boolean): Promise<void> {
    await this.db.updateTable('users').set({ passkey_sign_in: on ? 1 : 0, updated_at: this.now() }).where('id', '=', id).execute();
  }
}
