/**
 * bench:search's filtered knobs (issue 60): `npm run bench:search -- --chunks '' --filtered 100000 --knobs`.
 *
 * On the filtered library (bench/filtered-library.ts), in this process, the LanceDB vector query a filtered search
 * can run, as the daemon builds it (cosine, the scope's prefilter, depth 200): an exact scan of the filtered rows, the
 * prefiltered HNSW walk (ef 400), and the walk refined (its candidates re-ranked by exact distance) — at shares of the
 * table from 1 to 50 % (2, 5 and 20 % add an `uploaded_at` range to a `type` filter). Each: recall@10 against the exact
 * scan and CPU ms a query (LanceDB's threads included). What decides `exactShare` and the refine
 * (src/store/lancedb/chunk-search.ts `scansExactly`). 9 % and 10 % lie either side of LanceDB's own switch: a filter
 * that keeps under a tenth of the index's rows is answered by a flat scan of its 8-bit codes, not by the walk.
 */
import type * as lancedb from '@lancedb/lancedb';
import { DEFAULT_RETRIEVE } from '../src/search/retrieve.js';
import { DEFAULT_ANN } from '../src/store/lancedb/chunks.js';
import { inList } from '../src/store/lancedb/owned-table.js';

const DEPTH = DEFAULT_RETRIEVE.vectorDepth;
const PDF_MARKDOWN = `content_type IN ('application/pdf', 'text/markdown')`;
const KNOBS = ['exact scan', `walk, ef ${DEFAULT_ANN.ef}`, 'walk, refined'] as const;

/** The knobs' table: one row a share of the table, each cell CPU ms a query and recall@10. */
export async function knobTable(table: lancedb.Table, projectId: string, vectors: Float32Array[]): Promise<string> {
  const uploaded = ((await table.query().select(['uploaded_at']).toArray()) as { uploaded_at: bigint }[]).map((r) => Number(r.uploaded_at)).sort((a, b) => a - b);
  const upTo = (share: number) => `uploaded_at <= ${uploaded[Math.floor(share * (uploaded.length - 1))]}`;
  const filters: [string, string][] = [
    ['1 %', `content_type = 'application/pdf'`],
    ['2 %', `${PDF_MARKDOWN} AND ${upTo(0.2)}`],
    ['5 %', `${PDF_MARKDOWN} AND ${upTo(0.5)}`],
    ['9 %', `content_type = 'text/markdown'`],
    ['10 %', PDF_MARKDOWN],
    ['20 %', `content_type IN ('application/pdf', 'text/markdown', 'text/html') AND ${upTo(0.4)}`],
    ['50 %', `content_type IN ('application/pdf', 'text/markdown', 'text/html')`],
  ];
  const lines = [`| filter keeps | ${KNOBS.join(' | ')} |`, `|---|${KNOBS.map(() => '---|').join('')}`];
  for (const [name, filter] of filters) {
    const where = `${inList('project_id', [projectId])} AND ${filter}`;
    const rows = await table.countRows(where);
    const run = async (knob: (typeof KNOBS)[number], v: Float32Array): Promise<string[]> => {
      let q = table.vectorSearch(v).distanceType('cosine').where(where);
      q = knob === 'exact scan' ? q.bypassVectorIndex() : q.ef(DEFAULT_ANN.ef);
      if (knob === 'walk, refined') q = q.refineFactor(1);
      const found = (await q.select(['id', '_distance']).limit(DEPTH).toArray()) as { id: string; _distance: number }[];
      return found.sort((a, b) => a._distance - b._distance).slice(0, 10).map((r) => r.id);
    };
    const truth: string[][] = [];
    for (const v of vectors) truth.push(await run('exact scan', v));
    const cells: string[] = [];
    for (const knob of KNOBS) {
      for (const v of vectors.slice(0, 5)) await run(knob, v);
      let hits = 0;
      const c0 = process.cpuUsage();
      for (const [i, v] of vectors.entries()) {
        const got = new Set(await run(knob, v));
        hits += truth[i]!.filter((id) => got.has(id)).length;
      }
      const c = process.cpuUsage(c0);
      cells.push(`${((c.user + c.system) / 1000 / vectors.length).toFixed(1)} ms, ${(hits / (10 * vectors.length)).toFixed(3)}`);
    }
    lines.push(`| ${name} (${rows.toLocaleString('en')} rows) | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
