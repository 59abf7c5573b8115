import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export interface User {
  id: string;
  email: string;
  createdAt: number;
}

export interface UserWithHash extends User {
  passwordHash: string;
}

export class UserStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Creates a user; returns null when the email is taken (ignoring ASCII case, as the unique index compares). */
  async create(email: string, passwordHash: string): Promise<User | null> {
    const now = this.now();
    const id = newId('usr', now);
    const res = await this.db
      .insertInto('users')
      .values({ id, email, password_hash: passwordHash, created_at: now, updated_at: now })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return { id, email, createdAt: now };
  }

  async findByEmail(email: string): Promise<UserWithHash | null> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where(dialectOf(this.db).equalsIgnoreCase('email', email))
      .executeTakeFirst();
    return row ? { id: row.id, email: row.email, createdAt: row.created_at, passwordHash: row.password_hash } : null;
  }

  async findWithHashById(id: string): Promise<UserWithHash | null> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? { id: row.id, email: row.email, createdAt: row.created_at, passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<boolean> {
    const res = await this.db.updateTable('users').set({ password_hash: passwordHash, updated_at: this.now() }).where('id', '=', id).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Changes a user's email; 'conflict' when another account has it (ignoring ASCII case, as the unique index compares). */
  async setEmail(id: string, email: string): Promise<boolean | 'conflict'> {
    try {
      const res = await this.db.updateTable('users').set({ email, updated_at: this.now() }).where('id', '=', id).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    } catch (err) {
      if (dialectOf(this.db).isUniqueViolation(err)) return 'conflict';
      throw err;
    }
  }

  async findById(id: string): Promise<User | null> {
    const row = await this.db.selectFrom('users').select(['id', 'email', 'created_at']).where('id', '=', id).executeTakeFirst();
    return row ? { id: row.id, email: row.email, createdAt: row.created_at } : null;
  }
}
