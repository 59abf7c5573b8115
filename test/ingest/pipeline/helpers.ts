import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, type Daemon } from '../../helpers/daemon.js';

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

type ChunkIndexModule = typeof import('../../../src/store/lancedb/chunks.js');
type ConnectionModule = typeof import('../../../src/store/lancedb/connection.js');

/**
 * The chunk rows of a document as stored in the daemon's LanceDB (opened read-side from the test process,
 * through the built store module: the same code the daemon runs).
 */
export async function storedChunks(dataDir: string, documentId: string): Promise<{ count: number; rows: { id: string; user_id: string; chunk_index: number; heading: string | null; page_start: number | null; page_end: number | null; text: string }[] }> {
  const { ChunkIndex } = (await import(join(REPO, 'dist/store/lancedb/chunks.js'))) as ChunkIndexModule;
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as ConnectionModule;
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const index = await ChunkIndex.open(store, { embedderId: 'builtin:all-MiniLM-L6-v2' });
    const count = await index.count(documentId);
    return { count, rows: await index.documentChunks(documentId) };
  } finally {
    store.close();
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

export async function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
