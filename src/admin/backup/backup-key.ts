/**
 * The backup key: a secret the operator keeps, with which `backup` seals each manifest (HMAC-SHA256, manifest.ts)
 * and `restore` checks the seal. Whoever can write the repository but does not hold the key cannot make restore
 * take a manifest they wrote or altered. A file holding at least 32 characters (`backup` makes one of 64 hex
 * characters, mode 0600, when the file named does not exist); its id (a hash of it) names it in manifests and
 * messages without giving it away. See docs/operations.md, "Backup and restore".
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { parseSecretsKey, SECRETS_KEY_BYTES, SecretSealer } from '../../core/sealed-secret.js';
import { CliError } from '../../terminal/errors.js';

export interface BackupKey {
  /** The secret. */
  bytes: Buffer;
  /** 16 hex characters that name the key (never enough to guess it). */
  id: string;
  path: string;
}

/** The environment variable naming the key file, for `backup` and `restore`. */
export const KEY_FILE_ENV = 'DOCSEARCH_BACKUP_KEY_FILE';

/** The key file in a data directory, where an embedded library's backups are sealed by default. */
export const DEFAULT_KEY_FILE = 'backup.key';

const MIN_LENGTH = 32;

const keyId = (bytes: Buffer): string => createHash('sha256').update('docsearch backup key id\0').update(bytes).digest('hex').slice(0, 16);

/** Reads the key at `path`; a CliError when it is missing or too short. `warn` hears of a key file others may read. */
export async function readBackupKey(path: string, warn?: (line: string) => void): Promise<BackupKey> {
  let text: Buffer;
  try {
    text = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read the backup key ${path} (${code ?? (err as Error).message})`, 1, 'name the file backup sealed the backups with: --key-file or DOCSEARCH_BACKUP_KEY_FILE');
  }
  const bytes = Buffer.from(text.toString('utf8').trim(), 'utf8');
  if (bytes.length < MIN_LENGTH) throw new CliError(`the backup key ${path} holds ${bytes.length} characters; a key has at least ${MIN_LENGTH}`, 1, 'make one with `openssl rand -hex 32`, or let `docsearch backup` make it');
  if (warn && ((await stat(path)).mode & 0o077) !== 0) warn(`the backup key ${path} can be read by other users than its owner: chmod 600 it`);
  return { bytes, id: keyId(bytes), path };
}

/** The key at `path`, made first when there is no such file (`created`): 32 random bytes as hex, mode 0600. */
export async function backupKeyAt(path: string, warn?: (line: string) => void): Promise<{ key: BackupKey; created: boolean }> {
  let created = false;
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(`${randomBytes(32).toString('hex')}\n`);
    } finally {
      await handle.close();
    }
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliError(`cannot make the backup key ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 1, 'name a file in a folder that exists: --key-file');
  }
  return { key: await readBackupKey(path, warn), created };
}

/**
 * The library's secrets key (server/secrets-key.ts) as a backup carries it: sealed (AES-256-GCM, core/sealed-secret.ts)
 * under a key derived from the backup key and the backup's id (HKDF-SHA256), as restic and borg keep their keys in
 * the repository under its password. Whoever holds the repository and the backup key can restore a library whose
 * second factors and source credentials open; the repository alone gives nothing.
 */
export interface WrappedSecretsKey {
  /** The key's id (SecretSealer.keyId): what the restored library records, never the key. */
  id: string;
  sealed: string;
}

const wrapper = (key: BackupKey, backupId: string): SecretSealer =>
  new SecretSealer(Buffer.from(hkdfSync('sha256', key.bytes, backupId, 'docsearch secrets key in a backup', SECRETS_KEY_BYTES)));

export function wrapSecretsKey(secretsKey: Buffer, key: BackupKey, backupId: string): WrappedSecretsKey {
  return { id: new SecretSealer(secretsKey).keyId, sealed: wrapper(key, backupId).seal(secretsKey.toString('base64url'), `secrets-key ${backupId}`) };
}

/** The secrets key, or null when `wrapped` does not open with this backup key (another key, altered). */
export function unwrapSecretsKey(wrapped: WrappedSecretsKey, key: BackupKey, backupId: string): Buffer | null {
  const text = wrapper(key, backupId).open(wrapped.sealed, `secrets-key ${backupId}`);
  const secretsKey = text === null ? null : parseSecretsKey(text);
  return secretsKey && new SecretSealer(secretsKey).keyId === wrapped.id ? secretsKey : null;
}
