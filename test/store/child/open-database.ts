/**
 * A separate process that opens (and so migrates) the database at argv[2], then exits: several of these
 * started at once are replicas starting together (test/store/migrations.test.ts).
 */
import { openDatabase } from '../../../src/store/sql/open-database.js';

const handle = await openDatabase({ url: process.argv[2], dataDir: process.cwd() });
await handle.close();
process.stdout.write('migrated\n');
