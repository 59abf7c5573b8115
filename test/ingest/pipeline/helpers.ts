import BetterSqlite3 from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { api, REPO, type Daemon } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';

export interface UploadFile {
  name: string;
  bytes: Buffer;
}

/** POST /api/v1/upload as multipart/form-data (what `curl -F file=@…` sends). */
export async function uploadFiles(
  d: Daemon,
  token: string,
  files: UploadFile[],
  opts: { projectId?: string; metadata?: string; query?: string; fields?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  if (opts.projectId) form.append('project_id', opts.projectId);
  if (opts.metadata !== undefined) form.append('metadata', opts.metadata);
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  for (const f of files) form.append('file', new Blob([f.bytes]), f.name);
  const res = await fetch(`${d.url}/api/v1/upload${opts.query ?? ''}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

type TableReaderModule = typeof import('../../../src/store/lancedb/table-reader.js');
type ConnectionModule = typeof import('../../../src/store/lancedb/connection.js');

export interface StoredChunk {
  id: string;
  user_id: string;
  chunk_index: number;
  heading: string | null;
  page_start: number | null;
  page_end: number | null;
  text: string;
  ocr: boolean;
}

const STORED_COLUMNS = ['id', 'user_id', 'document_id', 'chunk_index', 'heading', 'page_start', 'page_end', 'text', 'ocr'];

/**
 * The chunk rows of a document as stored in the daemon's LanceDB, read only, through the built module `docsearch
 * migrate` reads a library with. Opening the table through ChunkIndex would write (missing indexes, an optimize of
 * a table that is behind) from the test process, beside the daemon and into a data dir the suite is about to remove.
 */
export async function storedChunks(dataDir: string, documentId: string): Promise<{ count: number; rows: StoredChunk[] }> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as TableReaderModule;
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as ConnectionModule;
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const { chunks } = await readStoredIndex(store);
    const rows: StoredChunk[] = [];
    if (chunks) {
      for await (const batch of chunks.scan(STORED_COLUMNS)) {
        for (const proxy of batch.toArray()) {
          const row = proxy.toJSON() as StoredChunk & { document_id: string };
          if (row.document_id === documentId) rows.push({ ...row, chunk_index: Number(row.chunk_index) });
        }
      }
    }
    return { count: rows.length, rows: rows.sort((a, b) => a.chunk_index - b.chunk_index) };
  } finally {
    await store.close();
  }
}

/**
 * Whether every index of the daemon's chunk table covers every row, i.e. the background optimize after the last
 * write has run; read only, like `storedChunks`. An optimize changes BM25 scores, so a test that compares one
 * page's order with the next waits for it first.
 */
export async function chunkIndexesCurrent(dataDir: string): Promise<boolean> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as TableReaderModule;
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as ConnectionModule;
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const { info } = await readStoredIndex(store);
    if (!info) return false;
    const table = await store.connection.openTable(info.table);
    const indexes = await table.listIndices();
    const stats = await Promise.all(indexes.map((i) => table.indexStats(i.name)));
    return indexes.length > 0 && stats.every((s) => s !== undefined && s.numUnindexedRows === 0);
  } finally {
    await store.close();
  }
}

/** Files in the data dir's content-addressed store (and its temp folder). */
export function storedFiles(dataDir: string): { originals: string[]; temp: string[] } {
  const root = join(dataDir, 'files');
  const originals: string[] = [];
  let temp: string[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync(root);
  } catch {
    return { originals, temp };
  }
  for (const e of entries) {
    if (e === 'tmp') temp = readdirSync(join(root, e));
    else if (/^[0-9a-f]{2}$/.test(e)) originals.push(...readdirSync(join(root, e)));
  }
  return { originals, temp };
}

/**
 * Runs a ready document's job again, as after a crash (embedded daemons: its SQLite database is written directly):
 * marks it and its job failed, then asks for a retry, which must be accepted.
 */
export async function processAgain(d: Daemon, token: string, documentId: string): Promise<void> {
  const db = new BetterSqlite3(join(d.dataDir, 'docsearch.db'));
  try {
    db.prepare("UPDATE documents SET status = 'failed', error = 'test' WHERE id = ?").run(documentId);
    db.prepare("UPDATE jobs SET state = 'failed' WHERE document_id = ?").run(documentId);
  } finally {
    db.close();
  }
  const res = await api(d, `/api/v1/documents/${documentId}/retry`, { method: 'POST', token });
  if (res.status !== 202) throw new Error(`retry: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The one polling loop (helpers/eventually.ts), here too for the pipeline tests and the helpers built on them. */
export { waitFor };

/** Polls GET /api/v1/reindex until no re-index is required or running; resolves with that status. */
export function reindexFinished(d: Daemon, token: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const st = (await api(d, '/api/v1/reindex', { token })).body;
      return !st.required && !st.running ? st : undefined;
    },
    timeoutMs,
    're-index to finish',
  );
}
