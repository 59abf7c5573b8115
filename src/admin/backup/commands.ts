/**
 * `docsearch backup` and `docsearch restore`: a consistent copy of a running library into a repository (a
 * directory or s3://bucket/prefix), and back into an empty data directory. See docs/operations.md, "Backup and
 * restore".
 */
import { Command, Option } from 'commander';
import type { IO } from '../../terminal/io.js';
import { databaseOption } from '../library-options.js';
import { DEFAULT_KEY_FILE, KEY_FILE_ENV } from './backup-key.js';
import type { BackupFlags, RestoreFlags } from './command-actions.js';
import { wantsJson } from '../json-flag.js';

export const BACKUP_SUMMARY = 'copy a running library into a backup (directory or s3://), incrementally';
export const RESTORE_SUMMARY = 'restore a backup into an empty data directory or shared-mode database and storage, verified';

const storageOption = (what: string) => new Option('--storage <s3-url>', `s3://bucket/prefix: ${what}`);

export function backupCommand(io: IO): Command {
  return new Command('backup')
    .summary(BACKUP_SUMMARY)
    .description(
      'Copy the library a daemon serves — its database as of one moment, the chunk index at the version current just after,\n' +
        'and the originals its documents use — into a backup repository, while the daemon goes on serving uploads and searches.\n' +
        'A shared-mode library is named as its replicas name it (--database, or DOCSEARCH_DATABASE_URL, and --storage).\n' +
        'The repository is a directory or s3://bucket/prefix; it holds many backups, each run copying only the files the last\n' +
        'one lacks (originals and index files never change). A backup exists once its manifest is written, last: one that was\n' +
        'interrupted is never taken for complete. The manifest is sealed with a backup key (HMAC-SHA256) that restore checks, so\n' +
        'that whoever can write the repository cannot make restore take a backup they altered: an embedded library\'s key is\n' +
        'backup.key in its data directory unless --key-file names another, made on first use; keep a copy apart from the backups.\n' +
        'S3 keys come from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.',
    )
    .requiredOption('--to <repository>', 'directory or s3://bucket/prefix keeping the backups')
    .option('--data-dir <dir>', 'data directory of the library (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .addOption(storageOption("the shared-mode library's index and originals"))
    .option('--keep <n>', 'after a successful run, keep only the newest n backups (the files only older ones use go too)')
    .option('--max-rate <rate>', 'read at most this many bytes a second (e.g. 20M), to leave the disk to the daemon')
    .option('--key-file <file>', `the backup key that seals the manifest, made if missing (env ${KEY_FILE_ENV}; default: <data-dir>/${DEFAULT_KEY_FILE}, required in shared mode)`)
    .option('--json', 'print a JSON summary on stdout (progress stays on stderr)')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch backup --data-dir /var/lib/docsearch --to /mnt/backups/docsearch --keep 14
  $ AWS_ENDPOINT_URL=https://s3.example.net docsearch backup --data-dir /var/lib/docsearch --to s3://backups/docsearch --json
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db/docsearch docsearch backup --storage s3://library/docsearch --to s3://backups/docsearch --key-file /etc/docsearch/backup.key
`,
    )
    .action(async (flags: BackupFlags, cmd: Command) => {
      await (await import('./command-actions.js')).backup(io, flags, wantsJson(cmd));
    });
}

export function restoreCommand(io: IO): Command {
  return new Command('restore')
    .summary(RESTORE_SUMMARY)
    .description(
      'Bring a backup made by `docsearch backup` back into a new or empty data directory (--to), or an empty shared-mode\n' +
        'database and storage (--database, or DOCSEARCH_DATABASE_URL, and --storage; a backup of either mode goes into either):\n' +
        "the manifest's seal is checked with the backup key (--key-file), every file against the manifest (size and sha256) before\n" +
        'it is placed, each index table against the version backed up, and the database rows against the backup. Without\n' +
        '--backup it takes the newest backup in the repository, and refuses, naming it, when that one is incomplete (interrupted,\n' +
        'or still running), damaged, or cannot be checked: it never falls back to an older backup on its own. With --list, show\n' +
        'the backups a repository holds and what each is.',
    )
    .requiredOption('--from <repository>', 'directory or s3://bucket/prefix keeping the backups')
    .option('--backup <id>', 'which backup (default: the newest)')
    .option('--key-file <file>', `the backup key the backups were sealed with (env ${KEY_FILE_ENV}); an embedded library's backup made it as <data-dir>/${DEFAULT_KEY_FILE}`)
    .option('--trust-repository', 'restore a backup whose seal cannot be checked: one written before backups were sealed (docsearch 0.2.0), or whose key is lost. Its files are still checked against its manifest, but a manifest rewritten by whoever could write the repository would not be noticed')
    .option('--to <dir>', 'data directory to restore into: new or empty, or one the same restore was interrupted in (it goes on)')
    .addOption(databaseOption())
    .addOption(storageOption('where the restored index and originals go (empty), with --database'))
    .option('--list', 'list the backups in the repository and whether each is complete')
    .option('--json', 'print a JSON summary on stdout (progress stays on stderr)')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch restore --from /mnt/backups/docsearch --list --key-file /root/docsearch-backup.key
  $ docsearch restore --from /mnt/backups/docsearch --to /var/lib/docsearch-restored --key-file /root/docsearch-backup.key
  $ docsearch serve --data-dir /var/lib/docsearch-restored
  $ DOCSEARCH_DATABASE_URL=postgres://docsearch@db/restored docsearch restore --from s3://backups/docsearch --storage s3://library/restored --key-file /etc/docsearch/backup.key
`,
    )
    .action(async (flags: RestoreFlags, cmd: Command) => {
      await (await import('./command-actions.js')).restore(io, flags, wantsJson(cmd));
    });
}
