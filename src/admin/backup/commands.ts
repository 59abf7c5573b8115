/**
 * `docsearch backup` and `docsearch restore`: a consistent copy of a running library into a repository (a
 * directory or s3://bucket/prefix), and back into an empty data directory. See docs/operations.md, "Backup and
 * restore".
 */
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { CliError, UsageError } from '../../terminal/errors.js';
import { type IO, writeJson } from '../../terminal/io.js';
import { progressOn } from '../migrate/progress.js';
import { databaseOption, operatorConfig } from '../operator-database.js';
import { recordInLibrary } from '../operator-audit.js';
import { runBackup } from './backup.js';
import { parseRate, RateLimit } from './rate-limit.js';
import { describeRepository, listBackups, openRepository, readManifest } from './repository.js';
import { restoreInto } from './restore.js';
import { embeddedTarget, type RestoreTarget, sharedTarget } from './restore-target.js';
import { openEmbeddedLibrary, openSharedLibrary, type RunningLibrary } from './running-library.js';

const jsonWanted = (cmd: Command): boolean => !!cmd.optsWithGlobals<{ json?: boolean }>().json;

export const BACKUP_SUMMARY = 'copy a running library into a backup (directory or s3://), incrementally';
export const RESTORE_SUMMARY = 'restore a backup into an empty data directory or shared-mode database and storage, verified';

const storageOption = (what: string) => new Option('--storage <s3-url>', `s3://bucket/prefix: ${what}`);

/** Shared mode needs both its database and its storage; either alone names half a library. */
function sharedPair(database: string | undefined, storage: string | undefined, flags: string): { database: string; storage: string } | null {
  if (!database && !storage) return null;
  if (!database || !storage) throw new UsageError(`a shared-mode library is a database and a storage: name both (${flags})`);
  return { database, storage };
}

export function backupCommand(io: IO): Command {
  return new Command('backup')
    .summary(BACKUP_SUMMARY)
    .description(
      'Copy the library a daemon serves — its database as of one moment, the chunk index at the version current just after,\n' +
        'and the originals its documents use — into a backup repository, while the daemon goes on serving uploads and searches.\n' +
        'A shared-mode library is named as its replicas name it (--database, or DOCSEARCH_DATABASE_URL, and --storage).\n' +
        'The repository is a directory or s3://bucket/prefix; it holds many backups, each run copying only the files the last\n' +
        'one lacks (originals and index files never change). A backup exists once its manifest is written, last: one that was\n' +
        'interrupted is never taken for complete. S3 keys come from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.',
    )
    .requiredOption('--to <repository>', 'directory or s3://bucket/prefix keeping the backups')
    .option('--data-dir <dir>', 'data directory of the library (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .addOption(storageOption("the shared-mode library's index and originals"))
    .option('--keep <n>', 'after a successful run, keep only the newest n backups (the files only older ones use go too)')
    .option('--max-rate <rate>', 'read at most this many bytes a second (e.g. 20M), to leave the disk to the daemon')
    .option('--json', 'print a JSON summary on stdout (progress stays on stderr)')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch backup --data-dir /var/lib/docsearch --to /mnt/backups/docsearch --keep 14
  $ AWS_ENDPOINT_URL=https://s3.example.net docsearch backup --data-dir /var/lib/docsearch --to s3://backups/docsearch --json
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db/docsearch docsearch backup --storage s3://library/docsearch --to s3://backups/docsearch
`,
    )
    .action(async (flags: { to: string; dataDir?: string; database?: string; storage?: string; keep?: string; maxRate?: string }, cmd: Command) => {
      const keep = flags.keep === undefined ? undefined : Number(flags.keep);
      if (keep !== undefined && (!Number.isInteger(keep) || keep < 1)) throw new UsageError(`--keep must be a positive integer, got ${JSON.stringify(flags.keep)}`);
      const rate = flags.maxRate === undefined ? undefined : parseRate(flags.maxRate);
      if (rate === null) throw new UsageError(`--max-rate must be bytes a second such as 500k or 20M, got ${JSON.stringify(flags.maxRate)}`);
      const config = operatorConfig(io, 'backup', { 'data-dir': flags.dataDir, database: flags.database, storage: flags.storage });
      const shared = sharedPair(config.database, config.storage, '--database or DOCSEARCH_DATABASE_URL, and --storage');
      const library: RunningLibrary = shared ? await openSharedLibrary(shared.database, shared.storage, io.env) : await openEmbeddedLibrary(resolve(config.dataDir));
      const repo = await openRepository(flags.to, io.env).catch(async (err: unknown) => {
        await library.close();
        throw err;
      });
      try {
        const summary = await runBackup({
          library,
          repo,
          repository: describeRepository(flags.to, io.env),
          progress: progressOn(io),
          ...(rate ? { rate: new RateLimit(rate) } : {}),
          ...(keep ? { keep } : {}),
        });
        await recordInLibrary(shared ? { database: shared.database, dataDir: '' } : { dataDir: resolve(config.dataDir) }, 'backup', {
          type: 'backup.created',
          details: { backup: summary.id, repository: summary.repository, files: summary.files.total, copied: summary.files.copied },
        });
        if (jsonWanted(cmd)) writeJson(io, summary);
      } finally {
        repo.close();
        await library.close();
      }
    });
}

export function restoreCommand(io: IO): Command {
  return new Command('restore')
    .summary(RESTORE_SUMMARY)
    .description(
      'Bring a backup made by `docsearch backup` back into a new or empty data directory (--to), or an empty shared-mode\n' +
        'database and storage (--database, or DOCSEARCH_DATABASE_URL, and --storage; a backup of either mode goes into either):\n' +
        "every file is checked against the backup's manifest (size and sha256) before it is placed, each index table against\n" +
        'the version backed up, and the database rows against the backup. A backup without a complete manifest (one that was\n' +
        'interrupted) is refused. With --list, show the backups a repository holds.',
    )
    .requiredOption('--from <repository>', 'directory or s3://bucket/prefix keeping the backups')
    .option('--backup <id>', 'which backup (default: the newest complete one)')
    .option('--to <dir>', 'data directory to restore into (new or empty)')
    .addOption(databaseOption())
    .addOption(storageOption('where the restored index and originals go (empty), with --database'))
    .option('--list', 'list the backups in the repository and whether each is complete')
    .option('--json', 'print a JSON summary on stdout (progress stays on stderr)')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch restore --from /mnt/backups/docsearch --list
  $ docsearch restore --from /mnt/backups/docsearch --to /var/lib/docsearch-restored
  $ docsearch serve --data-dir /var/lib/docsearch-restored
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db/restored docsearch restore --from s3://backups/docsearch --storage s3://library/restored
`,
    )
    .action(async (flags: { from: string; backup?: string; to?: string; database?: string; storage?: string; list?: boolean }, cmd: Command) => {
      const json = jsonWanted(cmd);
      const repo = await openRepository(flags.from, io.env);
      try {
        if (flags.list) {
          const backups = await listBackups(repo);
          if (json) writeJson(io, backups.map((b) => ({ id: b.id, complete: !!b.manifest, taken_at: b.manifest?.taken_at ?? null, files: b.manifest?.files.length ?? null, problem: b.problem ?? null })));
          else for (const b of backups) io.stdout.write(`${b.id}  ${b.manifest ? `complete  taken at ${b.manifest.taken_at}  ${b.manifest.files.length} files` : `damaged: ${b.problem}`}\n`);
          return;
        }
        // The environment's database counts only with --storage: it may be set for a daemon on this machine.
        const shared = sharedPair(flags.database ?? (flags.storage ? io.env.DOCSEARCH_DATABASE_URL : undefined), flags.storage, '--database or DOCSEARCH_DATABASE_URL, and --storage');
        if (shared && flags.to) throw new UsageError('restore into a data directory (--to) or a shared-mode database and storage (--database, --storage), not both');
        if (!shared && !flags.to) throw new UsageError('name where to restore: --to <data-dir>, or --database and --storage', 'see `docsearch restore --help`');
        let id = flags.backup;
        if (!id) {
          id = (await listBackups(repo)).filter((b) => b.manifest).at(-1)?.id;
          if (!id) throw new CliError(`${describeRepository(flags.from, io.env)} holds no complete backup`, 1, 'a backup that was interrupted has no manifest and cannot be restored; run `docsearch backup` again');
        }
        const manifest = await readManifest(repo, id);
        const target: RestoreTarget = shared ? await sharedTarget(shared.database, shared.storage, io.env, `backup ${manifest.id} of ${manifest.library}`) : await embeddedTarget(resolve(flags.to!));
        try {
          const summary = await restoreInto({ repo, manifest, target, progress: progressOn(io) });
          // In the restored library: its log goes on from the backup's events with this one.
          await recordInLibrary(shared ? { database: shared.database, dataDir: '' } : { dataDir: resolve(flags.to!) }, 'restore', {
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
    });
}
