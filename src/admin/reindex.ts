import { Command } from 'commander';
import { CliError } from '../terminal/errors.js';
import { type IO, isStderrTTY, notice } from '../terminal/io.js';
import { systemClock } from '../core/clock.js';
import { Reindexer } from '../ingest/reindex.js';
import { createEmbedder } from '../models/registry.js';
import { ChunkIndex } from '../store/lancedb/chunks.js';
import { DocumentStore } from '../store/sql/documents.js';
import { JobStore } from '../store/sql/jobs.js';
import { lockDataDir } from '../server/data-dir-lock.js';
import { createLogger } from '../core/logger.js';
import { openStorage } from '../server/storage.js';
import { databaseOption, initOption, openOperatorDatabase, operatorConfig } from './operator-database.js';
import { operatorAudit } from './operator-audit.js';

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
    .action(async (flags: { dataDir?: string; database?: string; init?: boolean; storage?: string; embedder?: string; modelCacheDir?: string; config?: string }) => {
      const config = operatorConfig(
        io,
        'reindex',
        { 'data-dir': flags.dataDir, database: flags.database, storage: flags.storage, embedder: flags.embedder, 'model-cache-dir': flags.modelCacheDir },
        flags.config,
      );
      let unlock: () => void;
      try {
        unlock = lockDataDir(config.dataDir);
      } catch (err) {
        throw new CliError((err as Error).message, 1, 'a running daemon re-indexes through POST /api/v1/reindex');
      }
      let database;
      let storage;
      try {
        database = await openOperatorDatabase(config, { init: flags.init });
      } catch (err) {
        unlock();
        throw err;
      }
      try {
        storage = await openStorage({ ...config, indexCacheMb: 0 }, io.env, { locks: database.locks, events: database.events });
      } catch (err) {
        await database.close();
        unlock();
        throw new CliError(`could not open the storage: ${(err as Error).message}`, 1);
      }
      const embedder = createEmbedder(config);
      try {
        // Its dimension first (a remote model learns it from a probe): a model changed behind the same id needs it too.
        await embedder.init();
        const chunks = await ChunkIndex.open(storage.vectors, { embedderId: embedder.id, dimension: () => embedder.dimension });
        const from = chunks.indexInfo()?.embedderId;
        if (!chunks.reindexRequired()) {
          notice(io, from ? `the index is already built with ${from}: nothing to do` : 'nothing is indexed yet: nothing to do');
          return;
        }
        const documents = new DocumentStore(database.db, new JobStore(database.db, systemClock), systemClock);
        const reindexer = new Reindexer({ chunks, embedder, documents, locks: database.locks, log: createLogger('silent'), now: systemClock });
        const tty = isStderrTTY(io);
        let lastPct = -1;
        notice(io, `re-embedding the index: ${from} → ${embedder.id}`);
        await operatorAudit(database.db, 'reindex').record({ type: 'reindex.started', details: { from, to: embedder.id } });
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
        await storage.close();
        await database.close();
        unlock();
      }
    });
}
