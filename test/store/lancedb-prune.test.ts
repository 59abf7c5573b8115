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
    // The product's own pass (OwnedRowsTable.optimize: compact, then prune by PruneHorizon) on a chunks table, and
    // what it left read back from disk through a connection of the test's own. The window is long enough that the
    // pass ends well inside it after the last write, even on a loaded machine.
    const keepMs = 5000;
    const dir = tempDir();
    const store = await VectorStore.open(dir);
    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id }, { keepSupersededMs: keepMs });
    const reader = await lancedb.connect(dir);
    const versionsOnDisk = () => readdirSync(join(dir, 'chunks.lance', '_versions')).filter((f) => f.endsWith('.manifest'));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      // The first versions: the table made, its indexes, the first rows.
      await index.add(doc('u1', 'd0', 40), EMBEDDER);
      const table = await reader.openTable('chunks');
      const early = (await table.listVersions()).map((v) => v.version);
      const first = early[0]!;
      expect(first).toBe(1);
      // Well before the next: past the prune's margin for the round trip (PRUNE_MARGIN_MS, a second).
      await sleep(1500);
      // The version a search that starts now reads, current until the next write.
      await index.add(doc('u2', 'd1', 40), EMBEDDER);
      await table.checkoutLatest();
      const held = await table.version();
      // Written long before the window began (past its margin too): a plain `now − keepMs` cutoff would take it.
      await sleep(keepMs + 1500);
      // Superseded only now: a search that began a moment ago may still be reading it.
      await index.add(doc('u1', 'd2', 40), EMBEDDER);
      const supersededAt = Date.now();
      await table.checkoutLatest();
      const latest = await table.version();
      const manifestsBefore = versionsOnDisk().length;
      expect(manifestsBefore).toBeGreaterThanOrEqual(early.length + 2);

      await index.optimize(); // compacts, then prunes (the first pass of this process: it lists the versions once)
      const passEnded = Date.now();
      await index.close(); // no background pass after this one
      await store.close();
      // Otherwise the held version was superseded longer ago than the window by the time the pass pruned, and
      // could go by the rule.
      expect(passEnded - supersededAt, 'the pass ended inside the window of the last write').toBeLessThan(keepMs);

      await table.checkoutLatest();
      const listed = (await table.listVersions()).map((v) => v.version);
      // The first versions are gone: not listed, no manifest on disk, no longer checked out.
      for (const v of early) expect(listed).not.toContain(v);
      expect(versionsOnDisk()).toHaveLength(listed.length);
      expect(versionsOnDisk().length).toBeLessThan(manifestsBefore);
      await expect(table.checkout(first)).rejects.toThrow();
      // The one a search may still read is there, with its rows; and what came after it.
      expect(listed).toEqual(expect.arrayContaining([held, latest]));
      await table.checkout(held);
      expect(await table.countRows()).toBe(80);
      await table.checkout(latest);
      expect(await table.countRows()).toBe(120);
      await table.checkoutLatest();
      expect(await table.countRows()).toBe(120);
      table.close();
    } finally {
      await index.close();
      await store.close();
      reader.close();
    }

    // The rule, on its own: with the horizon between the 2nd and 3rd versions, the 2nd was current then, so a search
    // may read it still; only what is older goes, however recently the 2nd itself was superseded.
    const [second, third] = [10_000, 10_050];
    const listedAt = (keepMs: number) => {
      const horizon = new PruneHorizon(keepMs);
      horizon.learn([new Date(second - 50), new Date(second), new Date(third)]);
      return horizon;
    };
    expect(listedAt(60_000).cutoff(third + 1000)).toBe(0); // everything younger than the window
    const horizon = listedAt(1000);
    expect(horizon.cutoff(second + 1010)).toBe(second);
    expect(horizon.cutoff(second + 1020)).toBe(second); // asked again later, never below what it answered before
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
