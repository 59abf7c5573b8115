/**
 * What a backup holds, written last (backup.ts): a backup without one, or with one that does not check out, is
 * not a backup, and `restore` refuses it. The manifest names every file with its size and sha256, so a restore
 * can verify each one, and an incremental run can tell which files the repository has already.
 *
 * Format 2 is sealed: besides a checksum of its contents (sha256: damage), it carries an HMAC-SHA256 of them keyed
 * with the operator's backup key (backup-key.ts), which only a holder of the key can make. Format 1 (docsearch
 * 0.2.0) has the checksum only: anyone who can write the repository can rewrite it, so restore takes one only when
 * told to trust the repository. Either way every entry is checked to be a place a library has (`files/…` named by
 * its own hash, `lancedb/…`) and a key of this backup in the repository layout (repository.ts).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { BackupKey, WrappedSecretsKey } from './backup-key.js';

/** The manifest format this version writes; a newer one is refused (written by a later docsearch). */
export const BACKUP_FORMAT = 2;

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
  /** The library's secrets key, wrapped under the backup key (backup-key.ts); absent when the library had none yet. */
  secrets_key?: WrappedSecretsKey;
  /** The id of the key that sealed it (format 2). */
  key_id?: string;
}

/** The repository's layout: a backup's own files under `backups/<id>/`, immutable ones shared under `objects/`. */
export const manifestKey = (id: string): string => `backups/${id}/manifest.json`;
export const databaseKey = (id: string): string => `backups/${id}/database.sqlite`;
/** Written first by a run: a backup with it and no manifest is one that was interrupted (or is still running). */
export const startedKey = (id: string): string => `backups/${id}/started.json`;
/** Immutable files by their place in the library; mutable ones (the index info) per backup. */
export const objectKey = (path: string): string => `objects/${path}`;
export const ownKey = (id: string, path: string): string => `backups/${id}/${path}`;

/** A backup's id: when it started (UTC, to the second), and 6 hex characters (its milliseconds, then random ones). */
export const BACKUP_ID = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

const SHA256 = /^[0-9a-f]{64}$/;
/** A file or folder name in a library's index: what LanceDB writes (no dot first, so never `.` or `..`). */
const INDEX_NAME = /^[A-Za-z0-9_][A-Za-z0-9._=+-]*$/;

/** Whether `path` is a place in a library a backup may carry: an original named by `sha256`, or an index file. */
export function isLibraryPath(path: string, sha256?: string): boolean {
  const original = /^files\/([0-9a-f]{2})\/([0-9a-f]{64})$/.exec(path);
  if (original) return original[2]!.startsWith(original[1]!) && (sha256 === undefined || original[2] === sha256);
  const parts = path.split('/');
  return parts[0] === 'lancedb' && parts.length >= 2 && parts.length <= 8 && parts.slice(1).every((p) => INDEX_NAME.test(p));
}

/** What a manifest is, as `restore` sees it. */
export type ManifestStatus =
  /** Sealed with the key given, and it checks out. */
  | 'complete'
  /** Format 1: a checksum, no seal. */
  | 'unsealed'
  /** Sealed, but no key was given to check the seal with. */
  | 'unchecked'
  /** Sealed with another key than the one given. */
  | 'other-key'
  /** Written by a newer docsearch. */
  | 'newer'
  /** Not complete JSON, a checksum or seal that does not match, an entry a backup cannot have. */
  | 'damaged';

export interface ManifestCheck {
  status: ManifestStatus;
  /** The manifest, unless it is damaged or newer; its contents are vouched for only when `complete`. */
  manifest: BackupManifest | null;
  /** Why it is not `complete`, in words. */
  problem?: string;
}

/** The bytes checksum and seal cover: the manifest's JSON without either. */
const body = (m: object): string => JSON.stringify({ ...m, checksum: undefined, seal: undefined });
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const hmac = (key: BackupKey, text: string): Buffer => createHmac('sha256', key.bytes).update(text).digest();

export function sealManifest(m: Omit<BackupManifest, 'key_id'>, key: BackupKey): string {
  const sealed = { ...m, key_id: key.id };
  const text = body(sealed);
  return `${JSON.stringify({ ...sealed, checksum: sha256(text), seal: hmac(key, text).toString('hex') }, null, 1)}\n`;
}

/**
 * Checks the manifest `text` found in the folder of backup `id`: its checksum, its entries, and its seal with
 * `key` (null: none given).
 */
export function checkManifest(text: string, id: string, key: BackupKey | null): ManifestCheck {
  let m: BackupManifest & { checksum?: unknown; seal?: unknown };
  try {
    m = JSON.parse(text) as typeof m;
  } catch {
    return { status: 'damaged', manifest: null, problem: 'its manifest is not complete JSON' };
  }
  if (!m || typeof m !== 'object' || typeof m.format !== 'number') return { status: 'damaged', manifest: null, problem: 'its manifest has no backup format: it is not a docsearch backup manifest' };
  if (m.format > BACKUP_FORMAT) return { status: 'newer', manifest: null, problem: `it was written by docsearch ${String(m.docsearch)} in backup format ${m.format}; this version reads format ${BACKUP_FORMAT} and older` };
  if (m.checksum !== sha256(body(m))) return { status: 'damaged', manifest: null, problem: 'its manifest does not match its checksum' };
  const { checksum: _c, seal, ...manifest } = m;
  const sealed = m.format >= 2;
  if (sealed && (typeof m.key_id !== 'string' || typeof seal !== 'string' || !/^[0-9a-f]{64}$/.test(seal))) return { status: 'damaged', manifest: null, problem: 'its manifest has no seal' };
  const checkable = sealed && key !== null && key.id === m.key_id;
  if (checkable && !timingSafeEqual(hmac(key, body(m)), Buffer.from(seal as string, 'hex'))) return { status: 'damaged', manifest: null, problem: 'its manifest does not match its seal: it was altered after it was written' };
  const wrong = entryProblem(m, id);
  if (wrong) return { status: 'damaged', manifest: null, problem: `its manifest ${wrong}` };
  if (!sealed) return { status: 'unsealed', manifest, problem: `it was written by docsearch ${m.docsearch} before backups were sealed: its manifest could have been rewritten by anyone who can write the repository` };
  if (checkable) return { status: 'complete', manifest };
  if (!key) return { status: 'unchecked', manifest, problem: `it is sealed with backup key ${m.key_id}, and no key was given to check it with` };
  return { status: 'other-key', manifest, problem: `it is sealed with backup key ${m.key_id}, not with the key given (${key.path}, key ${key.id})` };
}

/** What is wrong with a manifest's entries for backup `id`, or null: each must be a place in a library and a key of this backup. */
function entryProblem(m: BackupManifest, id: string): string | null {
  if (m.id !== id) return `names backup ${String(m.id)}, not ${id} (the folder it is in)`;
  if (!BACKUP_ID.test(id)) return `is in a folder (${id}) that is not a backup id`;
  const isFile = (f: BackedUpFile | undefined): boolean =>
    !!f && typeof f.path === 'string' && typeof f.key === 'string' && Number.isSafeInteger(f.size) && f.size >= 0 && typeof f.sha256 === 'string' && SHA256.test(f.sha256);
  if (!isFile(m.database) || m.database.path !== 'docsearch.db' || m.database.key !== databaseKey(id)) return 'lists its database where a backup does not keep it';
  if (!Array.isArray(m.tables) || !m.tables.every((t) => t && typeof t.name === 'string' && INDEX_NAME.test(t.name) && Number.isSafeInteger(t.version) && Number.isSafeInteger(t.rows))) return 'lists index tables that are not';
  if (!Array.isArray(m.files) || !Array.isArray(m.missing_originals)) return 'has no list of files';
  const seen = new Set<string>();
  for (const f of m.files) {
    if (!isFile(f)) return `lists an entry that is not a file with a size and sha256 (${JSON.stringify(f)?.slice(0, 200)})`;
    if (!isLibraryPath(f.path, f.path.startsWith('files/') ? f.sha256 : undefined)) return `lists ${JSON.stringify(f.path)}, which is not an original (files/<ab>/<its sha256>) or an index file (lancedb/…)`;
    if (f.key !== objectKey(f.path) && f.key !== ownKey(id, f.path)) return `keeps ${f.path} at ${JSON.stringify(f.key)}, outside this backup's places in the repository`;
    if (seen.has(f.path)) return `lists ${f.path} twice`;
    seen.add(f.path);
  }
  // A file where another entry needs a folder: one of the two would not be placed (a file already there is kept).
  for (const path of seen) {
    for (let at = path.lastIndexOf('/'); at > 0; at = path.lastIndexOf('/', at - 1)) {
      if (seen.has(path.slice(0, at))) return `lists ${path.slice(0, at)} both as a file and as the folder of ${path}`;
    }
  }
  return null;
}
