/**
 * Sources (npm run bench:sources): what a pass that finds nothing changed costs, and how long a change takes to
 * become searchable, through the built daemon (built-in model) and its REST API. One project holds a `folder`
 * source of N small text files and an `s3` source (Ceph RGW, started here) holding the same files: the S3 items are
 * the folder's documents (same bytes), so the library is ingested once. Each is measured after its first pass and
 * once ingestion is done, so nothing else runs in the daemon:
 *
 * - a no-change pass: its wall time (the pass's own `ms`) and the daemon's CPU over it (user + system, every thread,
 *   from /proc), for 3 passes each, median;
 * - a change: one item rewritten with a new word at the source, a pass asked for (`POST …/sync`), then the time
 *   until a keyword search finds the word: the pass, the document's re-indexing, the index commit. A source left to
 *   its schedule adds up to its `every`.
 *
 *   npm run bench:sources                      # 10,000 items
 *   npm run bench:sources -- --items 1000      # a quick check
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { addUser, api, type Daemon, startDaemon } from '../test/helpers/daemon.js';
import { sleep, waitFor } from '../test/helpers/eventually.js';
import { rgwUnavailable, startRgw } from '../test/helpers/rgw.js';
import { cpuMs } from './ingest-api.js';

const { values: flags } = parseArgs({ options: { items: { type: 'string', default: '10000' } } });
const ITEMS = Number(flags.items);
const PASSES = 3;
const HOUR = 3_600_000;

const text = (i: number, word = '') => `Note ${i}: a short text about the number ${i * 7919} and its neighbours in the sequence.${word ? ` ${word}` : ''}\n`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Measured {
  kind: string;
  passMs: number;
  cpuMs: number;
  changeMs: number;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'docsearch-bench-sources-'));
  const folder = join(root, 'notes');
  const keyFile = join(root, 'key');
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  mkdirSync(folder);
  for (let i = 0; i < ITEMS; i++) writeFileSync(join(folder, `note-${String(i).padStart(5, '0')}.txt`), text(i));
  const rgw = rgwUnavailable() === null ? await startRgw({ timeoutMs: 120_000 }) : null;
  if (!rgw) process.stderr.write(`no S3 figures: ${rgwUnavailable()}\n`);
  let d: Daemon | undefined;
  try {
    if (rgw) {
      const s3 = rgw.client();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = next++; i < ITEMS; i = next++) await s3.send(new PutObjectCommand({ Bucket: rgw.bucket, Key: `notes/note-${String(i).padStart(5, '0')}.txt`, Body: text(i) }));
        }),
      );
    }
    d = await startDaemon({ args: ['--source-roots', root, '--sources-allow-private', '--secrets-key-file', keyFile, '--sources-min-interval', '1'], timeoutMs: 120_000 });
    const daemon = d;
    const user = await addUser(daemon);
    const call = (path: string, opts: Parameters<typeof api>[2] = {}) => api(daemon, path, { token: user.apiKey, ...opts });
    const project = (await call('/api/v1/projects', { body: { name: 'bench sources' } })).body.id as string;
    const source = async (path: string) => (await call(`/api/v1/projects/${project}/sources/${path}`)).body;
    const passAfter = async (id: string, since: number) =>
      waitFor(async () => {
        const s = await source(id);
        return s.status !== 'syncing' && Date.parse(s.last_sync ?? '') >= since ? s : undefined;
      }, 2 * HOUR, `a pass of ${id}`, { intervalMs: 200 });
    const drained = async () =>
      waitFor(async () => {
        const busy = await Promise.all(['queued', 'processing'].map(async (status) => (await call(`/api/v1/documents?project_id=${project}&status=${status}&limit=1`)).body.documents.length));
        return busy.every((n) => n === 0);
      }, 2 * HOUR, 'ingestion to finish', { intervalMs: 2000 });
    const add = async (body: Record<string, unknown>) => {
      const t0 = Date.now();
      const res = await call(`/api/v1/projects/${project}/sources`, { body: { every: '1d', ...body } });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
      const first = await passAfter(res.body.id, t0);
      process.stderr.write(`${body.url}: first pass ${JSON.stringify(first.last_result)} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      return res.body.id as string;
    };
    const sources: { kind: string; id: string; change(word: string): Promise<void> }[] = [];
    sources.push({ kind: 'folder', id: await add({ url: `file://${folder}` }), change: async (word) => writeFileSync(join(folder, 'note-00007.txt'), text(7, word)) });
    const t0 = Date.now();
    await drained();
    process.stderr.write(`ingested ${ITEMS} documents in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    if (rgw) {
      const s3 = rgw.client();
      const options = { endpoint: rgw.endpoint, region: rgw.region, access_key_id: rgw.accessKeyId, secret_access_key: rgw.secretAccessKey };
      sources.push({
        kind: 's3',
        id: await add({ url: `s3://${rgw.bucket}/notes/`, options }),
        change: async (word) => void (await s3.send(new PutObjectCommand({ Bucket: rgw.bucket, Key: 'notes/note-00011.txt', Body: text(11, word) }))),
      });
      await drained();
    }

    const results: Measured[] = [];
    for (const s of sources) {
      const pass: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < PASSES; i++) {
        await sleep(500);
        const before = cpuMs(daemon.proc.pid!);
        const at = Date.now();
        await call(`/api/v1/projects/${project}/sources/${s.id}/sync`, { body: {} });
        const done = await passAfter(s.id, at);
        cpu.push(cpuMs(daemon.proc.pid!) - before);
        if (done.last_result.unchanged !== ITEMS) throw new Error(`a no-change pass of ${s.kind} found changes: ${JSON.stringify(done.last_result)}`);
        pass.push(done.last_result.ms);
      }
      const change: number[] = [];
      for (let i = 0; i < PASSES; i++) {
        const word = `zq${randomBytes(4).toString('hex')}`;
        const at = performance.now();
        await s.change(word);
        await call(`/api/v1/projects/${project}/sources/${s.id}/sync`, { body: {} });
        await waitFor(async () => (await call('/api/v1/search', { body: { query: word, project_ids: [project], mode: 'keyword', rerank: false } })).body.results?.length > 0, 10 * 60_000, `"${word}" searchable`, { intervalMs: 50 });
        change.push(performance.now() - at);
      }
      results.push({ kind: s.kind, passMs: median(pass), cpuMs: median(cpu), changeMs: median(change) });
    }
    process.stdout.write(
      [
        '',
        `bench:sources, ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, load average ${loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${ITEMS.toLocaleString('en-US')} items per source`,
        '',
        '| kind | no-change pass: wall ms | daemon CPU-ms | CPU-µs per item | a change searchable after (ms) |',
        '|---|---|---|---|---|',
        ...results.map((r) => `| ${r.kind} | ${r.passMs.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${((r.cpuMs * 1000) / ITEMS).toFixed(0)} | ${r.changeMs.toFixed(0)} |`),
        '',
      ].join('\n'),
    );
  } finally {
    await d?.stop();
    await rgw?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
