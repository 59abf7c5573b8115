import { startPostgres } from './postgres.js';

/**
 * globalSetup of the vitest project that reruns the API suites on PostgreSQL: one cluster for the run, whose
 * admin URL test/helpers/daemon.ts reads to give every daemon a database of its own.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const cluster = await startPostgres();
  process.env.DOCSEARCH_TEST_POSTGRES = cluster.adminUrl;
  return () => cluster.destroy();
}
