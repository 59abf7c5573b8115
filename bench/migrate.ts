/**
 * `docsearch migrate` throughput (npm run bench:migrate): a real library built by a real daemon (built binary,
 * built-in model) from ../shared/eval/docs, moved into shared mode (PostgreSQL 15 and Ceph RGW, both started
 * here) and back into a new data directory, each way verified. Per direction: rows (database rows plus chunk-index
 * rows) per second, MB/s (originals plus index rows as Arrow holds them), the time of verification, this process's
 * CPU (all threads: the copy runs in-process through the command's own code) and peak RSS.
 *
 * The library is built once and kept (ingesting the corpus takes a while): `--library DIR` names where (default
 * $TMPDIR/docsearch-bench-migrate-library), and a library there is reused when it was built from the same files.
 * Searches must not change: a fixed set of queries is run by a daemon on the library before it moves, on the
 * shared copy, and on the copy moved back, as the library's own user (its API key is kept beside the library), and
 * the three answers are compared (chunk ids in order, text, scores to 1e-5).
 *
 *   npm run bench:migrate                    # the 80-file corpus
 *   npm run bench:migrate -- --limit 10      # 10 files spread over the corpus: a quick check
 *   npm run bench:migrate -- --library /var/lib/docsearch --no-build   # an existing library, left as it is
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { processIO } from '../src/terminal/io.js';
import { type Progress, progressOn } from '../src/admin/migrate/progress.js';
import { type MigrationSummary, runMigration } from '../src/admin/migrate/run.js';
import type { LibrarySpec } from '../src/admin/migrate/libraries.js';
import { addUser, api, SHARED, type StartOptions, startDaemon } from '../test/helpers/daemon.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { startRgw } from '../test/helpers/rgw.js';
import { uploadFiles } from '../test/ingest/pipeline/helpers.js';

const { values: flags } = parseArgs({
  options: {
    docs: { type: 'string', default: join(SHARED, 'eval/docs') },
    limit: { type: 'string' },
    library: { type: 'string', default: join(tmpdir(), 'docsearch-bench-migrate-library') },
    'no-build': { type: 'boolean', default: false },
  },
});
const MB = 1024 * 1024;
const MARKER = 'bench-migrate-files.json';
/** The library user's API key (the searches need the user's own credential), kept beside the library. */
const KEY_FILE = 'bench-migrate-key';
const QUERIES = [
  'tax form instructions for self-employed income',
  'free culture and copyright',
  'table of contents',
  'energy consumption of buildings',
  'invoice total amount due',
  'termination of the contract',
  'patients in the clinical study',
  'training a neural network',
  'Molière comedy',
  'references and bibliography',
  'scanned page of a letter',
  'installation guide',
];

function corpusFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(pdf|docx|txt)$/i.test(name)) out.push(path);
    }
  };
  walk(root);
  if (!flags.limit) return out;
  // Spread over the corpus (every kind of file), not its first folder.
  const step = out.length / Number(flags.limit);
  return Array.from({ length: Math.min(out.length, Number(flags.limit)) }, (_, i) => out[Math.floor(i * step)]!);
}

/** Ingests the files through a real daemon into `dir`, one upload at a time, each awaited (ready or failed). */
async function buildLibrary(dir: string, files: string[]): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  const d = await startDaemon({ dataDir: dir, args: ['--max-upload-mb', '50'], timeoutMs: 120_000 });
  try {
    const user = await addUser(d);
    writeFileSync(join(dir, KEY_FILE), user.apiKey, { mode: 0o600 });
    let n = 0;
    for (const file of files) {
      const res = await uploadFiles(d, user.apiKey, [{ name: file.split('/').pop()!, bytes: readFileSync(file) }], { query: '?wait=true' });
      // The corpus holds files the daemon refuses at upload (binary junk named .txt): 415, like a user would get.
      if (res.status !== 200 && res.status !== 415) throw new Error(`uploading ${file} answered ${res.status}: ${JSON.stringify(res.body)}`);
      const status = res.status === 415 ? 'refused (415)' : (res.body.documents[0].status as string);
      process.stderr.write(`ingested ${++n}/${files.length} ${relative(flags.docs, file)}: ${status}\n`);
    }
  } finally {
    await d.stop();
  }
}

/** Progress on stderr, and the wall time of every step by its label. */
function timedProgress(): { progress: Progress; ms: Map<string, number> } {
  const inner = progressOn(processIO());
  const ms = new Map<string, number>();
  return {
    ms,
    progress: {
      line: (text) => inner.line(text),
      step(label, total, unit) {
        const step = inner.step(label, total, unit);
        const t0 = performance.now();
        return {
          add: (n, bytes) => step.add(n, bytes),
          end(summary) {
            step.end(summary);
            ms.set(label, (ms.get(label) ?? 0) + performance.now() - t0);
          },
        };
      },
    },
  };
}

interface Hit {
  chunk_id: string;
  text: string;
  score: number;
  /** Cosine similarity and BM25, where the passage was in that list. */
  similarity: number | null;
  bm25: number | null;
}

/** The top 10 of every query, searched through a daemon started on `start` and stopped again. */
async function searchesOn(start: StartOptions, token: string): Promise<Hit[][]> {
  const d = await startDaemon({ ...start, timeoutMs: 120_000 });
  try {
    const out: Hit[][] = [];
    for (const query of QUERIES) {
      const res = await api(d, '/api/v1/search', { token, body: { query, limit: 10 } });
      if (res.status !== 200) throw new Error(`search for "${query}" answered ${res.status}: ${JSON.stringify(res.body)}`);
      type Result = { chunk_id: string; text: string; score: number; scores: { vector?: { similarity: number }; keyword?: { bm25: number } } };
      out.push((res.body.results as Result[]).map((r) => ({ chunk_id: r.chunk_id, text: r.text, score: r.score, similarity: r.scores.vector?.similarity ?? null, bm25: r.scores.keyword?.bm25 ?? null })));
    }
    return out;
  } finally {
    await d.stop();
  }
}

/** What differs between two runs of the queries (empty: the same chunks in the same order, scores within 1e-5). */
function differences(label: string, got: Hit[][], want: Hit[][]): string[] {
  return QUERIES.flatMap((query, q) => {
    const a = got[q]!;
    const b = want[q]!;
    const same = a.length === b.length && a.every((h, i) => h.chunk_id === b[i]!.chunk_id && h.text === b[i]!.text && Math.abs(h.score - b[i]!.score) < 1e-5);
    const show = (hits: Hit[]) => hits.map((h) => `${h.chunk_id.slice(0, 8)}@${h.score.toFixed(5)} (cos ${h.similarity?.toFixed(5) ?? '–'}, bm25 ${h.bm25?.toFixed(3) ?? '–'})`).join(', ');
    return same ? [] : [`${label}: "${query}" gave ${show(a)}\n  instead of ${show(b)}`];
  });
}

const vmHwmMb = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;

interface Measured {
  direction: string;
  summary: MigrationSummary;
  wallS: number;
  cpuS: number;
  verifyS: number;
  rows: number;
  /** Peak RSS of this process so far (the way back includes the way there). */
  peakMb: number;
}

async function measure(direction: string, source: LibrarySpec, target: LibrarySpec, env: NodeJS.ProcessEnv): Promise<Measured> {
  const { progress, ms } = timedProgress();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const summary = await runMigration({ source, target, env, dryRun: false, batchRows: 10_000, progress });
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (!summary.verification?.ok) throw new Error(`${direction}: verification failed:\n${summary.verification?.differences.join('\n')}`);
  const verifyS = [...ms].filter(([label]) => label.startsWith('checking')).reduce((s, [, v]) => s + v, 0) / 1000;
  const rows = summary.tables.reduce((n, t) => n + t.rows, 0) + (summary.index?.chunks?.rows ?? 0) + (summary.index?.chunk_windows?.rows ?? 0);
  return { direction, summary, wallS, cpuS: (cpu.user + cpu.system) / 1e6, verifyS, rows, peakMb: vmHwmMb() };
}

async function main(): Promise<void> {
  const files = corpusFiles(flags.docs);
  const library = flags.library;
  const want = JSON.stringify(files.map((f) => relative(flags.docs, f)));
  if (!flags['no-build']) {
    const marker = join(library, MARKER);
    if (existsSync(marker) && readFileSync(marker, 'utf8') === want && existsSync(join(library, KEY_FILE))) process.stderr.write(`reusing the library in ${library}\n`);
    else {
      process.stderr.write(`building a library of ${files.length} files in ${library}\n`);
      await buildLibrary(library, files);
      writeFileSync(marker, want);
    }
  }
  const keyFile = join(library, KEY_FILE);
  const token = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : null;
  const [pg, rgw] = await Promise.all([startPostgres(), startRgw({ timeoutMs: 120_000 })]);
  const back = mkdtempSync(join(tmpdir(), 'docsearch-bench-migrate-back-'));
  const replicaDir = mkdtempSync(join(tmpdir(), 'docsearch-bench-migrate-replica-'));
  try {
    const env = { ...process.env, ...rgw.env() };
    const shared: LibrarySpec = { database: await pg.createDatabase(), storage: `s3://${rgw.bucket}/library` };
    const before = token ? await searchesOn({ dataDir: library }, token) : null;
    const results = [await measure('data dir → PostgreSQL + RGW', { dataDir: library }, shared, env), await measure('PostgreSQL + RGW → data dir', shared, { dataDir: back }, env)];
    let searches = `searches: not compared (no API key of the library's user in ${keyFile}: a library the bench did not build)`;
    if (token && before) {
      const onShared = await searchesOn({ dataDir: replicaDir, databaseUrl: shared.database!, env: rgw.env(), args: ['--storage', shared.storage!] }, token);
      const onBack = await searchesOn({ dataDir: back }, token);
      const wrong = [...differences('shared', onShared, before), ...differences('moved back', onBack, before)];
      const hits = before.reduce((n, h) => n + h.length, 0);
      searches = wrong.length === 0
        ? `searches: ${QUERIES.length} queries (${hits} results in all) give the same chunks in the same order, scores within 1e-5, before the move, on PostgreSQL + RGW and moved back`
        : `searches DIFFER:\n${wrong.join('\n')}`;
      if (wrong.length > 0) process.exitCode = 1;
    }
    const s = results[0]!.summary;
    process.stdout.write(
      [
        '',
        `bench:migrate, ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, load average ${loadavg()[0]!.toFixed(1)}, Node ${process.version}`,
        `library: ${files.length} files, ${s.originals!.files} originals (${(s.originals!.bytes / MB).toFixed(1)} MB), ${s.tables.reduce((n, t) => n + t.rows, 0)} database rows, ` +
          `${s.index?.chunks?.rows ?? 0} chunks (${s.index?.embedder_id}, ${s.index?.dimension} dims), ${s.index?.chunk_windows?.rows ?? 0} reranker windows`,
        '',
        '| direction | rows | MB moved | wall s | rows/s | MB/s | verify s | CPU s | peak RSS MB |',
        '|---|---|---|---|---|---|---|---|---|',
        ...results.map(
          (r) =>
            `| ${r.direction} | ${r.rows} | ${(r.summary.bytes_moved / MB).toFixed(1)} | ${r.wallS.toFixed(1)} | ${(r.rows / r.wallS).toFixed(0)} | ${(r.summary.bytes_moved / MB / r.wallS).toFixed(2)} | ${r.verifyS.toFixed(1)} | ${r.cpuS.toFixed(1)} | ${r.peakMb.toFixed(0)} |`,
        ),
        '',
        searches,
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(back, { recursive: true, force: true });
    rmSync(replicaDir, { recursive: true, force: true });
    await rgw.stop();
    await pg.destroy();
  }
}

await main();
