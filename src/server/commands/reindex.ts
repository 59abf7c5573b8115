import { join } from 'node:path';
import { Command } from 'commander';
import { CliError } from '../../cli/errors.js';
import { type IO, isStderrTTY, notice } from '../../cli/io.js';
import { systemClock } from '../../core/clock.js';
import { Reindexer } from '../../ingest/reindex.js';
import { createEmbedder } from '../../models/registry.js';
import { ChunkIndex } from '../../store/lancedb/chunks.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { openSqlite } from '../../store/sqlite/database.js';
import { DocumentStore } from '../../store/sqlite/documents.js';
import { JobStore } from '../../store/sqlite/jobs.js';
import { ConfigError, resolveConfig } from '../config.js';
import { sqlitePath } from '../daemon.js';
import { lockDataDir } from '../data-dir-lock.js';
import { createLogger } from '../logger.js';

/**
 * `docsearch reindex`: re-embeds the data directory's chunks with the configured embedder, in place, while no
 * daemon runs (it takes the data-dir lock, as `serve` does: LanceDB has a single writer). A running daemon is
 * re-indexed through `POST /api/v1/reindex` instead. The embedder comes from the same flags, environment and
 * config file as `serve`.
 */
export function reindexCommand(io: IO): Command {
  return new Command('reindex')
    .summary('re-embed the index with the configured embedder (daemon stopped)')
    .description(
      'Re-embed every stored chunk with the configured embedder, from the stored chunk text (files are not parsed again).\n' +
        'Needed after changing --embedder; until then search answers 409. Runs on the data directory directly, so the\n' +
        'daemon must be stopped; against a running daemon use POST /api/v1/reindex.',
    )
    .option('--data-dir <dir>', 'data directory of the daemon (env DOCSEARCH_DATA_DIR)')
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
    .action(async (flags: { dataDir?: string; embedder?: string; modelCacheDir?: string; config?: string }) => {
      let config;
      try {
        config = resolveConfig({ 'data-dir': flags.dataDir, embedder: flags.embedder, 'model-cache-dir': flags.modelCacheDir }, io.env, flags.config);
      } catch (err) {
        if (err instanceof ConfigError) throw new CliError(err.message, 2, 'see `docsearch reindex --help`');
        throw err;
      }
      let unlock: () => void;
      try {
        unlock = lockDataDir(config.dataDir);
      } catch (err) {
        throw new CliError((err as Error).message, 1, 'a running daemon re-indexes through POST /api/v1/reindex');
      }
      const sqlite = await openSqlite(sqlitePath(config.dataDir));
      const vectors = await VectorStore.open(join(config.dataDir, 'lancedb'));
      const embedder = createEmbedder(config);
      try {
        const chunks = await ChunkIndex.open(vectors, { embedderId: embedder.id });
        const from = chunks.indexInfo()?.embedderId;
        if (!chunks.reindexRequired()) {
          notice(io, from ? `the index is already built with ${from}: nothing to do` : 'nothing is indexed yet: nothing to do');
          return;
        }
        const documents = new DocumentStore(sqlite.db, new JobStore(sqlite.db, systemClock), systemClock);
        const reindexer = new Reindexer({ chunks, embedder, documents, log: createLogger('silent'), now: systemClock });
        const tty = isStderrTTY(io);
        let lastPct = -1;
        notice(io, `re-embedding the index: ${from} → ${embedder.id}`);
        await reindexer.run((done, total) => {
          const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
          if (tty) io.stderr.write(`\r${done}/${total} chunks (${pct}%)`);
          else if (pct >= lastPct + 10 || done === total) notice(io, `${done}/${total} chunks (${pct}%)`);
          lastPct = pct;
        });
        if (tty) io.stderr.write('\n');
        notice(io, `done: ${reindexer.status().done} chunks re-embedded with ${embedder.id}`);
      } finally {
        await embedder.close();
        vectors.close();
        await sqlite.close();
        unlock();
      }
    });
}
