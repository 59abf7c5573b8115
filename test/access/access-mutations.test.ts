/**
 * The mutation check (issue 57): the permission matrix must fail against a daemon broken in each of four named ways
 * (test/access/mutations.ts) — a refused change made before its refusal, a 404 that names what it hides, a list
 * without its project filter, a key's project limit ignored. Each runs on a copy of the built daemon with one patch,
 * through the same matrix code as test/access/permission-matrix.test.ts, on SQLite here and PostgreSQL in the
 * `postgresql` project; the row it breaks must fail in the cells named, and the row must pass on the unbroken build
 * (the permission matrix test holds that).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir } from '../helpers/daemon.js';
import { SPECS } from './matrix-rows.js';
import { readMatrix } from './matrix-table.js';
import { Matrix } from './matrix-world.js';
import { MUTATIONS, mutantBuild } from './mutations.js';

const rows = readMatrix();

describe.each(MUTATIONS)('the permission matrix catches $name', (mutation) => {
  const row = rows.find((r) => r.operation === mutation.row);
  const m = new Matrix(SPECS);
  let root: string | undefined;

  beforeAll(async () => {
    const build = mutantBuild(mutation);
    root = build.root;
    await m.start({ bin: build.bin });
  }, 300_000);

  afterAll(async () => {
    await m.stop();
    if (root) removeDir(root);
  });

  it(`fails ${mutation.row} for ${mutation.cells.join(', ')}`, { timeout: 300_000 }, async () => {
    if (!row) throw new Error(`docs/permissions.md has no row ${mutation.row}`);
    const got = await m.run(row);
    const caught = mutation.cells.filter((p) => got[p] !== row.expected[p]);
    expect(caught, `the cells of ${mutation.row} under the mutation: ${JSON.stringify(got, null, 1)}`).toEqual(mutation.cells);
  });
});
