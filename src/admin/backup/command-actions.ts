/**
 * What `docsearch backup` and `docsearch restore` do once their options are parsed (commands.ts declares them):
 * loaded only when one runs, so their --help loads no database, index or object storage.
 */
import { constants } from 'node:fs';
import { chmod, copyFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CliError, UsageError } from '../../terminal/errors.js';
import { interruptSignal, type IO, warn, writeJson } from '../../terminal/io.js';
import { progressOn } from '../migrate/progress.js';
import { operatorConfig } from '../operator-database.js';
import { recordInLibrary } from '../operator-audit.js';
import { runBackup } from './backup.js';
import { type BackupKey, backupKeyAt, DEFAULT_KEY_FILE, KEY_FILE_ENV, readBackupKey, unwrapSecretsKey } from './backup-key.js';
import type { BackupManifest } from './manifest.js';
import { readSecretsKey } from '../../server/secrets-key.js';
import { parseRate, RateLimit } from './rate-limit.js';
import { type BackupEntry, backupExists, describeRepository, listBackups, noBackupAt, openRepository, readBackup, refusal, refuseForeignFolder, type Repository, repositoryLocation, restorable } from './repository.js';
import { restoreInto } from './restore.js';
import { notWritable } from './not-writable.js';
import { within } from '../../core/path-within.js';
import { directoryToMake, fileAt } from '../option-paths.js';
import { databaseUrlProblem } from '../../store/sql/database-url.js';
import { parseS3Location, type S3Location, StorageConfigError } from '../../store/objects/location.js';
import { embeddedTarget, type RestoreTarget, sharedTarget } from './restore-target.js';
import { openEmbeddedLibrary, openSharedLibrary, type RunningLibrary } from './running-library.js';

/** Shared mode needs both its database and its storage; either alone names half a library. */
function sharedPair(database: string | undefined, storage: string | undefined, flags: string): { database: string; storage: string } | null {
  if (!database && !storage) return null;
  if (!database || !storage) throw new UsageError(`a shared-mode library is a database and a storage: name both (${flags})`);
  return { database, storage };
}

export interface BackupFlags {
  to: string;
  dataDir?: string;
  database?: string;
  storage?: string;
  keep?: string;
  maxRate?: string;
  keyFile?: string;
}

export async function backup(io: IO, flags: BackupFlags, json: boolean): Promise<void> {
  const keep = flags.keep === undefined ? undefined : Number(flags.keep);
  if (keep !== undefined && (!Number.isInteger(keep) || keep < 1)) throw new UsageError(`--keep must be a positive integer, got ${JSON.stringify(flags.keep)}`);
  const rate = flags.maxRate === undefined ? undefined : parseRate(flags.maxRate);
  if (rate === null) throw new UsageError(`--max-rate must be bytes a second such as 500k or 20M, got ${JSON.stringify(flags.maxRate)}`);
  const config = withSecretsKeyHint(() => operatorConfig(io, 'backup', { 'data-dir': flags.dataDir, database: flags.database, storage: flags.storage }));
  const shared = sharedPair(config.database, config.storage, '--database or DOCSEARCH_DATABASE_URL, and --storage');
  const keyFile = flags.keyFile ?? (io.env[KEY_FILE_ENV] || undefined) ?? (shared ? undefined : join(resolve(config.dataDir), DEFAULT_KEY_FILE));
  if (!keyFile) throw new UsageError(`a shared-mode backup is sealed with a key you keep: name its file with --key-file (or ${KEY_FILE_ENV})`, 'the file is made on first use; keep a copy apart from the backups, restore needs it');
  // Checked before the library is opened or the key made: a location that can never work makes nothing.
  const to = repositoryLocation('--to', flags.to, io.env, { create: true });
  if (!shared && to.kind === 'directory' && within(to.dir, resolve(config.dataDir))) {
    throw new UsageError(`--to: ${to.dir} is inside the data directory ${resolve(config.dataDir)}: keep the backups apart from the library they are to outlive`);
  }
  if (to.kind === 'directory') refuseForeignFolder('--to', to.dir, keyFile);
  const keyOption = flags.keyFile ? '--key-file' : io.env[KEY_FILE_ENV] ? KEY_FILE_ENV : null;
  if (keyOption) fileAt(keyOption, keyFile, { make: true });
  const library: RunningLibrary = shared ? await openSharedLibrary(shared.database, shared.storage, io.env) : await openEmbeddedLibrary(resolve(config.dataDir));
  const progress = progressOn(io);
  let repo: Repository;
  let key: BackupKey;
  let secrets: Awaited<ReturnType<typeof readSecretsKey>>;
  try {
    // First: a secrets key that does not read stops the run before the backup key or the repository is made.
    secrets = await readSecretsKey(config, library.root).catch((err: unknown) => {
      if (!/does not hold a secrets key/.test((err as Error).message)) throw err;
      throw new CliError((err as Error).message, 1, 'its daemon would refuse it too: put back the secrets.key the library was running with (every backup carries it); nothing was written');
    });
    const made = await backupKeyAt(resolve(keyFile), (line) => warn(io, line));
    key = made.key;
    if (made.created) progress.line(`made the backup key ${key.path} (key ${key.id}): keep a copy of it apart from the backups, restore checks them with it (--key-file)`);
    repo = await openRepository(flags.to, io.env);
  } catch (err) {
    await library.close();
    throw err;
  }
  // Ctrl-C stops the run between files, so that it takes its version tag off the index and its work folder with it.
  const interrupt = interruptSignal();
  try {
    const summary = await runBackup({
      library,
      repo,
      repository: describeRepository(flags.to, io.env),
      key,
      secretsKey: secrets?.key ?? null,
      progress,
      signal: interrupt.signal,
      ...(rate ? { rate: new RateLimit(rate) } : {}),
      ...(keep ? { keep } : {}),
    });
    await recordInLibrary(shared ? { database: shared.database, dataDir: '' } : { dataDir: resolve(config.dataDir) }, 'backup', {
      type: 'backup.created',
      details: { backup: summary.id, repository: summary.repository, files: summary.files.total, copied: summary.files.copied },
    });
    if (json) writeJson(io, summary);
  } finally {
    interrupt.dispose();
    repo.close();
    await library.close();
  }
}

export interface RestoreFlags {
  from: string;
  backup?: string;
  to?: string;
  database?: string;
  storage?: string;
  list?: boolean;
  keyFile?: string;
  trustRepository?: boolean;
}

export async function restore(io: IO, flags: RestoreFlags, json: boolean): Promise<void> {
  // Every location is checked before the key is read or the repository opened: one that can never work makes nothing.
  repositoryLocation('--from', flags.from, io.env, { create: false });
  const keyFile = flags.keyFile ?? (io.env[KEY_FILE_ENV] || undefined);
  const keyPath = keyFile ? fileAt(flags.keyFile ? '--key-file' : KEY_FILE_ENV, keyFile, { make: false }) : null;
  const into = flags.list ? null : restoreDestination(io, flags);
  const key = keyPath ? await readBackupKey(keyPath, (line) => warn(io, line)) : null;
  const repo = await openRepository(flags.from, io.env, { create: false });
  const where = describeRepository(flags.from, io.env);
  try {
    if (!into) {
      const backups = await listBackups(repo, key);
      if (backups.length === 0) throw noBackupAt(where);
      if (json) writeJson(io, backups.map(listed));
      else for (const b of backups) io.stdout.write(`${b.id}  ${listLine(b)}\n`);
      return;
    }
    const chosen = await chooseBackup(repo, where, key, flags.backup, !!flags.trustRepository);
    const manifest = chosen.manifest!;
    const keyId = chosen.status === 'complete' ? key!.id : null;
    const progress = progressOn(io);
    progress.line(`restoring backup ${manifest.id} of ${manifest.library} (the library as of ${manifest.taken_at}) from ${where}`);
    if (!keyId) warn(io, `backup ${manifest.id} is restored on trust (--trust-repository): ${chosen.problem}`);
    // Named in the target's record of the restore under way: only a run of the same backup goes on with it.
    const label = `backup ${manifest.id} of ${manifest.library}`;
    const secretsKey = carriedSecretsKey(io, manifest, keyId ? key : null);
    const target: RestoreTarget =
      into.kind === 'shared' ? await sharedTarget(into.database, into.storage, label, secretsKey) : await embeddedTarget(into.dir, { label, files: manifest.files, database: manifest.database });
    try {
      const summary = await restoreInto({ repo, manifest, keyId, secretsKey, target, progress });
      // The restored library's next backups go on under the same key.
      if (into.kind === 'directory' && keyId) {
        const kept = join(into.dir, DEFAULT_KEY_FILE);
        await copyFile(key!.path, kept, constants.COPYFILE_EXCL);
        await chmod(kept, 0o600);
        progress.line(`the backup key is kept as ${kept}, for the restored library's backups`);
      }
      // In the restored library: its log goes on from the backup's events with this one.
      await recordInLibrary(into.kind === 'shared' ? { database: into.database, dataDir: '' } : { dataDir: into.dir }, 'restore', {
        type: 'restore.completed',
        details: { backup: manifest.id, from: manifest.library, taken_at: manifest.taken_at },
      });
      if (json) writeJson(io, summary);
    } finally {
      await target.close();
    }
  } finally {
    repo.close();
  }
}

/**
 * `backup` has no secrets-key option of its own: a refused DOCSEARCH_SECRETS_KEY(_FILE) is the daemon's setting, read
 * here to carry the key along; `backup --help` says nothing of it.
 */
function withSecretsKeyHint<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CliError && /\bsecrets-key/.test(err.message)) {
      throw new CliError(err.message, err.exitCode, "backup reads the library's secrets key where its daemon does: set the variable as the daemon has it, or unset it to read secrets.key in the data directory (or under the storage prefix)");
    }
    throw err;
  }
}

type Destination = { kind: 'directory'; dir: string } | { kind: 'shared'; database: string; storage: S3Location };

/** Where `restore` puts the backup, its values checked: a data directory (--to), or a database and storage. */
function restoreDestination(io: IO, flags: { to?: string; database?: string; storage?: string }): Destination {
  // The environment's database counts only with --storage: it may be set for a daemon on this machine.
  const shared = sharedPair(flags.database ?? (flags.storage ? io.env.DOCSEARCH_DATABASE_URL : undefined), flags.storage, '--database or DOCSEARCH_DATABASE_URL, and --storage');
  if (shared && flags.to) throw new UsageError('restore into a data directory (--to) or a shared-mode database and storage (--database, --storage), not both');
  if (!shared) {
    if (!flags.to) throw new UsageError('name where to restore: --to <data-dir>, or --database and --storage', 'see `docsearch restore --help`');
    const dir = directoryToMake('--to', flags.to);
    const unwritable = notWritable(dir);
    if (unwritable) throw new UsageError(`--to: ${dir} cannot be written: ${unwritable}`, 'restore into a directory on a writable disk; nothing was changed');
    return { kind: 'directory', dir };
  }
  const problem = databaseUrlProblem(shared.database);
  if (problem) throw new UsageError(`${flags.database ? '--database' : 'DOCSEARCH_DATABASE_URL'} ${problem}`);
  try {
    return { kind: 'shared', database: shared.database, storage: parseS3Location(shared.storage, io.env) };
  } catch (err) {
    if (err instanceof StorageConfigError) throw new UsageError(`--storage: ${err.message}`);
    throw err;
  }
}

/** The secrets key `manifest` carries, unwrapped with the backup key that checked its seal (none: on trust). */
function carriedSecretsKey(io: IO, manifest: BackupManifest, key: BackupKey | null): Buffer | null {
  const wrapped = manifest.secrets_key;
  if (!wrapped) {
    warn(io, `backup ${manifest.id} carries no secrets key (taken before backups carried it, or of a library with none): second factors and source credentials sealed in it open only if the daemon is given the key they were sealed with (--secrets-key-file)`);
    return null;
  }
  const opened = key ? unwrapSecretsKey(wrapped, key, manifest.id) : null;
  if (!opened) warn(io, `the secrets key backup ${manifest.id} carries (id ${wrapped.id}) opens only with the backup key that sealed it, not given: give the restored daemon that secrets key (--secrets-key-file), or reset second factors and source credentials`);
  return opened;
}

/**
 * The backup to restore: the one named, or else the newest in the repository. Neither is replaced by another when
 * it cannot be restored: an older backup is restored only when asked for by its id.
 */
async function chooseBackup(repo: Repository, where: string, key: BackupKey | null, id: string | undefined, trust: boolean): Promise<BackupEntry> {
  if (id) {
    const b = await readBackup(repo, id, key);
    if (b.status === 'incomplete' && !(await backupExists(repo, id))) throw new CliError(`there is no backup ${id} in ${where}`, 1, 'see the backups it holds: docsearch restore --list');
    if (!restorable(b, trust)) throw refusal(b, where);
    return b;
  }
  const all = await listBackups(repo, key);
  const newest = all.at(-1);
  if (!newest) throw noBackupAt(where);
  if (restorable(newest, trust)) return newest;
  const why = refusal(newest, where);
  const older = all.filter((b) => restorable(b, trust)).at(-1);
  if (!older) throw new CliError(`${where} holds no complete backup: ${why.message}`, 1, why.hint);
  throw new CliError(
    `${why.message}; restore does not fall back to an older backup on its own`,
    1,
    `to restore the newest one that can be restored, name it: --backup ${older.id} (the library as of ${older.manifest!.taken_at}); ${why.hint ?? ''}`.replace(/; $/, ''),
  );
}

/** A backup as `restore --list --json` shows it. */
const listed = (b: BackupEntry) => ({
  id: b.id,
  status: b.status,
  complete: b.status === 'complete',
  taken_at: b.manifest?.taken_at ?? null,
  files: b.manifest?.files.length ?? null,
  key_id: b.manifest?.key_id ?? null,
  problem: b.problem ?? null,
});

/** A backup as `restore --list` shows it, after its id. */
function listLine(b: BackupEntry): string {
  const m = b.manifest;
  const what = m ? `taken at ${m.taken_at}  ${m.files.length} files` : '';
  switch (b.status) {
    case 'complete':
      return `complete     ${what}  sealed with key ${m!.key_id}`;
    case 'unsealed':
      return `unsealed     ${what}  written by docsearch ${m!.docsearch} before backups were sealed: restore takes it with --trust-repository`;
    case 'unchecked':
      return `sealed       ${what}  with key ${m!.key_id}, not checked (no --key-file)`;
    case 'other-key':
      return `other key    ${what}  ${b.problem}`;
    default:
      return `${b.status.padEnd(12)} ${b.problem}`;
  }
}
