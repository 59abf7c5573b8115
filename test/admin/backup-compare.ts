/**
 * What the backup tests of both modes share: the load a backup runs under (4 uploaders, 2 searchers), and the
 * comparison of a restored library with its source as of the backup's moment — the snapshot's documents, their
 * chunks, the vectors of those ready then bit for bit, and the `migrate` comparison of search results (the same
 * chunk ids in the same order, scores within 1e-5).
 */
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { runBackup } from '../../src/admin/backup/backup.js';
import { backupKeyAt } from '../../src/admin/backup/backup-key.js';
import { openRepository } from '../../src/admin/backup/repository.js';
import { openEmbeddedLibrary } from '../../src/admin/backup/running-library.js';
import { api, type Daemon, runCli } from '../helpers/daemon.js';
import { chunkRows, type VectorStore } from '../helpers/chunk-rows.js';
import { expectSameResults, type Hit, searchHits } from '../helpers/same-results.js';
import { uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';


export const QUERIES = ['which laws cover semiconductor masks', 'where do marmots hibernate', 'why do tides rise', 'owls hunting at night'];
/**
 * What the searchers send during the load: not the compared queries. A query vector is cached, and concurrent queries
 * are embedded in one batch, whose int8 activations share one quantization scale: a vector cached under load is not
 * the one a lone query gets.
 */
const LOAD_QUERIES = ['semiconductor mask protection', 'alpine animals in winter'];
const TOPICS = ['Marmots hibernate in burrows through the alpine winter.', 'The moon pulls the oceans and the tides rise twice a day.', 'Owls hunt at night over the meadows.', 'Glaciers carve valleys as they creep downhill.'];

const search = (d: Daemon, token: string) => searchHits(d, token, QUERIES, { limit: 10, mode: 'vector', rerank: false });

export interface Doc {
  id: string;
  sha256: string;
  status: string;
  chunk_count: number;
}

export async function documents(d: Daemon, token: string): Promise<Map<string, Doc>> {
  const out = new Map<string, Doc>();
  let cursor: string | null = null;
  do {
    const res = await api(d, `/api/v1/documents?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const doc of res.body.documents as Doc[]) out.set(doc.id, doc);
    cursor = res.body.next_cursor ?? null;
  } while (cursor);
  return out;
}

/**
 * The bytes the library holds for this user: their documents' and what waits in their trash (a deleted document
 * keeps its original until it is purged, and backups carry it).
 */
export async function heldSha256s(d: Daemon, token: string): Promise<string[]> {
  const shas = [...(await documents(d, token)).values()].map((x) => x.sha256);
  let cursor: string | null = null;
  do {
    const res = await api(d, `/api/v1/trash?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    shas.push(...(res.body.documents as Doc[]).map((x) => x.sha256));
    cursor = res.body.next_cursor ?? null;
  } while (cursor);
  return shas;
}

export const settled = (d: Daemon, token: string) =>
  waitFor(async () => [...(await documents(d, token)).values()].every((x) => x.status === 'ready' || x.status === 'failed'), 240_000, 'every document settled');

/**
 * Runs `during` while 4 clients upload notes and 2 search through `d`; returns what it returned, once the load has
 * stopped, and checks that uploads went on while it ran. `readyBefore` gets the documents ready just before `during`
 * began: a backup taken then must hold every one (an oracle of its own, not the backup's snapshot).
 */
export async function underLoad<T>(d: Daemon, token: string, during: () => Promise<T>, readyBefore?: Set<string>): Promise<T> {
  let stop = false;
  let uploaded = 0;
  let searched = 0;
  let firstLoadDoc: string | undefined;
  const uploader = async (c: number) => {
    for (let j = 0; !stop; j++) {
      const text = `${TOPICS[c]} Client ${c} note ${j}: ${'detail '.repeat(20 + j)}\n\n${TOPICS[(c + 1) % 4]} (${j})\n`;
      const res = await uploadFiles(d, token, [{ name: `c${c}-${j}.txt`, bytes: Buffer.from(text) }]);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      firstLoadDoc ??= res.body.documents[0].id as string;
      uploaded++;
    }
  };
  const searcher = async (q: number) => {
    while (!stop) {
      const res = await api(d, '/api/v1/search', { token, body: { query: LOAD_QUERIES[q]!, limit: 5 } });
      expect(res.status).toBe(200);
      searched++;
    }
  };
  const clients = [0, 1, 2, 3].map(uploader).concat([0, 1].map(searcher));
  try {
    await waitFor(async () => uploaded >= 8, 120_000, 'uploads under way');
    // The backup's snapshot must hold a document of the load that is ready (the comparison needs one), however
    // slowly a busy machine ingests: wait for the first one.
    await waitFor(async () => (await api(d, `/api/v1/documents/${firstLoadDoc}`, { token })).body.status === 'ready', 120_000, 'a load upload ready');
    if (readyBefore) for (const [id, doc] of await documents(d, token)) if (doc.status === 'ready') readyBefore.add(id);
    const atStart = uploaded;
    const out = await during();
    expect(uploaded - atStart, 'uploads went on during the backup').toBeGreaterThan(0);
    expect(searched).toBeGreaterThan(0);
    return out;
  } finally {
    stop = true;
    await Promise.all(clients);
  }
}

/**
 * The documents of a backup's database snapshot (a SQLite file), and each one's status at the backup's moment;
 * `outOfTrash`: only those not in the trash (what the document list shows).
 */
export function snapshotStatuses(file: string, opts: { outOfTrash?: boolean } = {}): Map<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const sql = `SELECT id, status FROM documents${opts.outOfTrash ? ' WHERE trashed_at IS NULL' : ''}`;
    return new Map((db.prepare(sql).all() as { id: string; status: string }[]).map((r) => [r.id, r.status]));
  } finally {
    db.close();
  }
}

export interface Library {
  daemon: Daemon;
  index: () => Promise<VectorStore>;
}

/**
 * Checks that `restored` (its daemon having finished what was queued) is `source` as of the backup whose database
 * snapshot is `snapshotFile`, then brings both back to what was searchable at that moment, the documents ready then
 * (the source by deleting what it took in later or was still working on, the copy what it finished after the
 * restore), and compares every query's results.
 */
export async function expectRestoredAsOfBackup(source: Library, restored: Library, token: string, snapshotFile: string, least: number, readyBefore: ReadonlySet<string>): Promise<void> {
  const [src, got] = [await documents(source.daemon, token), await documents(restored.daemon, token)];
  const snapshot = snapshotStatuses(snapshotFile);
  expect(new Set(got.keys()), 'the restored library holds the documents of the snapshot').toEqual(new Set(snapshot.keys()));
  // Every document ready before the backup began is in it, ready: what was committed is not lost.
  expect(readyBefore.size).toBeGreaterThan(least);
  for (const id of readyBefore) expect(snapshot.get(id), `${id}, ready before the backup`).toBe('ready');
  expect(got.size, 'uploads after the backup moment are not in it').toBeLessThan(src.size);
  const ready = new Set([...snapshot].filter(([, status]) => status === 'ready').map(([id]) => id));
  expect(ready.size).toBeGreaterThan(least);
  for (const doc of got.values()) {
    expect(doc.status).toBe('ready');
    expect(src.get(doc.id)).toMatchObject({ sha256: doc.sha256, chunk_count: doc.chunk_count, status: 'ready' });
  }
  // Every chunk is the source's; of a document ready at the backup's moment, with its vector bit for bit. Documents
  // still queued or processing then were finished by the restored daemon, with vectors of their own: the int8 model
  // quantizes a batch's activations with one scale, so a passage's vector depends on what shared its batch.
  const [a, b] = [await chunkRows(source.index), await chunkRows(restored.index)];
  let compared = 0;
  for (const [id, row] of b) {
    if (!got.has(row.document_id)) continue;
    expect(row.fields, `chunk ${id}`).toEqual(a.get(id)?.fields);
    if (ready.has(row.document_id)) {
      expect(row.vector, `vector of ${id}`).toEqual(a.get(id)!.vector);
      compared++;
    }
  }
  expect(compared).toBeGreaterThan(0);
  expect([...b.values()].filter((r) => got.has(r.document_id)).length).toBe([...got.values()].reduce((n, d) => n + d.chunk_count, 0));

  for (const [x, docs] of [
    [source.daemon, src],
    [restored.daemon, got],
  ] as const) {
    for (const id of docs.keys()) if (!ready.has(id)) expect((await api(x, `/api/v1/documents/${id}`, { method: 'DELETE', token })).status).toBe(204);
  }
  const want = await search(source.daemon, token);
  expect(want.every((hits) => hits.length > 0)).toBe(true);
  expectSameResults(await search(restored.daemon, token), want);
  // The originals come back byte for byte.
  for (const id of [...ready].slice(0, 6)) {
    const [x, y] = await Promise.all([source.daemon, restored.daemon].map((d) => fetch(`${d.url}/api/v1/documents/${id}/file`, { headers: { authorization: `Bearer ${token}` } }).then((f) => f.arrayBuffer())));
    expect(Buffer.from(y!).equals(Buffer.from(x!))).toBe(true);
  }
}

interface ManifestFiles {
  files: { path: string; key: string; size: number }[];
}

/**
 * An incremental run (`s`, its --json summary) against the backup before it: what the last backup has (the same path,
 * immutable) is not copied again; the rest is, and is counted; the originals copied are exactly those of the
 * documents (`shas`, the library's now) the first backup did not have, among them `uploaded`'s.
 */
export function expectIncremental(s: any, before: ManifestFiles, after: ManifestFiles, shas: string[], uploaded: string): { fresh: ManifestFiles['files']; newOriginals: string[] } {
  const had = new Map(before.files.map((f) => [f.path, f]));
  const fresh = after.files.filter((f) => !had.has(f.path) || f.key !== had.get(f.path)!.key);
  expect(s.files.reused).toBe(after.files.length - fresh.length);
  expect(s.files.reused).toBeGreaterThan(0);
  expect(s.files.copied).toBe(fresh.length);
  expect(s.files.copied_bytes).toBe(fresh.reduce((n, f) => n + f.size, 0));
  expect(s.files.copied_bytes).toBeLessThan(s.files.bytes);
  const newOriginals = [...new Set(shas)].map((sha) => `files/${sha.slice(0, 2)}/${sha}`).filter((p) => !had.has(p)).sort();
  expect(newOriginals).toContain(`files/${uploaded.slice(0, 2)}/${uploaded}`);
  expect(fresh.filter((f) => f.path.startsWith('files/')).map((f) => f.path).sort()).toEqual(newOriginals);
  return { fresh, newOriginals };
}

/** `n` backups of an embedded library (its daemon may run) into the directory repository `repo`: their ids, oldest first. */
export async function takeBackups(dataDir: string, repo: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await runCli(['backup', '--data-dir', dataDir, '--to', repo, '--json'], { timeoutMs: 240_000 });
    expect(res.code, res.stderr).toBe(0);
    ids.push(JSON.parse(res.stdout).id as string);
  }
  return ids;
}

/**
 * A backup of an embedded library (its daemon may run) run in this process, silently, with `afterSnapshot` run in its
 * window (after the database snapshot, before the files are copied): the error it failed with, or null.
 */
export async function backupInProcess(dataDir: string, repoDir: string, keyFile: string, afterSnapshot: () => Promise<void>): Promise<{ message: string; hint?: string } | null> {
  const { key } = await backupKeyAt(keyFile);
  const library = await openEmbeddedLibrary(dataDir);
  const repo = await openRepository(repoDir, process.env);
  try {
    return await runBackup({
      library,
      repo,
      repository: repoDir,
      key,
      progress: { line: () => undefined, step: () => ({ add: () => undefined, end: () => undefined }) },
      afterSnapshot,
    }).then(
      () => null,
      (err: unknown) => err as { message: string; hint?: string },
    );
  } finally {
    repo.close();
    await library.close();
  }
}
