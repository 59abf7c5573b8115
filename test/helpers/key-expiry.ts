import { openDatabase } from '../../src/store/sql/open-database.js';
import type { Daemon } from './daemon.js';

/**
 * Moves a key's expiry to `at` in the daemon's database (SQLite file or PostgreSQL), as its passing would: the
 * daemon takes no clock from outside (the moment itself is tested on a moved clock in test/store/accounts.test.ts).
 */
export async function expireAt(d: Daemon, id: string, at: number): Promise<void> {
  const handle = await openDatabase({ url: d.databaseUrl, dataDir: d.dataDir, migrate: false });
  try {
    await handle.db.updateTable('api_keys').set({ expires_at: at }).where('id', '=', id).execute();
  } finally {
    await handle.close();
  }
}
