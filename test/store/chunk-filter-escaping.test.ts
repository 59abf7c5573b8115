/**
 * A search's filters as LanceDB's prefilter (store/lancedb/chunk-filter.ts, `lit` in owned-table.ts), against text
 * that means something to SQL or to LIKE: quotes, backslashes, `%` and `_`, SQL-looking keys. Each must match exactly
 * what a plain string comparison matches — by a scan, and again once the chunks table's own scalar indexes
 * (chunk-schema.ts SCALAR_INDEXES: a btree turns `starts_with` into `LIKE 'prefix%'`, label lists answer
 * `array_has_any`) answer it — and, behind a project filter, never reach another project's rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChunkFilter, chunkFilterSql, metaEntry } from '../../src/store/lancedb/chunk-filter.js';
import { SCALAR_INDEXES } from '../../src/store/lancedb/chunk-schema.js';
import { inList } from '../../src/store/lancedb/owned-table.js';

const HOSTILE = ["it's", "x') OR true OR ('", "x\\') OR true OR ('", 'sec\\ret', 'sec\\', '\\', '%', '_', 'a%', 'a_', 'a%b', 'a_b', 'a\\%', '*', "''", "'", 'Ä', 'A\u0308'];

interface Row {
  id: string;
  project_id: string;
  content_type: string;
  path: string;
  source_id: string;
  labels: string[];
  meta: string[];
}

// Every hostile text as a path (and the path of a longer one), a label id, a source, a type and a metadata key and
// value, in two projects; p2's rows are what a filter that escaped its quotes would let in.
const rows: Row[] = [...HOSTILE, 'a', 'ab', 'axb', 'aXb', 'plain']
  .flatMap((text, i) => [`${text}/x`, text].map((path, j) => ({ text, path, n: i * 2 + j })))
  .flatMap(({ text, path, n }) =>
    ['p1', 'p2'].map((project) => ({
      id: `${project}-${n}`,
      project_id: project,
      content_type: text,
      path,
      source_id: text,
      labels: [text, 'common'],
      meta: [text, metaEntry(text, JSON.stringify(text)), metaEntry('1=1', '1')],
    })),
  );

describe('chunk filters escape what they are given', () => {
  let dir: string;
  let db: lancedb.Connection;
  let table: lancedb.Table;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-chunk-filter-'));
    db = await lancedb.connect(dir);
    table = await db.createTable('chunks', rows as unknown as Record<string, unknown>[]);
  });
  afterAll(() => {
    table?.close();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [ChunkFilter, (r: Row) => boolean][] = HOSTILE.flatMap((v): [ChunkFilter, (r: Row) => boolean][] => [
    [{ pathPrefix: v }, (r) => r.path.startsWith(v) || r.path.startsWith(v.normalize('NFD')) || r.path.startsWith(v.normalize('NFC'))],
    [{ contentTypes: [v] }, (r) => r.content_type === v],
    [{ sourceIds: [v, 'none'] }, (r) => r.source_id === v],
    [{ labelGroups: [[v]] }, (r) => r.labels.includes(v)],
    [{ meta: [{ anyOf: [metaEntry(v, JSON.stringify(v))] }] }, (r) => r.meta.includes(metaEntry(v, JSON.stringify(v)))],
    [{ meta: [{ key: v, present: true }] }, (r) => r.meta.includes(v) || r.meta.includes(v.normalize('NFD')) || r.meta.includes(v.normalize('NFC'))],
  ]);

  const matched = async (where: string) => (await table.query().where(where).select(['id']).limit(10_000).toArray()).map((r) => String(r.id)).sort();

  const check = async () => {
    for (const [filter, holds] of cases) {
      const sql = chunkFilterSql(filter)!;
      expect(await matched(sql), sql).toEqual(rows.filter(holds).map((r) => r.id).sort());
      // Behind its project, as every search's prefilter is (chunk-search.ts scopeFilter).
      const scoped = await matched(`${inList('project_id', ['p1'])} AND ${sql}`);
      expect(scoped, sql).toEqual(rows.filter((r) => r.project_id === 'p1' && holds(r)).map((r) => r.id).sort());
    }
  };

  it('matches exactly by a scan', async () => {
    expect(cases.length).toBeGreaterThan(100);
    await check();
  });

  it('matches exactly through the scalar indexes the chunks table has', async () => {
    const columns = new Set(Object.keys(rows[0]!));
    for (const [column, config] of SCALAR_INDEXES) if (columns.has(column)) await table.createIndex(column, { config: config() });
    expect((await table.listIndices()).map((i) => i.columns[0]).sort()).toEqual(['content_type', 'id', 'labels', 'meta', 'path', 'project_id', 'source_id']);
    // The btree answers the path prefix (LIKE 'prefix%' with its wildcards escaped), not a scan.
    expect(await table.query().where(chunkFilterSql({ pathPrefix: 'a%' })!).explainPlan(true)).toContain('ScalarIndexQuery');
    await check();
  });
});
