/**
 * The daemon's Prometheus metrics (GET /metrics, docs/operations.md), in a registry of its own: two daemons in
 * one process (tests) or a library embedding the app never share counters through prom-client's global one.
 *
 * Hot paths only observe a histogram or add to a counter. What the stores know (queue, index, upkeep lease) is
 * read when Prometheus scrapes, by the gauges' `collect`, each read shared by the gauges that show it and kept
 * for a second; a read that fails leaves the gauges at their last value and says so in the log, so a scrape
 * still answers while the database is away.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SearchStage, SearchTimings } from '../../search/timings.js';

/** Seconds: 1 ms … 10 s, for requests and searches. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: 1 ms … 2 min, for embedding calls (a passage slice waits in the model's queue) and OCR pages. */
const WORK_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export interface QueueSnapshot {
  /** Jobs in each open state, and when the oldest of them was queued (ms since the epoch; null when none). */
  states: { state: 'pending' | 'running'; count: number; oldestCreatedAt: number | null }[];
}

export interface IndexSnapshot {
  /** The chunks table's LanceDB version; null before the first write. */
  version: number | null;
  /** Rows written since each index last took them in (searched by a flat scan meanwhile). */
  unindexed: { fts: number; vector: number } | null;
  /** Chunk rows this replica holds in memory (memory-copy.ts); 0 when none. */
  rowsInMemory: number;
}

export interface SourcesSnapshot {
  states: Record<'active' | 'paused' | 'syncing' | 'error', number>;
  itemErrors: number;
}

/** Where the scrape-time gauges read from; each may be absent (then its gauges are not shown). */
export interface MetricSources {
  queue?: () => Promise<QueueSnapshot>;
  index?: () => Promise<IndexSnapshot>;
  /** True while this process holds the index upkeep lease (embedded mode: always). */
  upkeepLeader?: () => boolean;
  /** Sources by state, and their items whose last fetch failed (the whole library's). */
  sources?: () => Promise<SourcesSnapshot>;
  /** The chunk backfill's rows still pending per deriver (null: not counted yet). */
  backfill?: () => Record<string, { pending: number | null }>;
  now?: () => number;
  log?: { warn(obj: object, msg: string): void };
}

/** The same read for every gauge that shows part of it, within `ttlMs`. */
function shared<T>(read: () => Promise<T>, ttlMs = 1000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at > ttlMs) last = { at: now, value: read() };
    return last.value;
  };
}

export type IngestOutcome = 'ready' | 'failed';
export type OcrOutcome = 'read' | 'blank' | 'failed';

export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly http: Histogram<'method' | 'route' | 'status'>;
  private readonly searches: Histogram<string>;
  private readonly stages: Histogram<'stage'>;
  private readonly embedSeconds: Histogram<'kind'>;
  private readonly embedTexts: Counter<'kind'>;
  private readonly ocrSeconds: Histogram<string>;
  private readonly ocrPages: Counter<'outcome'>;
  private readonly documents: Counter<'outcome'>;
  private readonly chunks: Counter<string>;
  private readonly retries: Counter<string>;
  private readonly sourcePasses: Counter<'kind' | 'outcome'>;
  private readonly sourcePassSeconds: Histogram<'kind'>;
  private readonly sourceItems: Counter<'kind' | 'action'>;
  private readonly backfillRows: Counter<'deriver'>;
  private readonly modelTexts: Counter<'lane'>;
  /** Label children made once: the search path observes without building label objects. */
  private readonly stageChildren = new Map<SearchStage, { observe(v: number): void }>();

  constructor(sources: MetricSources = {}, info: Record<string, string> = {}) {
    const registers = [this.registry];
    const now = sources.now ?? Date.now;
    const warned = new Set<string>();
    const failed = (what: string) => (err: unknown) => {
      // Once per source until it works again: a scrape every 15 s would otherwise fill the log while PostgreSQL is away.
      if (!warned.has(what)) sources.log?.warn({ err, metrics: what }, `metrics: could not read the ${what}; its gauges keep their last values`);
      warned.add(what);
      return null;
    };
    const ok = (what: string) => warned.delete(what);

    collectDefaultMetrics({ register: this.registry });
    new Gauge({ name: 'docsearch_info', help: 'Always 1; the labels say which docsearch this is', labelNames: Object.keys(info), registers }).set(info, 1);

    this.http = new Histogram({
      name: 'docsearch_http_request_duration_seconds',
      help: 'HTTP requests by method, route (the route name or pattern, never the raw path) and status code, from arrival to the response',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.searches = new Histogram({ name: 'docsearch_search_duration_seconds', help: 'Searches answered (API, web page, MCP), from start to the page of results', buckets: LATENCY_BUCKETS, registers });
    this.stages = new Histogram({
      name: 'docsearch_search_stage_duration_seconds',
      help: 'Time searches spent per stage: embed (query embedding, cache misses only), keyword, vector, visibility, fusion, rerank, hydrate, filters, facets (within hydrate)',
      labelNames: ['stage'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.embedSeconds = new Histogram({
      name: 'docsearch_embed_duration_seconds',
      help: 'Embedding calls by kind: passage (a slice of a document at ingest, queueing for the model included) or query',
      labelNames: ['kind'],
      buckets: WORK_BUCKETS,
      registers,
    });
    this.embedTexts = new Counter({ name: 'docsearch_embedded_texts_total', help: 'Texts embedded, by kind (passage, query)', labelNames: ['kind'], registers });
    this.ocrSeconds = new Histogram({ name: 'docsearch_ocr_page_duration_seconds', help: 'OCR of one scanned page (render and recognise), pages read or blank', buckets: WORK_BUCKETS, registers });
    this.ocrPages = new Counter({ name: 'docsearch_ocr_pages_total', help: 'Scanned pages through OCR, by outcome: read (text found), blank, failed', labelNames: ['outcome'], registers });
    this.documents = new Counter({
      name: 'docsearch_documents_ingested_total',
      help: 'Documents this replica finished ingesting, by outcome: ready (searchable) or failed (for good)',
      labelNames: ['outcome'],
      registers,
    });
    this.chunks = new Counter({ name: 'docsearch_chunks_ingested_total', help: 'Chunks written by this replica for documents that became ready', registers });
    this.retries = new Counter({ name: 'docsearch_ingest_retries_total', help: 'Ingest attempts that failed transiently and were queued again with a backoff', registers });
    this.sourcePasses = new Counter({
      name: 'docsearch_source_passes_total',
      help: 'Source passes this replica ran, by kind and outcome: ok, paused (the deletion guard held deletions back, or a quota stopped it) or error (the source could not be read)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.sourcePassSeconds = new Histogram({ name: 'docsearch_source_pass_duration_seconds', help: 'Source passes this replica ran, from listing to the last item, by kind', labelNames: ['kind'], buckets: WORK_BUCKETS, registers });
    this.sourceItems = new Counter({
      name: 'docsearch_source_items_total',
      help: 'Items source passes went through on this replica, by kind and action: added, changed, deleted, unchanged, failed (its fetch or type; retried next pass), deferred (its document was still being indexed)',
      labelNames: ['kind', 'action'],
      registers,
    });
    this.backfillRows = new Counter({
      name: 'docsearch_backfill_rows_total',
      help: 'Stored chunk rows this replica brought up to date in the background, by deriver (units, …): see docs/operations.md#upgrading',
      labelNames: ['deriver'],
      registers,
    });
    this.modelTexts = new Counter({
      name: 'docsearch_model_texts_total',
      help: "Texts the built-in model ran through a forward pass, by lane: query (searches' query embeddings, on their own session) and background (passages: ingestion, the backfill)",
      labelNames: ['lane'],
      registers,
    });
    for (const lane of ['query', 'background']) this.modelTexts.inc({ lane }, 0);
    for (const outcome of ['ready', 'failed'] as const) this.documents.inc({ outcome }, 0);
    for (const kind of ['passage', 'query']) this.embedTexts.inc({ kind }, 0);
    for (const outcome of ['read', 'blank', 'failed'] as const) this.ocrPages.inc({ outcome }, 0);

    if (sources.queue) {
      const queue = shared(() => sources.queue!().then((q) => (ok('queue'), q), failed('queue')));
      const fill = async (set: (s: QueueSnapshot['states'][number]) => void) => {
        const q = await queue();
        if (!q) return;
        for (const state of ['pending', 'running'] as const) set(q.states.find((s) => s.state === state) ?? { state, count: 0, oldestCreatedAt: null });
      };
      new Gauge({
        name: 'docsearch_jobs',
        help: 'Ingest jobs in the queue by state (pending, running); shared mode: the whole shared queue, the same on every replica',
        labelNames: ['state'],
        registers,
        async collect() {
          await fill((s) => this.set({ state: s.state }, s.count));
        },
      });
      new Gauge({
        name: 'docsearch_jobs_oldest_age_seconds',
        help: 'Age of the oldest job in each state (pending, running), counted from when it was queued; 0 when there is none',
        labelNames: ['state'],
        registers,
        async collect() {
          await fill((s) => this.set({ state: s.state }, s.oldestCreatedAt === null ? 0 : Math.max(0, (now() - s.oldestCreatedAt) / 1000)));
        },
      });
    }
    if (sources.index) {
      const index = shared(() => sources.index!().then((i) => (ok('index'), i), failed('index')), 5000);
      new Gauge({
        name: 'docsearch_index_unindexed_rows',
        help: 'Chunk rows not yet in each index (fts, vector), as this replica sees the table: they are searched by a flat scan until the next optimize',
        labelNames: ['index'],
        registers,
        async collect() {
          const i = await index();
          if (!i) return;
          this.set({ index: 'fts' }, i.unindexed?.fts ?? 0);
          this.set({ index: 'vector' }, i.unindexed?.vector ?? 0);
        },
      });
      new Gauge({
        name: 'docsearch_index_memory_rows',
        help: 'Chunk rows this replica holds in memory to answer vector searches and takes (a table without a vector index); 0 when none',
        registers,
        async collect() {
          const i = await index();
          if (i) this.set(i.rowsInMemory);
        },
      });
      new Gauge({
        name: 'docsearch_index_version',
        help: "The chunks table's version as this replica sees it (LanceDB counts one per commit); 0 before the first write",
        registers,
        async collect() {
          const i = await index();
          if (i) this.set(i.version ?? 0);
        },
      });
    }
    if (sources.sources) {
      const read = shared(() => sources.sources!().then((x) => (ok('sources'), x), failed('sources')), 5000);
      new Gauge({
        name: 'docsearch_sources',
        help: 'Sources by state (the whole library): active (scheduled), paused (by the deletion guard or an owner), syncing (a pass running now), error (the last pass failed; retried with backoff). A source counts under every state that holds',
        labelNames: ['state'],
        registers,
        async collect() {
          const x = await read();
          if (x) for (const [state, n] of Object.entries(x.states)) this.set({ state }, n);
        },
      });
      new Gauge({
        name: 'docsearch_source_item_errors',
        help: "Items of sources whose last fetch failed or that were passed over for their path (shown on each source; retried at its next pass)",
        registers,
        async collect() {
          const x = await read();
          if (x) this.set(x.itemErrors);
        },
      });
    }
    if (sources.backfill) {
      const backfill = sources.backfill;
      new Gauge({
        name: 'docsearch_backfill_pending_rows',
        help: 'Stored chunk rows still waiting for the background backfill, by deriver, as last counted (shared mode: by the replica running it, recounted by the others every minute)',
        labelNames: ['deriver'],
        registers,
        collect() {
          for (const [deriver, s] of Object.entries(backfill())) if (s.pending !== null) this.set({ deriver }, s.pending);
        },
      });
    }
    if (sources.upkeepLeader) {
      const leader = sources.upkeepLeader;
      new Gauge({
        name: 'docsearch_upkeep_leader',
        help: 'Whether this replica holds the index upkeep lease (optimizes and prunes the tables): 1 or 0; embedded mode: 1',
        registers,
        collect() {
          this.set(leader() ? 1 : 0);
        },
      });
    }
  }

  /** One finished HTTP request. */
  request(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({ method, route, status }, seconds);
  }

  /** What the search service reports (src/search/timings.ts). */
  readonly search: SearchTimings = {
    stage: (stage, seconds) => {
      let child = this.stageChildren.get(stage);
      if (!child) this.stageChildren.set(stage, (child = this.stages.labels(stage)));
      child.observe(seconds);
      if (stage === 'embed') this.embedded('query', 1, seconds);
    },
    search: (seconds) => this.searches.observe(seconds),
  };

  embedded(kind: 'passage' | 'query', texts: number, seconds: number): void {
    this.embedSeconds.observe({ kind }, seconds);
    this.embedTexts.inc({ kind }, texts);
  }

  ocrPage(outcome: OcrOutcome, seconds?: number): void {
    this.ocrPages.inc({ outcome });
    if (seconds !== undefined) this.ocrSeconds.observe(seconds);
  }

  ingested(outcome: IngestOutcome, chunks = 0): void {
    this.documents.inc({ outcome });
    if (chunks > 0) this.chunks.inc(chunks);
  }

  /** A forward pass of the built-in model. */
  modelRan(lane: 'query' | 'background', texts: number): void {
    this.modelTexts.inc({ lane }, texts);
  }

  /** Rows a backfill deriver wrote (0: the deriver exists, so its series shows from the start). */
  backfilled(deriver: string, rows: number): void {
    this.backfillRows.inc({ deriver }, rows);
  }

  retried(): void {
    this.retries.inc();
  }

  /** What the source scheduler reports (sources/scheduler.ts). */
  readonly sourcesRun = {
    pass: (kind: string, outcome: 'ok' | 'paused' | 'error', seconds: number) => {
      this.sourcePasses.inc({ kind, outcome });
      this.sourcePassSeconds.observe({ kind }, seconds);
    },
    item: (kind: string, action: string) => this.sourceItems.inc({ kind, action }),
  };

  /** The text exposition format, and its content type. */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
