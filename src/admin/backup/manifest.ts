/**
 * What a backup holds, written last (backup.ts): a backup without one, or with one that does not check out, is
 * not a backup, and `restore` refuses it. The manifest names every file with its size and sha256, so a restore
 * can verify each one, and an incremental run can tell which files the repository has already.
 */
import { createHash } from 'node:crypto';
import { CliError } from '../../terminal/errors.js';

/** The manifest format this version writes; a newer one is refused (written by a later docsearch). */
export const BACKUP_FORMAT = 1;

export interface BackedUpFile {
  /** Where it goes in a library: `files/<ab>/<sha256>` (an original), `lancedb/…` (the index). */
  path: string;
  /** Where it is in the repository. */
  key: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: number;
  id: string;
  /** The docsearch version that took it. */
  docsearch: string;
  /** The library it copies: a data directory (embedded) or a database and storage (shared mode), for messages. */
  library: string;
  mode: 'embedded' | 'shared';
  /** The database snapshot's moment (RFC 3339): the library as it was then. */
  taken_at: string;
  completed_at: string;
  /** The database as a SQLite file (in shared mode too: restore copies its rows into PostgreSQL). */
  database: BackedUpFile;
  /** Each index table at the version copied. */
  tables: { name: string; version: number; rows: number }[];
  files: BackedUpFile[];
  /** Originals the snapshot's documents use that the source no longer had (deleted while the backup ran). */
  missing_originals: string[];
  /** sha256 of the manifest's JSON without this field. */
  checksum: string;
}

const checksumOf = (m: Omit<BackupManifest, 'checksum'>): string => createHash('sha256').update(JSON.stringify({ ...m, checksum: undefined })).digest('hex');

export function sealManifest(m: Omit<BackupManifest, 'checksum'>): string {
  return `${JSON.stringify({ ...m, checksum: checksumOf(m) }, null, 1)}\n`;
}

/** Parses and checks a manifest; a CliError says what is wrong with it. */
export function openManifest(text: string, where: string): BackupManifest {
  let m: BackupManifest;
  try {
    m = JSON.parse(text) as BackupManifest;
  } catch {
    throw new CliError(`the manifest of ${where} is not complete JSON: the backup is incomplete or damaged`, 1, 'restore another backup (docsearch restore --list)');
  }
  if (typeof m.format !== 'number') throw new CliError(`${where} has no backup format: it is not a docsearch backup manifest`);
  if (m.format > BACKUP_FORMAT) {
    throw new CliError(`${where} was written by docsearch ${m.docsearch} in backup format ${m.format}; this version reads format ${BACKUP_FORMAT} and older`, 1, `restore it with docsearch ${m.docsearch} or later`);
  }
  const { checksum, ...rest } = m;
  if (checksum !== checksumOf(rest)) throw new CliError(`the manifest of ${where} does not match its checksum: it is damaged`, 1, 'restore another backup (docsearch restore --list)');
  return m;
}
