import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { postgresUnavailable } from './test/helpers/postgres.js';

/**
 * A run's temporary files (daemons' data folders, CLI homes, the servers' folders, packed and installed packages: over
 * a GB a run) go under one folder, removed when the run ends, so that runs do not fill the machine's temp folder. The
 * caches meant to outlive a run (the model graph, PostgreSQL's initdb output) stay in the machine's own
 * (DOCSEARCH_TEST_CACHE). Open to every account, as /tmp is: servers that run as their own account (PostgreSQL) reach
 * their folders under it. The config is read more than once in a run (vitest's projects): the first reading makes the
 * folder, the others (and any process started with the environment it sets) find it in DOCSEARCH_TEST_RUN_TMP.
 */
const made = process.env.DOCSEARCH_TEST_RUN_TMP;
const machineTmp = process.env.DOCSEARCH_TEST_CACHE ?? tmpdir();
const runTmp = made ?? mkdtempSync(join(machineTmp, 'docsearch-run-'));
if (!made) {
  chmodSync(runTmp, 0o1777);
  // DOCSEARCH_TEST_KEEP_TMP=1 keeps it, to look into a failed test's data folder.
  if (process.env.DOCSEARCH_TEST_KEEP_TMP) process.on('exit', () => process.stderr.write(`the run's temporary files are kept in ${runTmp}\n`));
  else process.on('exit', () => rmSync(runTmp, { recursive: true, force: true }));
}
const runEnv = { TMPDIR: runTmp, DOCSEARCH_TEST_CACHE: machineTmp, DOCSEARCH_TEST_RUN_TMP: runTmp };
Object.assign(process.env, runEnv);

/**
 * The API suites that run a second time with every daemon on PostgreSQL (shared mode's relational store): the
 * routes whose state lives in the database. The store suites (test/store/) cover both engines themselves.
 */
const API_SUITES_ON_POSTGRES = [
  'test/server/projects.test.ts',
  'test/server/api-keys.test.ts',
  'test/ingest/pipeline/upload.test.ts',
  'test/search/search-api.test.ts',
  'test/search/filters.test.ts',
  'test/server/saved-search-access.test.ts',
  'test/web/label-find.test.ts',
  'test/server/unicode-names.test.ts',
  'test/server/unicode-emails.test.ts',
  'test/documents/list-facets.test.ts',
  'test/search/filter-mutants-edges.test.ts',
  'test/documents/metadata-patch.test.ts',
  'test/documents/replaced-copy-upload.test.ts',
  'test/auth/token/token.test.ts',
  'test/auth/authorize/authorize.test.ts',
  'test/auth/hardening/hardening.test.ts',
  'test/auth/settings/account.test.ts',
  'test/auth/resource/resource.test.ts',
  'test/auth/registration/dcr.test.ts',
  'test/auth/registration/cimd.test.ts',
  'test/server/setup-login.test.ts',
  'test/server/health.test.ts',
  'test/access/permission-matrix.test.ts',
  'test/access/access-mutations.test.ts',
  'test/server/api-errors.test.ts',
  'test/sources/folder.test.ts',
  'test/sources/renames.test.ts',
  'test/server/audit-log.test.ts',
  'test/auth/two-factor/two-factor.test.ts',
  'test/auth/sso/sso-web.test.ts',
  'test/server/paging-order.test.ts',
  'test/server/hostile-strings.test.ts',
  'test/search/moments.test.ts',
  'test/search/filter-probe.test.ts',
  'test/server/route-fuzz.test.ts',
  'test/web/group-shared-projects.test.ts',
];

/**
 * The files that took longest in the last clean-clone runs, longest first (seconds there). A clean clone has no
 * results cache, so vitest orders files by their size, which says little about their time (the package install is
 * 3.6 KB and two minutes): a long file that starts late leaves the other worker idle at the end. These start first
 * (longest-first keeps the two workers' ends close); the rest keep vitest's order. With a cache, vitest's own order
 * (longest first by the last run) already puts them there.
 */
const SLOWEST_FIRST = [
  'test/package/full-package.test.ts', // 148
  'test/e2e/replicas.test.ts', // 148 before --replaced-grace 1; about 125 now
  'test/server/storage-s3.test.ts', // 122
  'test/ingest/formats/odd-inputs.test.ts', // 112
  'test/admin/backup-shared.test.ts', // 224 before restore released the source's job leases; about 110 now
  'test/store/upgrade-from-release.test.ts', // 90
  'test/store/lancedb-s3.test.ts', // 88
  'test/ingest/ocr/ocr-engine.test.ts', // 82
  'test/store/index-file-cache.test.ts', // 80
  'test/store/table-mirror.test.ts', // 79
  'test/admin/team-commands.test.ts', // 76
  'test/e2e/replica-operations.test.ts', // 70
];

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const at = SLOWEST_FIRST.indexOf(relative(this.ctx.config.root, f.moduleId));
      return at < 0 ? SLOWEST_FIRST.length : at;
    };
    // Array sort is stable: the files not listed keep vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

const noPostgres = postgresUnavailable();
if (noPostgres) process.stderr.write(`note: the API suites run on SQLite only: ${noPostgres}\n`);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Daemon tests start real processes with the real model: two at a time suits a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
    sequence: { sequencer: SlowestFirst },
    env: runEnv,
    projects: [
      { extends: true, test: { name: 'embedded', include: ['test/**/*.test.ts'] } },
      ...(noPostgres
        ? []
        : [
            {
              extends: true,
              test: {
                name: 'postgresql',
                include: API_SUITES_ON_POSTGRES,
                env: { ...runEnv, DOCSEARCH_TEST_ENGINE: 'postgresql' },
                globalSetup: ['test/helpers/postgres-global.ts'],
              },
            },
          ]),
    ],
  },
});
