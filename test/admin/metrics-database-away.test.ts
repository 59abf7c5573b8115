/**
 * docs/operations.md: the gauges read at scrape time (queue, sources) come from the database; "a read that fails
 * leaves them at their last values and is logged once". A daemon on a PostgreSQL cluster of this file's own (never
 * the run's shared one), scraped while the cluster is stopped: the scrape still answers 200 with the last values,
 * the log says so once however many scrapes fail, and the values are read again once the database is back.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { SourceClient } from '../helpers/sources.js';
import { waitFor } from '../helpers/eventually.js';

const SKIP = postgresUnavailable();

async function scrape(d: Daemon): Promise<string> {
  const res = await fetch(`${d.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

describe.skipIf(SKIP !== null)(`scrape-time gauges while the database is away${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let cluster: PgCluster;
  let d: Daemon;
  let root: string;
  beforeAll(async () => {
    cluster = await startPostgres();
    root = mkdtempSync(join(tmpdir(), 'docsearch-metrics-roots-'));
    d = await startDaemon({ databaseUrl: await cluster.createDatabase(), args: ['--source-roots', root] });
  }, 120_000);
  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await cluster?.destroy();
    if (root) removeDir(root);
  });

  it('answer with their last values, say so once, and read again when it is back', async () => {
    const user = await addUser(d);
    const client = new SourceClient(d, user.apiKey);
    const project = await client.project('watched');
    mkdirSync(join(root, 'watched'));
    await client.add(project, { url: `file://${join(root, 'watched')}`, every: '1d' });
    await waitFor(async () => /^docsearch_sources\{state="active"\} 1$/m.test(await scrape(d)), 20_000, 'the source counted as active');

    await cluster.stop();
    try {
      // The sources' read is kept 5 s, the queue's 1 s: past 5 s both read the stopped database, the queue's three times.
      await new Promise((r) => setTimeout(r, 5_500));
      for (let i = 0; i < 3; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 1_100));
        const text = await scrape(d);
        expect(text).toMatch(/^docsearch_sources\{state="active"\} 1$/m);
        expect(text).toMatch(/^docsearch_jobs\{state="pending"\} 0$/m);
      }
      for (const what of ['sources', 'queue']) {
        const line = `metrics: could not read the ${what}; its gauges keep their last values`;
        await d.logLine(line);
        expect(d.stdout().split(line).length - 1, `${what}: logged once`).toBe(1);
      }
    } finally {
      await cluster.start();
    }
    // Back: a second source shows, so the gauge is read again (the API waits out the reconnection).
    mkdirSync(join(root, 'second'));
    await waitFor(async () => (await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url: `file://${join(root, 'second')}`, every: '1d' } })).status === 201, 30_000, 'the database back');
    await waitFor(async () => /^docsearch_sources\{state="active"\} 2$/m.test(await scrape(d)), 30_000, 'the gauges read again');
  }, 120_000);
});
