import { Command, Option } from 'commander';
import { CliError, UsageError } from '../terminal/errors.js';
import { type IO, writeJson } from '../terminal/io.js';
import { wantsJson } from './json-flag.js';
import { progressOn } from './migrate/progress.js';
import type { MigrationSummary } from './migrate/run.js';

const DEFAULT_BATCH_ROWS = 10_000;

interface Flags {
  from?: string;
  fromDatabase?: string;
  fromStorage?: string;
  to?: string;
  toDatabase?: string;
  toStorage?: string;
  dryRun?: boolean;
  json?: boolean;
  batchRows: string;
}

const MB = 1024 * 1024;

/** The closing lines for a person: what moved, and what differs when the check failed. */
function report(s: MigrationSummary): string[] {
  if (s.target_state === 'done' || !s.originals || !s.index) return [];
  const lines = [
    `database: ${s.tables.reduce((n, t) => n + t.rows, 0).toLocaleString('en-US')} rows in ${s.tables.filter((t) => t.rows > 0).length} tables`,
    `originals: ${s.originals.files} files (${(s.originals.bytes / MB).toFixed(1)} MB)${s.dry_run ? '' : `, ${s.originals.copied} copied by this run`}`,
    `chunk index: ${s.index.chunks ? `${s.index.chunks.rows.toLocaleString('en-US')} chunks of ${s.index.chunks.documents} documents (${s.index.embedder_id}, ${s.index.dimension} dimensions)` : 'none yet'}` +
      (s.index.chunk_windows ? `, ${s.index.chunk_windows.rows.toLocaleString('en-US')} reranker windows` : ''),
  ];
  if (s.dry_run) return lines;
  lines.push(`moved ${(s.bytes_moved / MB).toFixed(1)} MB in ${s.seconds} s; nothing was embedded again`);
  if (s.verification?.ok) lines.push('verified: the target holds the same rows, originals and chunks as the source');
  return lines;
}

/**
 * `docsearch migrate`: copies a library between embedded mode (a data directory) and shared mode (PostgreSQL and
 * S3 object storage), either way, without re-embedding anything, and checks the copy. See docs/migrate.md.
 */
export function migrateCommand(io: IO): Command {
  return new Command('migrate')
    .summary('copy a library between a data directory and shared mode (daemons stopped)')
    .description(
      'Copy a whole library — accounts, API keys, OAuth clients and grants, live sessions and tokens, projects, documents,\n' +
        'open jobs, originals, and the chunk index with its vectors (nothing is embedded again) — from one place to another:\n' +
        'a data directory (embedded mode) into PostgreSQL and S3 object storage (shared mode), back, or between two of either.\n' +
        'Nothing may run on either side meanwhile: the data-dir lock and the database\'s library lock keep daemons out, and the\n' +
        'command refuses while one runs (but for --dry-run, which only reads the source). Interrupted, it resumes where it stopped when run again; at the end it verifies row\n' +
        'counts and checksums of every table, each original\'s sha256 and each document\'s chunks, and exits 1 naming what differs.\n' +
        'S3 endpoint and keys come from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, for both sides.',
    )
    .option('--from <dir>', 'data directory of the library to copy (its SQLite database, index and originals)')
    .addOption(new Option('--from-database <url>', 'PostgreSQL database of the library to copy (shared mode)').env('DOCSEARCH_FROM_DATABASE_URL'))
    .option('--from-storage <url>', 'object storage of the library to copy, s3://bucket/prefix (shared mode)')
    .option('--to <dir>', 'data directory to copy into (made if missing; must hold no library)')
    .addOption(new Option('--to-database <url>', 'PostgreSQL database to copy into (empty, or holding an unfinished copy of the same library)').env('DOCSEARCH_TO_DATABASE_URL'))
    .option('--to-storage <url>', 'object storage to copy into, s3://bucket/prefix (empty, or holding an unfinished copy)')
    .option('--dry-run', 'show what would be copied and whether the target can take it; write nothing (runs while the source is served)')
    .option('--json', 'print a JSON summary on stdout (progress stays on stderr)')
    .option('--batch-rows <n>', 'chunk-index rows per commit (also database rows per transaction, at most 1,000)', String(DEFAULT_BATCH_ROWS))
    .addHelpText(
      'after',
      `
Examples:
  $ DOCSEARCH_TO_DATABASE_URL=postgres://docsearch@db.internal/docsearch docsearch migrate --from /var/lib/docsearch --to-storage s3://docsearch-lib/prod
  $ DOCSEARCH_FROM_DATABASE_URL=postgres://docsearch@db.internal/docsearch docsearch migrate --from-storage s3://docsearch-lib/prod --to /var/lib/docsearch-local
  $ docsearch migrate --from /var/lib/docsearch --to /mnt/new-disk/docsearch --dry-run
`,
    )
    .action(async (flags: Flags, cmd: Command) => {
      const json = wantsJson(cmd);
      const batchRows = Number(flags.batchRows);
      if (!Number.isInteger(batchRows) || batchRows < 1) throw new UsageError(`--batch-rows must be a positive integer, got ${JSON.stringify(flags.batchRows)}`);
      // Loaded here, not above: `migrate --help` loads no database, index or object storage.
      const [{ checkSpec }, { runMigration }] = await Promise.all([import('./migrate/libraries.js'), import('./migrate/run.js')]);
      const source = checkSpec('source', { dataDir: flags.from, database: flags.fromDatabase, storage: flags.fromStorage }, io.env);
      const target = checkSpec('target', { dataDir: flags.to, database: flags.toDatabase, storage: flags.toStorage }, io.env);
      const progress = progressOn(io);
      const summary = await runMigration({ source, target, env: io.env, dryRun: !!flags.dryRun, batchRows, progress });
      for (const line of report(summary)) progress.line(line);
      if (json) writeJson(io, summary);
      if (summary.verification && !summary.verification.ok) {
        throw new CliError(
          `verification failed: the target differs from the source in ${summary.verification.differences.length} way(s):\n${summary.verification.differences.map((d) => `  ${d}`).join('\n')}`,
          1,
          'run the same command again: it copies what differs and checks again (docs/migrate.md, "When verification fails")',
        );
      }
    });
}
