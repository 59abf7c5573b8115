import { Command } from 'commander';
import type { IO } from '../terminal/io.js';
import { databaseOption, initOption } from './library-options.js';
import type { ReindexFlags } from './reindex-in-place.js';

/**
 * `docsearch reindex`: re-embeds the stored chunks with the configured embedder, in place, while no daemon runs
 * (it takes the data-dir lock, as `serve` does). A running daemon is re-indexed through `POST /api/v1/reindex`
 * instead. The embedder and the storage (`--storage s3://…`) come from the same flags, environment and config file
 * as `serve`; with shared storage every replica must be stopped, since their data dirs are not this one.
 */
export function reindexCommand(io: IO): Command {
  return new Command('reindex')
    .summary('re-embed the index with the configured embedder (daemon stopped)')
    .description(
      'Re-embed every stored chunk with the configured embedder, from the stored chunk text (files are not parsed again).\n' +
        'Needed after changing --embedder; until then search answers 409. Runs on the data directory directly, so the\n' +
        'daemon must be stopped (with --storage s3://…, every replica); against a running daemon use POST /api/v1/reindex.',
    )
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
    .addOption(databaseOption())
    .addOption(initOption())
    .option('--storage <url>', 'where the index lives, as for serve: unset = the data dir, or s3://bucket/prefix (env DOCSEARCH_STORAGE)')
    .option('--embedder <spec>', 'embedding model: builtin | ollama:<model> | openai:<model> (env DOCSEARCH_EMBEDDER)')
    .option('--model-cache-dir <dir>', 'where the built-in model graph is cached (env DOCSEARCH_MODEL_CACHE_DIR)')
    .option('--config <file>', 'JSON config file, as for serve (env DOCSEARCH_CONFIG)')
    .addHelpText(
      'after',
      `
Examples:
  $ docsearch reindex --data-dir /var/lib/docsearch
  $ curl -X POST -H "Authorization: Bearer $DOCSEARCH_TOKEN" http://127.0.0.1:7411/api/v1/reindex   # daemon running
`,
    )
    .action(async (flags: ReindexFlags) => {
      await (await import('./reindex-in-place.js')).reindexInPlace(io, flags);
    });
}
