import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-accounts-projects.js';
import * as m002 from './002-documents-jobs.js';
import * as m003 from './003-oauth.js';
import * as m004 from './004-document-paths.js';
import * as m005 from './005-job-released.js';

/**
 * Migrations are listed here explicitly (not read from disk) so the built package needs no
 * file-system discovery. Append only: a released migration is never edited.
 */
const MIGRATIONS: Record<string, Migration> = {
  '001-accounts-projects': m001,
  '002-documents-jobs': m002,
  '003-oauth': m003,
  '004-document-paths': m004,
  '005-job-released': m005,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
