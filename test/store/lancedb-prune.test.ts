/**
 * LanceDB history (issue #12 item 3): optimize() prunes superseded versions after compacting, keeping only
 * what a running search may still read, so a table under a mixed load stays near its compacted size.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChunkRow } from '../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { PruneHorizon } from '../../src/store/lancedb/prune-horizon.js';

const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: 384 };
const WORDS = 'cell protein gene tumor immune receptor signal pathway expression mouse patient clinical dose trial'.split(' ');

/** Bytes under `dir` and how many files. */
function du(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    bytes += statSync(join(e.parentPath, e.name)).size;
    files++;
  }
  return { bytes, files };
}

let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

function doc(user: string, id: string, chunks: number): ChunkRow[] {
  return Array.from({ length: chunks }, (_, i) => {
    const text = Array.from({ length: 60 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
    const v = Float32Array.from({ length: EMBEDDER.dimension }, () => rand() - 0.5);
    return { id: `${id}:${i}`, user_id: user, project_id: `p-${user}`, document_id: id, chunk_index: i, text, search_text: text, heading: null, page_start: null, page_end: null, vector: v };
  });
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'docsearch-prune-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('LanceDB version pruning', () => {
  it('keeps a table under a mixed load within 2x of a fresh compaction of the same rows', async () => {
    const dir = tempDir();
    const store = await VectorStore.open(dir);
    // A short window so the test need not wait a minute; the rule is the same.
    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id }, { keepSupersededMs: 200 });
    const live = new Map<string, ChunkRow[]>();
    for (let round = 0; round < 30; round++) {
      const id = `d${round}`;
      const rows = doc(round % 2 ? 'u1' : 'u2', id, 40);
      await index.deleteDocument(id);
      await index.add(rows, EMBEDDER);
      live.set(id, rows);
      if (round % 3 === 2) {
        const gone = `d${round - 2}`;
        await index.deleteDocument(gone);
        live.delete(gone);
      }
      index.optimizeSoon(); // as the ingest pipeline does: at most one background optimize a second
      await index.keywordSearch({ projectIds: ['p-u1'], query: 'protein tumor', limit: 10 });
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 4000)); // the last optimize, then the prune pass once the burst is out of the window
    await index.close();
    store.close();
    const used = du(dir);

    // The same table compacted with no history at all: a copy, every version but the latest pruned.
    const copy = tempDir();
    cpSync(dir, copy, { recursive: true });
    const db = await lancedb.connect(copy);
    const table = await db.openTable('chunks');
    await table.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
    expect(await table.countRows()).toBe([...live.values()].flat().length);
    db.close();
    const compacted = du(copy);

    console.log(`after the mixed load: ${used.bytes} bytes in ${used.files} files; compacted without history: ${compacted.bytes} bytes in ${compacted.files} files`);
    expect(used.bytes).toBeLessThanOrEqual(2 * compacted.bytes);
  }, 120_000);

  it('prunes only versions superseded before the window began, never the one a search may still read', async () => {
    const dir = tempDir();
    const db = await lancedb.connect(dir);
    const table = await db.createTable('t', [{ id: 0 }]);
    await new Promise((r) => setTimeout(r, 50));
    await table.add([{ id: 1 }]);
    await new Promise((r) => setTimeout(r, 50));
    await table.add([{ id: 2 }]);
    const versions = (await table.listVersions()).map((v) => v.timestamp.getTime());
    expect(versions).toHaveLength(3);
    const [, second, third] = versions as [number, number, number];

    const listed = (keepMs: number) => {
      const horizon = new PruneHorizon(keepMs);
      horizon.learn(versions.map((t) => new Date(t)));
      return horizon;
    };
    // Everything younger than the window: nothing is older than the cutoff.
    expect(listed(60_000).cutoff(third + 1000)).toBe(0);
    // The horizon falls between the 2nd and 3rd versions: the 2nd was current then, so a search may read it
    // still; only what is older goes, however recently the 2nd itself was superseded.
    const horizon = listed(1000);
    expect(horizon.cutoff(second + 1010)).toBe(second);
    // Asked again later, never below what it answered before.
    expect(horizon.cutoff(second + 1020)).toBe(second);

    // Handed to LanceDB as an age, the cutoff moves by however long the call takes: a second's margin.
    await table.optimize({ cleanupOlderThan: new Date(horizon.cutoff(second + 1010) - 1000) });
    expect((await table.listVersions()).map((v) => v.timestamp.getTime())).toEqual(expect.arrayContaining([second, third]));
    await table.checkout(2); // the version a search that began before the window may hold: still readable
    expect(await table.countRows()).toBe(2);
    await table.checkoutLatest();
    db.close();
  }, 60_000);

  it('takes a pass that committed as a mark: its start once its end is out of the window, never a version before', () => {
    const horizon = new PruneHorizon(1000);
    horizon.learn([new Date(1000), new Date(2000)]);
    // A pass started at 5000 and committed by 5400: the version it made is stamped between the two.
    horizon.note({ at: 5000, by: 5400 });
    // Out of the window from 6400 on: until then only the listed versions count.
    expect(horizon.cutoff(6399)).toBe(2000);
    expect(horizon.cutoff(6400)).toBe(5000);
    // Marks noted out of order still count by when they were committed.
    horizon.note({ at: 9000, by: 9500 });
    horizon.note({ at: 7000, by: 7200 });
    expect(horizon.cutoff(8300)).toBe(7000);
    expect(horizon.cutoff(10_500)).toBe(9000);
  });
});
