/**
 * What `docsearch reindex` does once its options are parsed: takes the data-dir lock, opens the database, the
 * storage and the embedder as `serve` would, and re-embeds every stored chunk. Loaded only when it runs.
 */
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
import type { LibraryFlags } from './library-options.js';
import { openOperatorDatabase, operatorConfig } from './operator-database.js';
import { operatorAudit } from './operator-audit.js';

export interface ReindexFlags extends LibraryFlags {
  storage?: string;
  embedder?: string;
  modelCacheDir?: string;
  config?: string;
}

export async function reindexInPlace(io: IO, flags: ReindexFlags): Promise<void> {
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
}
