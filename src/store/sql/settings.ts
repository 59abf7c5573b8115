import type { Db } from './database.js';

/** Server-wide values kept in the `settings` table (key → text), e.g. secrets every replica must share. */
export class SettingsStore {
  constructor(private readonly db: Db) {}

  /**
   * The value under `key`, storing `make()` first when there is none. Insert-if-absent then read, so replicas
   * starting together all end up with the one value that won.
   */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    await this.db.insertInto('settings').values({ key, value: make() }).onConflict((oc) => oc.column('key').doNothing()).execute();
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  }

  async get(key: string): Promise<string | null> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value ?? null;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('settings').where('key', '=', key).execute();
  }
}
