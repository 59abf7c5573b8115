/**
 * docs/scale-out.md, "Failure modes": a replica whose block cache (`cache/index`) lost files, holds blocks of the
 * wrong size, or was removed whole, answers as before: what is missing or damaged is fetched from the store again
 * (on a real Ceph RADOS Gateway), never read as it is. Vectors are synthetic: this tests the store, not a model.
 */
import { readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rgwUnavailable } from '../helpers/rgw.js';
import { rgwReplicas } from '../helpers/rgw-replicas.js';
import { EMBEDDER, rows, search } from '../helpers/synthetic-chunks.js';

const SKIP = rgwUnavailable();
const MiB = 1024 * 1024;
/** Files a Lance table writes once and never changes: what the cache may answer for. */
const IMMUTABLE = /\.lance\/(data|_indices|_deletions|_transactions)\//;
const SEEDS = [3, 150, 299];

describe.skipIf(SKIP !== null)(`a damaged index file cache on S3 (Ceph RGW)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const suite = rgwReplicas({ log: true, asReplica: true, embedderId: EMBEDDER.id });
  const dataRequests = () => suite.log.requests().filter((r) => IMMUTABLE.test(r.path));

  it('fetches again from the store what is gone or the wrong size on disk, and answers the same', async () => {
    const url = suite.library();
    const writer = await suite.replica(url, { readConsistencyS: 0 });
    await writer.index.add(rows('d1', 300), EMBEDDER);
    await writer.index.optimize();
    const direct = await Promise.all(SEEDS.map((seed) => search(writer.index, seed)));
    const dir = join(suite.dir, 'damaged');
    const cache = { dir, maxBytes: 256 * MiB };

    // A replica fills its cache, and stops (a restart reads the disk, not the blocks it kept in memory).
    const first = await suite.replica(url, { readConsistencyS: 0, fileCache: cache });
    for (const seed of SEEDS) await search(first.index, seed);
    await suite.close(first);
    const blocks = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /^\d+$/.test(e.name))
      .map((e) => join(e.parentPath, e.name));
    expect(blocks.length).toBeGreaterThan(4);
    // Every other block gone, the rest cut short (a disk that filled, a hand that cleaned up).
    blocks.forEach((file, i) => (i % 2 ? rmSync(file) : truncateSync(file, Math.floor(statSync(file).size / 2))));

    const damaged = await suite.replica(url, { readConsistencyS: 0, fileCache: cache });
    suite.log.reset();
    for (const [i, seed] of SEEDS.entries()) expect(await search(damaged.index, seed)).toEqual(direct[i]);
    expect(dataRequests().length, 'the damaged blocks are fetched from the store').toBeGreaterThan(0);
    // Fetched once, kept again: the next searches read nothing of them from the store.
    suite.log.reset();
    for (const [i, seed] of SEEDS.entries()) expect(await search(damaged.index, seed)).toEqual(direct[i]);
    expect(dataRequests()).toEqual([]);
    await suite.close(damaged);

    // The whole cache directory removed under a restarted replica: the same answers, the cache made again.
    rmSync(dir, { recursive: true, force: true });
    const bare = await suite.replica(url, { readConsistencyS: 0, fileCache: cache });
    for (const [i, seed] of SEEDS.entries()) expect(await search(bare.index, seed)).toEqual(direct[i]);
    expect(readdirSync(dir).length).toBeGreaterThan(0);
  });
});
