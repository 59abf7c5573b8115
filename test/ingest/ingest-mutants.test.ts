/**
 * Promises of ingestion that a mutation audit (changing the product one place at a time) found no test holding:
 *
 * - docs/ingest.md, "Queue and worker": the lease (`--job-lease`) is renewed by a heartbeat while the job runs, so a
 *   document whose indexing outlasts the lease still ends ready, and `progress` moves while it is processed
 *   (docs/api.md `Document.progress`; pipeline.ts: 0.1 parsed, up to 0.95 written, 1 ready);
 * - docs/api.md, upload: "the same bytes already in the project return that document with `duplicate: true`": that
 *   project's document, never another project's holding the same bytes;
 * - docs/ingest.md, "Idempotent writes": a job recovered after a crash first deletes the rows its cut-off run wrote,
 *   so a document killed (SIGKILL) after some of its slices were committed ends with each chunk once;
 * - `POST /documents/{id}/retry` (docs/api.md: queued again) runs the document "exactly as a new upload"
 *   (DocumentStore.retry: attempts from zero), so a document that gave up after its five attempts gets five again;
 * - a document that fails for good ("gave up after 5 attempts", docs/ingest.md "Queue and worker") after some of its
 *   slices were written leaves no rows in the index, so its text is not found (worker.ts `fail` deletes them);
 * - an upload refused because its original could not be stored (docs/api.md: `503 service_unavailable`, a store is
 *   down) leaves no document behind: DocumentService.place stores the original before it writes the row;
 * - docs/api.md, health `backfill`: `waiting` "for this daemon's uploads": the background backfill of an upgraded
 *   library gives way to an upload being indexed (uploads first), in the daemon, not only in BackfillRunner's own test;
 * - docs/ingest.md, "Queue and worker": "`ParseError` → failed (permanent)": a file that makes its parser's thread end
 *   without an answer is one (extract.ts, the worker's `exit`), not an error retried five times;
 * - docs/ingest.md, chunking: "Overlap: whole trailing pieces up to `overlapTokens` (at most half the budget)".
 *
 * The queue's promises share one daemon (killed once and started again on its data dir), with a short lease (10 s, the
 * least --job-lease takes) and embeddings from a slow OpenAI-compatible server (50 ms a text), so a document of 1 MB
 * outlasts the lease by construction, whatever the machine's speed; the backfill and the object store need daemons of
 * their own.
 */
import BetterSqlite3 from 'better-sqlite3';
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { unmet } from '../helpers/requirement.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { FIXTURES, recorded } from '../helpers/release-fixture.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { loadMiniLmTokenizer } from './minilm-tokenizer.js';
import { bigText, prose } from './pipeline/fixtures.js';
import { storedChunks, uploadFiles, waitFor } from './pipeline/helpers.js';

const LEASE_S = 10;

/**
 * An OpenAI-compatible embeddings server speaking its documented wire format (POST /v1/embeddings {input: string[]} →
 * {data: [{index, embedding}]}): it answers after `msPerText` for each text it was sent, and 503 (overloaded, a failure
 * that may go away) for a batch `overloaded` picks. `args` point a daemon's embedder at it.
 */
async function startEmbeddingsServer(opts: { msPerText?: number; overloaded?: (input: string[]) => boolean } = {}): Promise<{ server: Server; args: string[] }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        if (opts.overloaded?.(input)) {
          res.statusCode = 503;
          return res.end(JSON.stringify({ error: { message: 'overloaded, try again', type: 'server_error' } }));
        }
        const vector = (t: string) => Array.from({ length: 8 }, (_, i) => ((t.charCodeAt(i % t.length) * (i + 1)) % 97) / 97 + 0.01);
        res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vector(t) })) }));
      }, (opts.msPerText ?? 0) * input.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { server, args: ['--embedder', 'openai:mock-embed', '--openai-base-url', `http://127.0.0.1:${port}`] };
}

/** The lease of a document's job and its state, read as the daemon writes them (read-only). */
function jobLease(dataDir: string, documentId: string): { state: string; lease_expires_at: number | null } | undefined {
  const db = new BetterSqlite3(join(dataDir, 'docsearch.db'), { readonly: true });
  try {
    return db.prepare('SELECT state, lease_expires_at FROM jobs WHERE document_id = ?').get(documentId) as { state: string; lease_expires_at: number | null } | undefined;
  } finally {
    db.close();
  }
}

describe('ingest promises a mutation audit found untested', () => {
  let d: Daemon;
  let user: TestUser;
  let embeddings: Server | undefined;

  // The embedder answers one request at a time (models/batch-queue.ts), so indexing n chunks takes at least n × this,
  // however fast the machine: the test's clock is the embedder's, not the CPU's.
  const MS_PER_TEXT = 50;
  let ARGS: string[];
  beforeAll(async () => {
    const mock = await startEmbeddingsServer({ msPerText: MS_PER_TEXT });
    embeddings = mock.server;
    ARGS = ['--job-lease', String(LEASE_S), ...mock.args];
    d = await startDaemon({ args: ARGS });
    user = await addUser(d);
  });
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await new Promise((r) => embeddings?.close(r));
  });

  const get = async (id: string) => (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body;

  it('ends a document killed (SIGKILL) mid-way ready with each chunk once, its progress having moved, its lease renewed past --job-lease', async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'cut-off.txt', bytes: bigText(1) }]);
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    // Progress past OCR's 0.2 is written once a slice's rows are committed (pipeline.ts): rows of this run exist.
    const seen: number[] = [];
    await waitFor(async () => {
      const doc = await get(id);
      if (doc.status === 'ready') throw new Error('the document was ready before it could be killed mid-way');
      if (doc.status === 'processing') seen.push(doc.progress);
      return doc.status === 'processing' && doc.progress > 0.3;
    }, 120_000, 'some slices written', { intervalMs: 50 });
    // Progress rose while it was processed: past "parsed" (0.1), never backwards.
    const moving = seen.filter((p) => p > 0.1);
    expect(moving.length, `progress seen while processing: ${seen.join(', ')}`).toBeGreaterThan(1);
    expect(moving).toEqual([...moving].sort((a, b) => a - b));
    expect(Math.max(...moving)).toBeLessThanOrEqual(0.95);
    const before = d.stdout();
    const dataDir = d.dataDir;
    await d.stop('SIGKILL');

    d = await startDaemon({ dataDir, args: ARGS });
    // The recovered job indexes the document again from its start: longer than the lease, so it holds only if renewed.
    // Another document indexed beside it: each heartbeat renews its own job's lease, not every lease this worker holds.
    const beside = await uploadFiles(d, user.apiKey, [{ name: 'beside.txt', bytes: bigText(0.25) }]);
    const besideId = beside.body.documents[0].id as string;
    // The job's lease as the heartbeat (every lease/8) writes it while the document is processed.
    const leases: number[] = [];
    const settledBoth = await waitFor(async () => {
      const job = jobLease(dataDir, id);
      if (job?.state === 'running' && job.lease_expires_at !== null && job.lease_expires_at !== leases.at(-1)) leases.push(job.lease_expires_at);
      const docs = [await get(id), await get(besideId)];
      // A lost lease is retried, so the document would settle only much later: stop at the first one.
      return docs.every((doc) => doc.status === 'ready' || doc.status === 'failed') || d.stdout().includes('"event":"ingest.lease_lost"') ? docs : undefined;
    }, 240_000, 'the documents to settle after the restart', { intervalMs: 200 });
    expect(before + d.stdout()).not.toContain('"event":"ingest.lease_lost"');
    const [settled] = settledBoth;
    expect(settled).toMatchObject({ status: 'ready', error: null, progress: 1 });
    expect(settledBoth[1]).toMatchObject({ status: 'ready', error: null });
    // The run outlasts the lease twice over by construction: each of its chunks took the embedder MS_PER_TEXT.
    expect(settled.chunk_count * MS_PER_TEXT, 'the document is big enough to outlast the lease twice').toBeGreaterThanOrEqual(2 * LEASE_S * 1000);
    const ingested = JSON.parse(await d.logLine((l) => l.includes('"event":"document.ingested"') && l.includes(id))) as { attempts: number; ms: number };
    expect(ingested.attempts).toBe(2);
    // A worker that has not renewed its lease for three quarters of it gives the job up (worker.ts): only a run longer
    // than that proves the renewal.
    expect(ingested.ms, 'indexing the document again took longer than three quarters of the lease').toBeGreaterThan(LEASE_S * 750);
    // The lease was renewed while the document was processed, forward each time, for longer than a whole lease.
    expect(leases.length, `leases seen: ${leases.join(', ')}`).toBeGreaterThan(3);
    expect(leases, `leases seen: ${leases.join(', ')}`).toEqual([...leases].sort((a, b) => a - b));
    expect(leases.at(-1)! - leases[0]!, `leases seen: ${leases.join(', ')}`).toBeGreaterThan(LEASE_S * 1000);
    // The rows of the run killed mid-way were deleted before it ran again: each chunk once.
    const stored = await storedChunks(dataDir, id);
    expect(stored.count).toBe(settled.chunk_count);
    expect(new Set(stored.rows.map((r) => r.chunk_index)).size).toBe(settled.chunk_count);
  }, 420_000);

  it("finds the duplicate among the project's own documents, never another project's holding the same bytes", async () => {
    const bytes = Buffer.from(prose('same bytes in two projects', 12));
    const other = await api(d, '/api/v1/projects', { method: 'POST', token: user.apiKey, body: { name: 'second' } });
    expect(other.status).toBe(201);
    const projectB = other.body.id as string;
    const inA = await uploadFiles(d, user.apiKey, [{ name: 'a.txt', bytes }], { query: '?wait=true&wait_timeout=120' });
    const inB = await uploadFiles(d, user.apiKey, [{ name: 'b.txt', bytes }], { projectId: projectB, query: '?wait=true&wait_timeout=120' });
    expect(inA.body.documents[0]).toMatchObject({ status: 'ready' });
    // Another project holding these bytes makes no duplicate here: a document of its own.
    expect(inB.body.documents[0]).toMatchObject({ status: 'ready', project_id: projectB });
    expect(inB.body.documents[0].duplicate).toBeUndefined();
    expect(inB.body.documents[0].id).not.toBe(inA.body.documents[0].id);

    const againB = await uploadFiles(d, user.apiKey, [{ name: 'b-again.txt', bytes }], { projectId: projectB });
    expect(againB.status).toBe(202);
    expect(againB.body.documents[0]).toMatchObject({ id: inB.body.documents[0].id, project_id: projectB, duplicate: true, filename: 'b.txt' });
    const againA = await uploadFiles(d, user.apiKey, [{ name: 'a-again.txt', bytes }]);
    expect(againA.body.documents[0]).toMatchObject({ id: inA.body.documents[0].id, project_id: inA.body.documents[0].project_id, duplicate: true, filename: 'a.txt' });
  }, 120_000);

  it('gives a document retried after it gave up (five attempts used) five attempts again: it is indexed, not failed at once', async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'gave-up.txt', bytes: Buffer.from(prose('retried after giving up', 10)) }], {
      query: '?wait=true&wait_timeout=120',
    });
    const id = up.body.documents[0].id as string;
    expect(up.body.documents[0]).toMatchObject({ status: 'ready' });
    // The state a document is left in once its fifth attempt failed (markFailed: the document and its job failed, the
    // attempts used up). Reaching it through the daemon takes five crashes or a minute of backoffs (crash-loop.test.ts,
    // retry-policy.test.ts hold those); here it is written directly, as processAgain (pipeline/helpers.ts) does.
    const db = new BetterSqlite3(join(d.dataDir, 'docsearch.db'));
    try {
      db.prepare("UPDATE documents SET status = 'failed', chunk_count = 0, error = 'indexing failed: x (gave up after 5 attempts)' WHERE id = ?").run(id);
      expect(db.prepare("UPDATE jobs SET state = 'failed', attempts = 5, lease_owner = NULL, lease_expires_at = NULL WHERE document_id = ?").run(id).changes).toBe(1);
    } finally {
      db.close();
    }
    const retried = await api(d, `/api/v1/documents/${id}/retry`, { method: 'POST', token: user.apiKey });
    expect(retried.status).toBe(202);
    const settled = await waitFor(async () => {
      const doc = await get(id);
      return doc.status === 'ready' || doc.status === 'failed' ? doc : undefined;
    }, 120_000, 'the retried document to settle');
    expect(settled).toMatchObject({ status: 'ready', error: null });
    expect(settled.chunk_count).toBeGreaterThan(0);
  }, 180_000);
});

describe("an upgraded library's backfill beside an upload", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-ingest-mutants-'));
  let d: Daemon | undefined;
  afterAll(async () => {
    if (d) expect(await d.stop()).toBe(0);
    removeDir(dataDir);
  });

  it('waits while the upload is indexed (uploads first), then finishes', async () => {
    // A library of v0.2.0: its chunks lack what this release stores beside them, so the backfill has rows to do.
    cpSync(join(FIXTURES, 'v0.2.0', 'embedded/data'), dataDir, { recursive: true });
    const alice = recorded('v0.2.0', 'embedded').users.find((u) => u.email === 'alice@example.com')!;
    d = await startDaemon({ dataDir, databaseUrl: '', timeoutMs: 120_000 });
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'upload-first.txt', bytes: bigText(0.5) }]);
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    const backfill = async () => (await api(d!, '/api/v1/health', { token: alice.apiKey })).body.components.backfill as { state: string; derivers: Record<string, { pending: number | null }> };
    const pending = (b: { derivers: Record<string, { pending: number | null }> }) => Object.values(b.derivers).reduce((n, x) => n + (x.pending ?? 0), 0);
    const during: { state: string; pending: number }[] = [];
    await waitFor(async () => {
      const b = await backfill();
      const status = (await api(d!, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.status as string;
      if (status === 'processing') during.push({ state: b.state, pending: pending(b) });
      return status === 'ready' || status === 'failed';
    }, 240_000, 'the upload to settle', { intervalMs: 100 });
    // What health said while it was processed, each state and pending count once, in order.
    const seen = [...new Set(during.map((x) => `${x.state}:${x.pending}`))].join(' ');
    // Meaningful only if rows were still pending while the upload was indexed.
    expect(during.length, seen).toBeGreaterThan(2);
    expect(during[0]!.pending, seen).toBeGreaterThan(0);
    expect(during.some((x) => x.state === 'waiting'), seen).toBe(true);
    // It gave way for the whole upload: a batch begun before the upload was claimed may end, none after it.
    expect(during.at(-1)!.pending, seen).toBeGreaterThan(0);
    expect(during.at(-1)!.state, seen).toBe('waiting');
    await waitFor(async () => (await backfill()).state === 'done', 120_000, 'the backfill to finish once the upload is ready');
  }, 420_000);
});

describe('a document that fails for good after some of its slices were written', () => {
  let mock: Server;
  let d: Daemon | undefined;
  beforeAll(async () => {
    // Every text is embedded but one: the batch holding the document's last paragraph is answered 503, a failure that
    // may go away, so the worker retries it.
    const embeddings = await startEmbeddingsServer({ overloaded: (input) => input.some((t) => t.includes('quarantined zeppelin')) });
    mock = embeddings.server;
    d = await startDaemon({ args: [...embeddings.args, '--retry-base', '1'] });
  });
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await new Promise((r) => mock?.close(r));
  });

  it('is failed with none of its rows left in the index', async () => {
    const user = await addUser(d!);
    const text = `${bigText(0.15).toString()}\n\nThe quarantined zeppelin drifted over the harbour at dusk.\n`;
    const up = await uploadFiles(d!, user.apiKey, [{ name: 'fails-late.txt', bytes: Buffer.from(text) }]);
    const id = up.body.documents[0].id as string;
    // Between attempts (the backoff), the rows the last one wrote are in the index.
    let rowsBetween = 0;
    const failed = await waitFor(async () => {
      const doc = (await api(d!, `/api/v1/documents/${id}`, { token: user.apiKey })).body;
      if (doc.status === 'ready') throw new Error('ready: the mock failed nothing');
      if (doc.status === 'failed') return doc;
      rowsBetween = Math.max(rowsBetween, (await storedChunks(d!.dataDir, id)).count);
      return undefined;
    }, 120_000, 'the document to fail for good', { intervalMs: 200 });
    expect(failed).toMatchObject({ chunk_count: 0 });
    expect(failed.error).toMatch(/\(gave up after 5 attempts\)$/);
    // Slices before the failing one were written (the test means something only so)…
    expect(rowsBetween).toBeGreaterThan(0);
    // …and none is left: neither in the index nor found by a search for their words.
    expect((await storedChunks(d!.dataDir, id)).count).toBe(0);
    const found = await api(d!, '/api/v1/search', { token: user.apiKey, body: { query: 'glaciers change slowly as seasons pass', limit: 5 } });
    expect(found.status).toBe(200);
    expect(found.body.results).toEqual([]);
  }, 240_000);
});

const NO_RGW = rgwUnavailable();

describe.skipIf(NO_RGW !== null)(`an upload whose original cannot be stored${NO_RGW ? ` (skipped: ${NO_RGW})` : ''}`, () => {
  let rgw: Rgw | undefined;
  let d: Daemon | undefined;
  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await rgw?.stop();
  });

  it('is answered 503 and leaves no document: no row is written before its bytes are stored', async () => {
    rgw = await startRgw();
    d = await startDaemon({ args: ['--storage', `s3://${rgw.bucket}/library`], env: rgw.env(), timeoutMs: 60_000 });
    const user = await addUser(d);
    await rgw.stopGateway();
    try {
      await waitFor(async () => (await api(d!, '/api/v1/health')).body.components?.s3?.status === 'down', 30_000, 'the store seen down');
      const up = await uploadFiles(d, user.apiKey, [{ name: 'during-outage.txt', bytes: Buffer.from('Written while the store is away.\n') }]);
      expect(up.status).toBe(503);
      expect((await api(d, '/api/v1/documents?limit=10', { token: user.apiKey })).body.documents).toEqual([]);
    } finally {
      await rgw.startGateway();
    }
    // Nor does one appear (and fail, its original missing) once the store is back.
    await waitFor(async () => (await api(d!, '/api/v1/health')).status === 200, 30_000, 'health back to ok');
    expect((await api(d, '/api/v1/documents?limit=10', { token: user.apiKey })).body.documents).toEqual([]);
  }, 240_000);
});

describe('chunk overlap', () => {
  it('carries at most half the budget into the next chunk, however much overlap is asked', () => {
    const tokenizer = loadMiniLmTokenizer();
    const text = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} explains one more detail about hybrid search engines.`).join(' ');
    // No title or headings: the budget is maxTokens less the model's two special tokens.
    const chunked = (overlapTokens: number) => chunkDocument({ blocks: [{ text, headings: [], kind: 'paragraph' }], warnings: [] }, { tokenizer, maxTokens: 100, overlapTokens, title: '' });
    const half = (100 - 2) / 2;
    const asked = chunked(1000);
    expect(asked.length).toBeGreaterThan(3);
    for (const c of asked.slice(1)) {
      expect(c.placement.overlap).toBeGreaterThan(0);
      expect(tokenizer.count(c.text.slice(0, c.placement.overlap))).toBeLessThanOrEqual(half);
    }
    expect(asked).toEqual(chunked(Math.floor(half)));
  });
});

const EXTRACT = new URL('../../dist/ingest/extract.js', import.meta.url);
const NOT_BUILT = unmet(existsSync(EXTRACT) ? null : 'dist/ is not built (npm run build)');

describe.skipIf(NOT_BUILT !== null)('a parser whose thread ends without an answer', () => {
  it('fails the file with a ParseError (its own document, for good), not an error the worker would retry', async () => {
    const { createExtractor } = (await import(EXTRACT.href)) as typeof import('../../src/ingest/extract.js');
    const extractor = createExtractor({ workerUrl: new URL('../fixtures/ingest/exit-worker.mjs', import.meta.url) });
    try {
      const err = (await extractor.extract(Buffer.from('x'), 'text/plain').catch((e: unknown) => e)) as Error;
      expect(err).toMatchObject({ name: 'ParseError' });
      expect(err.message).toMatch(/^the file could not be parsed \(/);
    } finally {
      await extractor.close();
    }
  });
});
