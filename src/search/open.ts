/**
 * Assembles the search capability for the daemon: the configured reranker (the `builtin` one registered
 * into the models registry from here, since it needs the window store), the window store and its ingest
 * writes, the retriever with its query-vector cache, and the service. One call from the composition root.
 */
import { randomBytes } from 'node:crypto';
import { BuiltinEmbedder } from '../models/builtin/minilm-embedder.js';
import type { Embedder } from '../models/embedder.js';
import type { ForegroundGate } from '../core/foreground.js';
import { createReranker, type ModelConfig, threads } from '../models/registry.js';
import { ChunkWindowIndex } from '../store/lancedb/chunk-windows.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { VectorStore } from '../store/lancedb/connection.js';
import type { FilterLookups } from '../store/sql/document-filters.js';
import type { LabelStore } from '../store/sql/labels.js';
import { FacetCounter } from './facets.js';
import { FilterResolver } from './filters.js';
import { CursorCodec } from './cursor.js';
import { LibraryLanguages } from './library-languages.js';
import { QueryVectorCache } from './query-cache.js';
import { BuiltinReranker } from './rerank/builtin.js';
import { type CandidateReranker, fromModelReranker } from './rerank/stage.js';
import { withWindowWrites } from './rerank/window-writes.js';
import { DEFAULT_RETRIEVE, Retriever } from './retrieve.js';
import { SearchService, type SearchServiceDeps } from './service.js';
import type { SearchTimings } from './timings.js';

export interface SearchStack {
  service: SearchService;
  /** The facet counter search uses, which the document list counts with too. */
  facets: FacetCounter;
  /** The chunk index the ingest pipeline and removals should write through (adds window writes when needed). */
  chunkWrites: ChunkIndex;
  /** Health of the reranker: `none` counts as up. */
  probe: () => Promise<{ status: 'up' | 'down'; id: string; [k: string]: unknown }>;
  close(): Promise<void>;
}

export async function openSearch(deps: {
  models: ModelConfig;
  /** How long a search waits for the reranker (`--rerank-timeout`). */
  rerankTimeoutMs?: number;
  embedder: Embedder;
  vectors: VectorStore;
  chunks: ChunkIndex;
  documents: SearchServiceDeps['documents'];
  projects: SearchServiceDeps['projects'];
  /** What filters and facets look up: label names, uploaders, metadata. */
  lookups: FilterLookups;
  labels: LabelStore;
  users: { emails(ids: readonly string[]): Promise<Map<string, string>> };
  /** Server-wide settings: where the secret that seals page cursors is kept (shared by every replica). */
  settings: { getOrCreate(key: string, make: () => string): Promise<string> };
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  foreground?: ForegroundGate;
  /** Told where searches spend their time (the daemon's metrics). */
  timings?: SearchTimings;
}): Promise<SearchStack> {
  let builtin: BuiltinReranker | undefined;
  let windowEmbedder: Embedder | undefined;
  const windows = await ChunkWindowIndex.open(deps.vectors, 384, deps.log);
  const ownEmbedders: Embedder[] = [];
  const model = createReranker(deps.models, {
    extraRerankers: {
      builtin: (cfg) => {
        // Windows and queries must be embedded by the built-in model, whatever embedder retrieval uses.
        windowEmbedder =
          deps.embedder instanceof BuiltinEmbedder ? deps.embedder : new BuiltinEmbedder({ modelCacheDir: cfg.modelCacheDir, ...(cfg.background ? { background: cfg.background } : {}), ...threads(cfg) });
        if (windowEmbedder !== deps.embedder) ownEmbedders.push(windowEmbedder);
        builtin = new BuiltinReranker(windowEmbedder, windows);
        return builtin;
      },
    },
  });
  model?.init().catch((err: unknown) => deps.log.error({ err, reranker: model.id }, 'reranker failed to initialise'));
  const reranker: CandidateReranker | null = builtin ?? (model ? fromModelReranker(model) : null);

  const secret = await deps.settings.getOrCreate('search.cursor_secret', () => randomBytes(32).toString('base64url'));
  const languages = new LibraryLanguages(deps.documents);
  const retriever = new Retriever(
    {
    chunks: deps.chunks,
    embedder: deps.embedder,
    cache: new QueryVectorCache(512),
    log: deps.log,
    libraryLanguages: (projectIds) => languages.of(projectIds),
    ...(deps.timings ? { timings: deps.timings } : {}),
    },
    { ...DEFAULT_RETRIEVE, ...(deps.rerankTimeoutMs !== undefined ? { rerankTimeoutMs: deps.rerankTimeoutMs } : {}) },
  );
  const facets = new FacetCounter({ chunks: deps.chunks, lookups: deps.lookups, labels: deps.labels, users: deps.users, projects: deps.projects });
  const service = new SearchService({
    retriever,
    reranker,
    documents: deps.documents,
    projects: deps.projects,
    filters: new FilterResolver({ lookups: deps.lookups, labels: deps.labels }),
    facets,
    cursors: new CursorCodec(Buffer.from(secret, 'base64url')),
    reindexRequired: () => deps.chunks.reindexRequired(),
    ...(deps.foreground ? { foreground: deps.foreground } : {}),
    ...(deps.timings ? { timings: deps.timings } : {}),
  });
  return {
    service,
    facets,
    chunkWrites: builtin && windowEmbedder ? withWindowWrites(deps.chunks, windowEmbedder, windows) : deps.chunks,
    async probe() {
      if (!model) return { status: 'up', id: 'none' };
      const st = model.status();
      return { status: st.error && !st.loaded ? 'down' : 'up', id: model.id, loaded: st.loaded };
    },
    async close() {
      await windows.close();
      await model?.close();
      for (const e of ownEmbedders) await e.close();
    },
  };
}
