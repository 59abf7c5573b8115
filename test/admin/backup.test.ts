/**
 * `docsearch backup` and `docsearch restore` through the built binary, on a library a real daemon serves while 4
 * clients upload and 2 search: the restored library holds the source's documents, chunks and search results as of
 * the backup's moment; a second run copies only what changed; a backup killed midway is never restorable; a
 * damaged, newer or misplaced backup is refused, saying why.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { storedChunks, uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';

const PDFS = ['latex-1col.pdf', 'pandoc.pdf', 'libreoffice.pdf'].map((n) => ({ name: n, bytes: readFileSync(join(REPO, 'test/fixtures/extract', n)) }));
const QUERIES = ['which laws cover semiconductor masks', 'where do marmots hibernate', 'why do tides rise', 'owls hunting at night'];
/**
 * What the searchers send during the load: not the compared queries. A query vector is cached, and concurrent queries
 * are embedded in one batch, whose int8 activations share one quantization scale: a vector cached under load is not
 * the one a lone query gets.
 */
const LOAD_QUERIES = ['semiconductor mask protection', 'alpine animals in winter'];
const TOPICS = ['Marmots hibernate in burrows through the alpine winter.', 'The moon pulls the oceans and the tides rise twice a day.', 'Owls hunt at night over the meadows.', 'Glaciers carve valleys as they creep downhill.'];

interface Hit {
  id: string;
  document: string;
  text: string;
  score: number;
}

async function search(d: Daemon, token: string): Promise<Hit[][]> {
  const out: Hit[][] = [];
  for (const query of QUERIES) {
    const res = await api(d, '/api/v1/search', { token, body: { query, limit: 10, mode: 'vector', rerank: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push((res.body.results as { chunk_id: string; document: { id: string }; text: string; score: number }[]).map((r) => ({ id: r.chunk_id, document: r.document.id, text: r.text, score: r.score })));
  }
  return out;
}

/** The `migrate` test's comparison: the same chunk ids in the same order, scores within 1e-5. */
function expectSameResults(got: Hit[][], want: Hit[][]): void {
  expect(got.map((hits) => hits.map(({ id, document, text }) => ({ id, document, text })))).toEqual(want.map((hits) => hits.map(({ id, document, text }) => ({ id, document, text }))));
  got.forEach((hits, q) => hits.forEach((h, i) => expect(h.score).toBeCloseTo(want[q]![i]!.score, 5)));
}

interface Doc {
  id: string;
  sha256: string;
  status: string;
  chunk_count: number;
}

async function documents(d: Daemon, token: string): Promise<Map<string, Doc>> {
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

/** The documents of a backup's database snapshot, and each one's status at the backup's moment. */
function snapshotStatuses(repo: string, id: string): Map<string, string> {
  const db = new Database(join(repo, 'backups', id, 'database.sqlite'), { readonly: true });
  try {
    return new Map((db.prepare('SELECT id, status FROM documents').all() as { id: string; status: string }[]).map((r) => [r.id, r.status]));
  } finally {
    db.close();
  }
}

/** Every chunk's vector in a library's index, by chunk id, read only (as `storedChunks` reads). */
async function chunkVectors(dataDir: string): Promise<Map<string, number[]>> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as typeof import('../../src/store/lancedb/table-reader.js');
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as typeof import('../../src/store/lancedb/connection.js');
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const out = new Map<string, number[]>();
    const { chunks } = await readStoredIndex(store);
    for await (const batch of chunks!.scan(['id', 'vector'])) {
      const [ids, vectors] = [batch.getChild('id')!, batch.getChild('vector')!];
      for (let i = 0; i < batch.numRows; i++) out.set(ids.get(i) as string, [...(vectors.get(i) as Iterable<number>)]);
    }
    return out;
  } finally {
    await store.close();
  }
}

const settled = (d: Daemon, token: string) =>
  waitFor(async () => [...(await documents(d, token)).values()].every((x) => x.status === 'ready' || x.status === 'failed'), 240_000, 'every document settled');

describe('docsearch backup and restore of a running embedded library', () => {
  let d: Daemon;
  let user: TestUser;
  const dirs: string[] = [];
  const tmp = (what: string) => {
    const dir = mkdtempSync(join(tmpdir(), `docsearch-backup-${what}-`));
    dirs.push(dir);
    return dir;
  };
  const cli = (args: string[], timeoutMs = 240_000) => runCli(args, { timeoutMs });
  let repo: string;
  let first: any;

  beforeAll(async () => {
    d = await startDaemon();
    dirs.push(d.dataDir);
    user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, PDFS, { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    repo = tmp('repo');
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    for (const dir of dirs) removeDir(dir);
  });

  it('backs up while 4 clients upload and 2 search; the restore equals the source at the backup moment', async () => {
    let stop = false;
    let uploaded = 0;
    let searched = 0;
    const uploader = async (c: number) => {
      for (let j = 0; !stop; j++) {
        const text = `${TOPICS[c]} Client ${c} note ${j}: ${'detail '.repeat(20 + j)}\n\n${TOPICS[(c + 1) % 4]} (${j})\n`;
        const res = await uploadFiles(d, user.apiKey, [{ name: `c${c}-${j}.txt`, bytes: Buffer.from(text) }]);
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        uploaded++;
      }
    };
    const searcher = async (q: number) => {
      while (!stop) {
        const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: LOAD_QUERIES[q]!, limit: 5 } });
        expect(res.status).toBe(200);
        searched++;
      }
    };
    const clients = [0, 1, 2, 3].map(uploader).concat([0, 1].map(searcher));
    await waitFor(async () => uploaded >= 8, 60_000, 'uploads under way');
    const atStart = uploaded;
    const res = await cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--json']);
    const during = uploaded - atStart;
    stop = true;
    await Promise.all(clients);
    expect(res.code, res.stderr).toBe(0);
    expect(during, 'uploads went on during the backup').toBeGreaterThan(0);
    expect(searched).toBeGreaterThan(0);
    first = JSON.parse(res.stdout);
    expect(first).toMatchObject({ based_on: null, files: { reused: 0 }, originals: { missing: [] } });
    expect(first.files.copied).toBe(first.files.total);
    expect(res.stderr).toMatch(/database: snapshot taken at/);

    await settled(d, user.apiKey);
    const target = join(tmp('restore'), 'data');
    const restored = await cli(['restore', '--from', repo, '--to', target, '--json']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ id: first.id, verified: true });

    const r = await startDaemon({ dataDir: target });
    try {
      // Documents still queued or processing at the backup's moment are finished by the restored daemon.
      await settled(r, user.apiKey);
      const [src, got] = [await documents(d, user.apiKey), await documents(r, user.apiKey)];
      // The restored library holds the snapshot's documents: none uploaded after the backup's moment.
      const snapshot = snapshotStatuses(repo, first.id);
      expect(new Set(got.keys())).toEqual(new Set(snapshot.keys()));
      expect(got.size, 'uploads after the backup moment are not in it').toBeLessThan(src.size);
      const ready = new Set([...snapshot].filter(([, status]) => status === 'ready').map(([id]) => id));
      expect(ready.size).toBeGreaterThan(PDFS.length);
      for (const doc of got.values()) {
        expect(doc.status).toBe('ready');
        expect(src.get(doc.id)).toMatchObject({ sha256: doc.sha256, chunk_count: doc.chunk_count, status: 'ready' });
      }
      for (const id of got.keys()) {
        const [a, b] = [await storedChunks(d.dataDir, id), await storedChunks(target, id)];
        expect(b.rows, `chunks of ${id}`).toEqual(a.rows);
      }
      // The index is the source's at the backup's moment: every chunk of a document ready then has the source's
      // vector, bit for bit. Documents still queued or processing then were finished by the restored daemon, with
      // vectors of their own: the int8 model quantizes a batch's activations with one scale, so a passage's vector
      // depends on what shared its batch.
      const [srcVectors, gotVectors] = [await chunkVectors(d.dataDir), await chunkVectors(target)];
      let compared = 0;
      for (const id of ready) {
        for (let i = 0; i < got.get(id)!.chunk_count; i++) {
          expect(gotVectors.get(`${id}:${i}`), `vector of ${id}:${i}`).toEqual(srcVectors.get(`${id}:${i}`));
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(0);
      // Both brought back to what was searchable at the backup's moment, the documents ready then (the source by
      // deleting what it took in later or was still working on, the copy what it finished after the restore):
      // every query ranks them alike.
      for (const [x, docs] of [[d, src], [r, got]] as const) {
        for (const id of docs.keys()) if (!ready.has(id)) expect((await api(x, `/api/v1/documents/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
      }
      const want = await search(d, user.apiKey);
      expect(want.every((hits) => hits.length > 0)).toBe(true);
      expectSameResults(await search(r, user.apiKey), want);
      // The originals come back byte for byte.
      for (const doc of [...got.values()].slice(0, 6)) {
        const [a, b] = await Promise.all([d, r].map((x) => fetch(`${x.url}/api/v1/documents/${doc.id}/file`, { headers: { authorization: `Bearer ${user.apiKey}` } }).then((f) => f.arrayBuffer())));
        expect(Buffer.from(b!).equals(Buffer.from(a!))).toBe(true);
      }
    } finally {
      await r.stop();
    }
  }, 900_000);

  it('an incremental run copies only new files', async () => {
    const manifest = (id: string) => JSON.parse(readFileSync(join(repo, 'backups', id, 'manifest.json'), 'utf8')) as { files: { path: string; key: string; size: number }[] };
    const up = await uploadFiles(d, user.apiKey, [{ name: 'new.txt', bytes: Buffer.from('Herons wait motionless in the shallows for fish.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    const res = await cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s.based_on).toBe(first.id);
    const [before, after] = [manifest(first.id), manifest(s.id)];
    const had = new Map(before.files.map((f) => [f.path, f]));
    const fresh = after.files.filter((f) => !had.has(f.path) || f.key !== had.get(f.path)!.key);
    // What the last backup has (the same path, immutable) is not copied again; the rest is, and is counted.
    expect(s.files.reused).toBe(after.files.length - fresh.length);
    expect(s.files.reused).toBeGreaterThan(0);
    expect(s.files.copied).toBe(fresh.length);
    expect(s.files.copied_bytes).toBe(fresh.reduce((n, f) => n + f.size, 0));
    expect(s.files.copied_bytes).toBeLessThan(s.files.bytes);
    // The originals copied are exactly those of the documents the first backup did not have (the new upload).
    const shas = [...new Set([...(await documents(d, user.apiKey)).values()].map((x) => x.sha256))];
    const newOriginals = shas.map((sha) => `files/${sha.slice(0, 2)}/${sha}`).filter((p) => !had.has(p)).sort();
    expect(newOriginals).toContain(`files/${up.body.documents[0].sha256.slice(0, 2)}/${up.body.documents[0].sha256}`);
    expect(fresh.filter((f) => f.path.startsWith('files/')).map((f) => f.path).sort()).toEqual(newOriginals);
    expect(s.originals.copied).toBe(newOriginals.length);
    // Nothing is copied twice into the repository: one object per immutable file.
    expect(readdirSync(join(repo, 'backups')).sort()).toEqual([first.id, s.id].sort());

    // --keep 1 leaves the newest, and the files only the older one used go.
    const kept = await cli(['backup', '--data-dir', d.dataDir, '--to', repo, '--keep', '1', '--json']);
    expect(kept.code, kept.stderr).toBe(0);
    const k = JSON.parse(kept.stdout);
    expect(k.removed_backups.sort()).toEqual([first.id, s.id].sort());
    const list = await cli(['restore', '--from', repo, '--list', '--json']);
    expect(JSON.parse(list.stdout).map((b: { id: string }) => b.id)).toEqual([k.id]);
  }, 600_000);

  it('a backup killed midway leaves nothing restore accepts; the next run cleans up and completes', async () => {
    const killedRepo = tmp('killed');
    // Slowed down, so that it is still copying when killed.
    const proc = spawn(process.execPath, [BIN, 'backup', '--data-dir', d.dataDir, '--to', killedRepo, '--max-rate', '16k'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const killed = await new Promise<boolean>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (/^index: /m.test(stderr)) setTimeout(() => proc.kill('SIGKILL'), 1000);
      });
      proc.once('exit', (_code, signal) => resolve(signal === 'SIGKILL'));
    });
    expect(killed, stderr).toBe(true);
    expect(readdirSync(join(killedRepo, 'objects')).length, 'it had started copying').toBeGreaterThan(0);

    const target = join(tmp('from-killed'), 'data');
    const none = await cli(['restore', '--from', killedRepo, '--to', target]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no complete backup/);
    const id = /^backup (\S+) of /m.exec(stderr)![1]!;
    const named = await cli(['restore', '--from', killedRepo, '--backup', id, '--to', target]);
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(/has no manifest: it is incomplete/);

    const again = await cli(['backup', '--data-dir', d.dataDir, '--to', killedRepo, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/removed the version tags a backup that did not finish left/);
    const ok = await cli(['restore', '--from', killedRepo, '--to', target, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id: JSON.parse(again.stdout).id, verified: true });
  }, 600_000);

  it('refuses a non-empty target, a damaged file and a manifest of a newer format', async () => {
    const busy = tmp('busy');
    writeFileSync(join(busy, 'something'), 'x');
    const full = await cli(['restore', '--from', repo, '--to', busy]);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/is not empty/);

    const id = JSON.parse((await cli(['restore', '--from', repo, '--list', '--json'])).stdout)[0].id as string;
    const m = JSON.parse(readFileSync(join(repo, 'backups', id!, 'manifest.json'), 'utf8'));
    const original = m.files.find((f: { path: string }) => f.path.startsWith('files/'));
    const objectPath = join(repo, original.key);
    const bytes = readFileSync(objectPath);
    writeFileSync(objectPath, Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1)! ^ 1])]));
    const damaged = await cli(['restore', '--from', repo, '--to', join(tmp('damaged'), 'data')]);
    writeFileSync(objectPath, bytes);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(/checksum mismatch/);

    const manifestPath = join(repo, 'backups', id!, 'manifest.json');
    const text = readFileSync(manifestPath, 'utf8');
    writeFileSync(manifestPath, JSON.stringify({ ...m, format: 99 }));
    const newer = await cli(['restore', '--from', repo, '--backup', id!, '--to', join(tmp('newer'), 'data')]);
    writeFileSync(manifestPath, text);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toMatch(/backup format 99; this version reads format 1/);
  }, 300_000);
});
