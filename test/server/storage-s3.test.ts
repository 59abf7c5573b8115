/**
 * The built daemon with `--storage s3://…` on a real Ceph RADOS Gateway (SQLite stays in the data dir): uploads
 * are placed in the bucket, ingested, searchable and served back byte for byte; health names the engines and
 * follows the store going away and coming back; and a store that ignores conditional PUT is refused at start
 * (s3rver: the only place it appears, because it accepts If-None-Match and ignores it).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, removeDir, runCli, startDaemon, TEST_MODEL_CACHE, type TestUser } from '../helpers/daemon.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { logS3Requests, type S3Request, type S3RequestLog } from '../helpers/s3-request-log.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { uploadFiles, waitFor } from '../ingest/pipeline/helpers.js';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';

const SKIP = rgwUnavailable();
const PDF = readFileSync(join(REPO, 'test/fixtures/extract/latex-1col.pdf'));
const TEXT = 'Marmots hibernate in burrows through the alpine winter.\n\nThey wake in spring, thin and hungry.\n';

describe.skipIf(SKIP !== null)(`serve --storage s3://… on Ceph RGW${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  let d: Daemon;
  let user: TestUser;
  const storage = () => `s3://${rgw.bucket}/library`;
  const objectKeys = async (prefix: string) =>
    ((await rgw.client().send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();
  /** The store probes (HeadBucket: the SDK sends `HEAD /<bucket>/`) among a relay's requests. */
  const storeProbes = (log: S3RequestLog) => log.requests().filter((r) => r.method === 'HEAD' && r.path === `/${rgw.bucket}/`).length;

  beforeAll(async () => {
    rgw = await startRgw();
    d = await startDaemon({ args: ['--storage', storage()], env: rgw.env(), timeoutMs: 60_000 });
    user = await addUser(d);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await rgw?.stop();
  });

  it('uploads into the bucket, ingests, searches, and serves each original back byte for byte', async () => {
    const up = await uploadFiles(
      d,
      user.apiKey,
      [
        { name: 'licence.pdf', bytes: PDF },
        { name: 'marmots.txt', bytes: Buffer.from(TEXT) },
      ],
      { query: '?wait=true' },
    );
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const [pdf, txt] = up.body.documents as { id: string; status: string; sha256: string }[];
    expect([pdf!.status, txt!.status]).toEqual(['ready', 'ready']);

    // The originals and the index are in the bucket; the data dir holds neither.
    const keys = await objectKeys('library/');
    expect(keys).toEqual(expect.arrayContaining([expect.stringMatching(/^library\/files\/[0-9a-f]{2}\/[0-9a-f]{64}$/), 'library/lancedb/chunks-index.json']));
    expect(keys.filter((k) => k.startsWith('library/files/'))).toHaveLength(2);
    expect(keys.some((k) => k.startsWith('library/lancedb/chunks.lance/'))).toBe(true);
    expect(existsSync(join(d.dataDir, 'lancedb'))).toBe(false);
    expect(existsSync(join(d.dataDir, 'files'))).toBe(false);
    expect(readdirSync(join(d.dataDir, 'tmp'))).toEqual([]);

    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'which laws cover semiconductor masks', limit: 5 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.results as { text: string }[]).some((r) => /semiconductor masks/.test(r.text))).toBe(true);
    const marmots = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'where do marmots hibernate', limit: 5 } });
    expect(JSON.stringify(marmots.body.results)).toMatch(/burrows/);

    for (const [doc, bytes, type] of [
      [pdf!, PDF, 'application/pdf'],
      [txt!, Buffer.from(TEXT), 'text/plain; charset=utf-8'],
    ] as const) {
      const got = await fetch(`${d.url}/api/v1/documents/${doc.id}/file`, { headers: { authorization: `Bearer ${user.apiKey}` } });
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe(type);
      expect(got.headers.get('content-length')).toBe(String(bytes.length));
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      const head = await fetch(`${d.url}/api/v1/documents/${doc.id}/file`, { method: 'HEAD', headers: { authorization: `Bearer ${user.apiKey}` } });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(bytes.length));
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
    const other = await addUser(d);
    expect((await fetch(`${d.url}/api/v1/documents/${pdf!.id}/file`, { headers: { authorization: `Bearer ${other.apiKey}` } })).status).toBe(404);
  });

  it('keeps one object for the same bytes uploaded twice, and removes it with the last document that uses it, once out of the trash', async () => {
    const first = await uploadFiles(d, user.apiKey, [{ name: 'copy-1.txt', bytes: Buffer.from('Shared bytes, stored once.\n') }], { query: '?wait=true' });
    const project = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'second home' } });
    const second = await uploadFiles(d, user.apiKey, [{ name: 'copy-2.txt', bytes: Buffer.from('Shared bytes, stored once.\n') }], { query: '?wait=true', projectId: project.body.id });
    const sha = first.body.documents[0].sha256 as string;
    expect(second.body.documents[0].sha256).toBe(sha);
    const key = `library/files/${sha.slice(0, 2)}/${sha}`;
    expect(await objectKeys(key)).toEqual([key]);
    const [a, b] = [first.body.documents[0].id as string, second.body.documents[0].id as string];
    expect((await api(d, `/api/v1/documents/${a}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect((await api(d, `/api/v1/trash/${a}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect(await objectKeys(key)).toEqual([key]);
    // In the trash, a document keeps its original (a restore needs it); purged, it lets it go.
    expect((await api(d, `/api/v1/documents/${b}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect(await objectKeys(key)).toEqual([key]);
    expect((await api(d, `/api/v1/trash/${b}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect(await objectKeys(key)).toEqual([]);
  });

  it('names its engines in health, answers 503 while the store is gone without dying, and recovers when it is back', async () => {
    // A search first, as in use: the replica's search handle is open, and must catch up with the upload below even
    // though the store is gone the first time it tries.
    expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'anything at all', limit: 5 } })).status).toBe(200);
    const ready = await uploadFiles(d, user.apiKey, [{ name: 'otters.txt', bytes: Buffer.from('Sea otters hold hands while they sleep.\n') }], { query: '?wait=true' });
    expect(ready.body.documents[0].status).toBe('ready');
    const health = await api(d, '/api/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.components.vector_store).toEqual({ status: 'up', engine: 'lancedb', storage: 's3' });
    expect(health.body.components.s3).toEqual({ status: 'up' });

    await rgw.stopGateway();
    try {
      // Each store probe's answer is reused for up to 5 s (sharedProbe), so the two may turn a moment apart.
      const down = await waitFor(async () => {
        const h = await api(d, '/api/v1/health');
        return h.status === 503 && h.body.components.s3.status === 'down' && h.body.components.vector_store.status === 'down' ? h : undefined;
      }, 30_000, 'a degraded health');
      expect(down.body.status).toBe('degraded');
      expect(down.body.components.s3.status).toBe('down');
      expect(down.body.components.vector_store.status).toBe('down');
      const search = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'otters', limit: 5 } });
      // As docs/scale-out.md says: a 503 the client may retry, not a 500 (LanceDB's own report of the store's failure).
      expect(search.status).toBe(503);
      expect(search.body.error).toMatchObject({ code: 'service_unavailable', message: 'file storage is unavailable; try again shortly' });
      const upload = await uploadFiles(d, user.apiKey, [{ name: 'during-outage.txt', bytes: Buffer.from('Written while the store is away.\n') }]);
      expect(upload.status).toBe(503);
      expect(upload.body.error).toMatchObject({ code: 'service_unavailable', message: 'file storage is unavailable; try again shortly' });
      expect(readdirSync(join(d.dataDir, 'tmp'))).toEqual([]);
      expect(d.proc.exitCode).toBeNull();
    } finally {
      await rgw.startGateway();
    }
    await waitFor(async () => (await api(d, '/api/v1/health')).status === 200, 30_000, 'health back to ok');
    const again = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'how do sea otters sleep', limit: 5 } });
    expect(again.status).toBe(200);
    expect(JSON.stringify(again.body.results)).toMatch(/hold hands/);
  });

  it('asks the store about its health at most once every 5 s however often it is checked (haproxy: every 300 ms, per replica)', async () => {
    const log = await logS3Requests(rgw.endpoint);
    const checked = await startDaemon({ args: ['--storage', `s3://${rgw.bucket}/health-probes`], env: { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint }, timeoutMs: 60_000 });
    try {
      expect((await api(checked, '/api/v1/health')).status).toBe(200);
      log.reset();
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 10 }, () => api(checked, '/api/v1/health')));
      // Then as a load balancer checks, for longer than a second and less than the reuse window.
      while (Date.now() - started < 3500) {
        answers.push(await api(checked, '/api/v1/health'));
        await new Promise((r) => setTimeout(r, 150));
      }
      // On a loaded machine the loop may outlast the 5 s window: one more probe of each is allowed per window begun.
      const windows = Math.ceil((Date.now() - started) / 5000);
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body.components).toMatchObject({ s3: { status: 'up' }, vector_store: { status: 'up', storage: 's3' } });
      }
      const tableListings = log.requests().filter((r) => r.method === 'GET' && r.query.includes('delimiter'));
      // At most one each when the window the check before the reset opened ends; every check asked both: 30 each.
      expect(answers.length).toBeGreaterThan(20);
      expect(storeProbes(log)).toBeLessThanOrEqual(windows);
      expect(tableListings.length).toBeLessThanOrEqual(windows);
    } finally {
      await checked.stop();
      removeDir(checked.dataDir);
      await log.close();
    }
  });

  it('waits out a store that is away, taking no document up again until it answers, and fails none', async () => {
    // One document at a time, so the later ones are still queued when the gateway stops; through a relay that logs
    // the store's requests, so the test sees what the worker asks of the store while it is away.
    const log = await logS3Requests(rgw.endpoint);
    const slow = await startDaemon({ args: ['--storage', `s3://${rgw.bucket}/one-worker`, '--ingest-workers', '1'], env: { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint }, timeoutMs: 60_000 });
    let down = false;
    try {
      const owner = await addUser(slow);
      const files = Array.from({ length: 30 }, (_, i) => ({ name: `outage-${i}.txt`, bytes: Buffer.from(`${prose(`outage-${i}`, 40)}\n`) }));
      const shas: string[] = [];
      for (let i = 0; i < files.length; i += 15) {
        const res = await uploadFiles(slow, owner.apiKey, files.slice(i, i + 15)); // at most 20 a request
        expect(res.status).toBe(202);
        shas.push(...(res.body.documents as { sha256: string }[]).map((x) => x.sha256));
      }
      // Half of them without the replica's own copy, as on a replica that received only the others. Taken up while the
      // store is away, one of those fails reading its original from the store; one of the others, once parsed and
      // embedded, writing its chunks.
      const copies = join(slow.dataDir, 'cache', 'originals');
      for (const [i, sha] of shas.entries()) if (i % 2 === 1) rmSync(join(copies, sha), { force: true });
      await rgw.stopGateway();
      down = true;
      const statuses = async () => ((await api(slow, '/api/v1/documents?limit=50', { token: owner.apiKey })).body.documents as { status: string }[]).map((x) => x.status);
      const originalReads = () => log.requests().filter((r) => r.method === 'GET' && r.path.includes('/one-worker/files/')).length;
      // The operator is told what is away: the store, not the database (its errors are socket errors too).
      await slow.logLine(/"event":"ingest\.storage_unavailable"/, 60_000);
      // The job in hand failed at the store: from here on the worker has nothing to read, embed or write.
      const then = { reads: originalReads(), embedded: await passagesEmbedded(slow), probes: storeProbes(log) };
      // Else the test would prove nothing: a fast machine can ingest these small documents before the gateway stops.
      expect((await statuses()).filter((x) => x !== 'ready').length, 'documents still waiting for the store').toBeGreaterThan(0);
      // It is handed back, and read queued, not processing, while the store is away...
      await waitFor(async () => !(await statuses()).includes('processing') || undefined, 15_000, 'no document processing while the store is away');
      // ... for the whole outage (here over several of the worker's tries, each 1 s doubling to 5 s after the last):
      // none is taken up again only to fail at the store, none is failed.
      const seen = new Set<string>();
      for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) for (const x of await statuses()) seen.add(x);
      expect([...seen]).not.toContain('processing');
      expect([...seen]).not.toContain('failed');
      expect({ reads: originalReads(), embedded: await passagesEmbedded(slow) }, 'originals read and texts embedded while the store is away').toEqual({ reads: then.reads, embedded: then.embedded });
      // Instead it asks the store (HeadBucket) whether it is back.
      expect(storeProbes(log)).toBeGreaterThan(then.probes);
      await rgw.startGateway();
      down = false;
      expect(await settled(slow, owner.apiKey, 180_000)).toEqual(files.map(() => ['ready', null]));
      await slow.logLine(/"event":"ingest\.storage_back"/, 30_000);
      expect(slow.stdout()).not.toMatch(/"event":"ingest\.(database_unavailable|failed)"/);
    } finally {
      if (down) await rgw.startGateway();
      await slow.stop();
      removeDir(slow.dataDir);
      await log.close();
    }
  }, 300_000);

  // This test and the two overload tests below each start a daemon of their own on a prefix of their own, behind a
  // relay of their own, and most of their time is spent waiting (on the worker's backoff, a 10 s window): run
  // together, the file takes about 20 s less. Their counts are of their own relay's requests.
  it.concurrent('reads an original it received from its own disk, not back from the store', async () => {
    const log = await logS3Requests(rgw.endpoint);
    const storage = `s3://${rgw.bucket}/recent-originals`;
    const first = await startDaemon({ args: ['--storage', storage], env: { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint }, timeoutMs: 60_000 });
    try {
      const owner = await addUser(first);
      const originalGets = () => log.requests().filter((r) => r.method === 'GET' && r.path.includes('/recent-originals/files/'));
      const probesBefore = storeProbes(log);
      const shas: string[] = [];
      for (const name of ['kept-1.txt', 'kept-2.txt']) {
        const res = await uploadFiles(first, owner.apiKey, [{ name, bytes: Buffer.from(`${prose(`kept locally ${name}`, 20)}\n`) }], { query: '?wait=true&wait_timeout=60' });
        expect(res.body.documents[0].status).toBe('ready');
        shas.push(res.body.documents[0].sha256);
      }
      expect(originalGets()).toEqual([]);
      // Ingesting with the store up asks it nothing more (the worker probes it only while it waits for it).
      expect(storeProbes(log)).toBe(probesBefore);
      // The second upload left the first one's copy alone.
      expect(readdirSync(join(first.dataDir, 'cache', 'originals')).sort()).toEqual(shas.sort());
      // The store has it too: other replicas, and this one after a restart, read it there.
      expect(log.requests().filter((r) => r.method === 'PUT' && r.path.includes('/recent-originals/files/'))).toHaveLength(2);
    } finally {
      await first.stop();
      removeDir(first.dataDir);
      await log.close();
    }
  }, 120_000);

  /** The passage texts the daemon's ingestion has embedded (its /metrics). */
  const passagesEmbedded = async (daemon: Daemon): Promise<number> => {
    const text = await (await fetch(`${daemon.url}/metrics`)).text();
    return Number(/^docsearch_embedded_texts_total\{kind="passage"\} (\S+)$/m.exec(text)?.[1] ?? 0);
  };

  /** The documents once none is waiting: each one's status and error. */
  const settled = (daemon: Daemon, token: string, timeoutMs: number) =>
    waitFor(async () => {
      const docs = (await api(daemon, '/api/v1/documents?limit=50', { token })).body.documents as { status: string; error: string | null }[];
      return docs.every((x) => x.status === 'ready' || x.status === 'failed') ? docs.map((x) => [x.status, x.error]) : undefined;
    }, timeoutMs, 'every document settled');

  /**
   * A daemon whose store answers the requests `refused` picks with 503 SlowDown, as an overloaded S3 does: it pauses
   * ingest (logged once), asks the store again every few seconds (not back to back), fails no document, and once the store answers makes each one ready. A
   * 503 is the store's state, not the document's: before, each counted as an attempt (ingest.failed, retried with a
   * backoff, failed for good after the fifth).
   */
  async function waitsOutOverload(prefix: string, refused: (r: S3Request) => boolean, prepare: (daemon: Daemon) => void = () => undefined): Promise<void> {
    const log = await logS3Requests(rgw.endpoint);
    const busy = await startDaemon({ args: ['--storage', `s3://${rgw.bucket}/${prefix}`, '--ingest-workers', '1'], env: { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint }, timeoutMs: 60_000 });
    try {
      const owner = await addUser(busy);
      log.refuse(refused);
      const files = Array.from({ length: 4 }, (_, i) => ({ name: `${prefix}-${i}.txt`, bytes: Buffer.from(`${prose(`${prefix}-${i}`, 40)}\n`) }));
      expect((await uploadFiles(busy, owner.apiKey, files)).status).toBe(202);
      prepare(busy);
      await busy.logLine(/"event":"ingest\.storage_unavailable"/, 60_000);
      const pausedAt = Date.now();
      const refusedNow = () => log.requests().filter((r) => r.refused).length;
      // The requests of the try that found the store overloaded (its own retries included).
      const firstTry = refusedNow();
      // And asked again after the pause began: waited out, not given up on...
      await waitFor(async () => refusedNow() > firstTry || undefined, 30_000, 'the store asked again while it answers 503');
      // ... but not over and over: the tries of the 10 s after the first are spaced by the worker's backoff (1 s
      // doubling to 5 s: 3 of them), not run back to back.
      await new Promise((r) => setTimeout(r, pausedAt + 10_000 - Date.now()));
      expect(refusedNow() - firstTry, 'requests refused in the 10 s after the first try').toBeLessThanOrEqual(4 * firstTry);
      const during = await api(busy, '/api/v1/documents?limit=50', { token: owner.apiKey });
      expect((during.body.documents as { status: string }[]).map((x) => x.status)).not.toContain('failed');
      log.refuse(undefined);
      expect(await settled(busy, owner.apiKey, 120_000)).toEqual(files.map(() => ['ready', null]));
      await busy.logLine(/"event":"ingest\.storage_back"/, 30_000);
      expect(busy.stdout()).not.toMatch(/"event":"ingest\.(failed|database_unavailable)"/);
    } finally {
      log.refuse(undefined);
      await busy.stop();
      removeDir(busy.dataDir);
      await log.close();
    }
  }

  it.concurrent('waits out a store that answers 503 (overloaded) for originals: no attempt counted, no document failed', async () => {
    // Without the replica's own copies, so the originals are read from the store.
    const withoutCopies = (busy: Daemon) => {
      for (const name of readdirSync(join(busy.dataDir, 'cache', 'originals'))) rmSync(join(busy.dataDir, 'cache', 'originals', name));
    };
    await waitsOutOverload('overloaded', (r) => r.method === 'GET' && r.path.includes('/overloaded/files/'), withoutCopies);
  }, 300_000);

  it.concurrent("waits out a store that refuses LanceDB's writes of the chunks (503): no attempt counted, no document failed", async () => {
    // The chunks table lives in the same store, and LanceDB reports its failures in its own words (an object_store
    // retry error): they were taken for the document's fault.
    await waitsOutOverload('chunk-writes', (r) => r.method !== 'GET' && r.method !== 'HEAD' && r.path.includes('/chunk-writes/lancedb/'));
  }, 300_000);

  it('never writes the secret key to its output', () => {
    expect(d.stdout() + d.stderr()).not.toContain(rgw.secretAccessKey);
  });

  it('re-indexes from the same storage configuration (docsearch reindex --storage)', async () => {
    // A second data dir (--init: it holds no library yet): reindex takes its lock, and finds the index only through --storage.
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-reindex-s3-'));
    try {
      const res = await runCli(['reindex', '--init', '--data-dir', dataDir, '--storage', storage(), '--model-cache-dir', TEST_MODEL_CACHE], { env: rgw.env() });
      expect(res.stderr).toMatch(/already built with builtin:/);
      expect(res.code).toBe(0);
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('serve --storage refuses what it cannot use safely', () => {
  it('refuses a store that ignores conditional PUT (s3rver), saying why', async () => {
    type S3rverCtor = new (opts: object) => { run(): Promise<{ port: number }>; close(): Promise<void> };
    const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-s3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'lossy' }] });
    const { port } = await server.run();
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-refused-'));
    try {
      const env = { AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };
      const res = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE, '--storage', 's3://lossy/lib'], { env });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/does not honour conditional PUT/);
      expect(res.stderr).toMatch(/lose rows/);
      expect(res.stderr).not.toContain('listening');
    } finally {
      await server.close();
      removeDir(dir);
      removeDir(dataDir);
    }
  });

  it.each([
    [['--storage', 'http://bucket/x'], {}, /option "storage" \(from --storage\): unsupported storage "http:\/\/…"/],
    [['--storage', 's3://bucket/x'], { AWS_ENDPOINT_URL: 'http://s3.example.com' }, /plain http to another machine.*use https/],
    [['--storage', 's3://user:secret@bucket/x'], {}, /credentials do not go in the storage URL/],
    [['--storage', 's3://bucket/x'], { AWS_ACCESS_KEY_ID: 'only-one' }, /set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/],
    [[], { DOCSEARCH_STORAGE: 's3://a_b/x' }, /option "storage" \(from DOCSEARCH_STORAGE\): "a_b" is not a valid bucket name/],
  ])('exits 2 on a storage setting it cannot use: %j %j', async (args, env, message) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-badstorage-'));
    try {
      const res = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], { env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_ENDPOINT_URL: '', ...env } });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toContain('secret@');
    } finally {
      removeDir(dataDir);
    }
  });
});
