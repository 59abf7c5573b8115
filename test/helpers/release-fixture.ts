/**
 * The upgrade fixtures (test/fixtures/upgrade/<release>/, scripts/make-upgrade-fixture.sh) as the tests use them: a
 * release's recorded answers, its shared-mode library loaded into a PostgreSQL database and an RGW bucket, and the
 * promise its answers are held to on this machine (upgrade-answers.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { REPO } from './daemon.js';
import { PG_BIN } from './postgres.js';
import type { Rgw } from './rgw.js';
import { expectAnswersAcrossCpus, expectSameAnswers } from './upgrade-answers.js';
import { type FixtureUser, modelKernels, type Observed } from './upgrade-library.js';

export const FIXTURES = join(REPO, 'test/fixtures/upgrade');
export const RELEASES = readdirSync(FIXTURES).filter((name) => existsSync(join(FIXTURES, name, 'README.md')));
/** Where a shared-mode fixture's objects go in the bucket. */
export const PREFIX = 'library';

export type Recorded = Observed & { users: FixtureUser[] };
export const recorded = (release: string, mode: 'embedded' | 'shared'): Recorded => JSON.parse(readFileSync(join(FIXTURES, release, `${mode}.json`), 'utf8')) as Recorded;

/** Whether this machine picks the model's kernels as the one the release's answers were computed on did. */
const onFixtureMachine = (release: string): boolean => {
  const file = join(FIXTURES, release, 'machine.json');
  return existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { kernels: string }).kernels === modelKernels();
};

/**
 * Whether this machine embeds a query as the fixture's did: the release's first vector similarity (a stored vector
 * against the first query's) reproduced within 1e-4 (on the fixture's machine, within the 1e-5 the answers are held
 * to). The vector instructions alone do not settle it: an Intel Xeon with the same ones as 0.2.0's machine, under
 * another hypervisor, embedded that query 4.4e-3 apart, as another CPU does.
 */
function sameQueryVectors(now: Observed, then: Observed): boolean {
  const similarity = (r: Record<string, unknown> | undefined) => (r?.scores as { vector?: { similarity: number } } | undefined)?.vector?.similarity;
  for (const [i, search] of then.searches.entries()) {
    const first = search.results.find((r) => similarity(r) !== undefined);
    if (!first) continue;
    const today = similarity(now.searches[i]?.results.find((r) => r.chunk_id === first.chunk_id));
    return today !== undefined && Math.abs(today - similarity(first)!) <= 1e-4;
  }
  return false;
}

/** The release's answers as docs/operations.md promises them on this machine: to 1e-5 on the fixture's, within the drift elsewhere. */
export const expectReleaseAnswers = (release: string, now: Observed, then: Observed): void =>
  onFixtureMachine(release) && sameQueryVectors(now, then) ? expectSameAnswers(now, then) : expectAnswersAcrossCpus(now, then);

/** The release's shared-mode library as it left it: its dump loaded into `databaseUrl`, its objects under PREFIX in the RGW bucket. */
export async function loadSharedFixture(release: string, databaseUrl: string, rgw: Rgw): Promise<void> {
  const load = spawnSync(join(PG_BIN, 'psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', join(FIXTURES, release, 'shared/database.sql'), databaseUrl], { encoding: 'utf8' });
  if (load.status !== 0) throw new Error(`psql could not load the dump: ${load.stderr}`);
  const root = join(FIXTURES, release, 'shared/objects');
  const s3 = rgw.client();
  try {
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      await s3.send(new PutObjectCommand({ Bucket: rgw.bucket, Key: `${PREFIX}/${relative(root, path)}`, Body: readFileSync(path) }));
    }
  } finally {
    s3.destroy();
  }
}
