/**
 * Keyword and hybrid search in many languages (npm run bench:languages), through a real daemon (built binary,
 * built-in model) on the project's evaluation set (test/fixtures/languages/: 8 languages, 80 documents, English
 * look-alikes, real Debian text as distractors; test/helpers/language-set.ts).
 *
 * Prints top-1 and top-3 per language and kind of query (exact word, word variant, paraphrase, English question),
 * in keyword and hybrid mode; the queries that missed (`--misses`); the chunks table's size on disk; the daemon's
 * ingest CPU per chunk beside the model's own CPU per passage on the same stored texts; search p50 per mode.
 * `--json FILE` writes the figures; `--args "..."` passes daemon arguments; `--keep DIR` keeps the library in DIR and
 * searches it again on the next run with the same DIR. `--tokenizers`: LanceDB's own tokenizers against the
 * pre-analysed column, without a daemon (bench/language-tokenizers.ts). `--english`: the same build analysing everything
 * as English (the baseline of the search p50 acceptance: within 1.1× of it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { addUser, removeDir, startDaemon } from '../test/helpers/daemon.js';
import { loadLanguageSet, QUERY_KINDS, type QueryOutcome, runSetQueries, tally, uploadLanguageSet } from '../test/helpers/language-set.js';
import { compareTokenizers } from './language-tokenizers.js';
import { closeModel, cpuMs, documentTotals, modelLoaded, modelOnly, percentile, storedSearchTexts } from './ingest-api.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

const set = loadLanguageSet();
if (process.argv.includes('--tokenizers')) {
  console.log((await compareTokenizers(set)).join('\n'));
  process.exit(0);
}
// `--keep DIR`: the library stays in DIR, and a later run with the same DIR searches it again without ingesting.
const keep = arg('--keep');
const kept = keep && existsSync(join(keep, 'bench-user.json')) ? (JSON.parse(readFileSync(join(keep, 'bench-user.json'), 'utf8')) as { apiKey: string; ingestSeconds: number; ingestCpu: number }) : null;
// `--english`: the same build analysing every chunk and query as English (DOCSEARCH_ANALYSIS=english), the baseline
// the per-language analysis's search cost is compared with.
const english = process.argv.includes('--english');
const daemon = await startDaemon({
  args: (arg('--args') ?? '').split(' ').filter(Boolean),
  ...(keep ? { dataDir: keep } : {}),
  env: { DOCSEARCH_ANALYSIS: english ? 'english' : undefined },
});
try {
  const user = kept ?? (await addUser(daemon));
  await modelLoaded(daemon);
  const pid = daemon.proc.pid!;
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  if (!kept) await uploadLanguageSet(daemon, user.apiKey, set);
  const ingestSeconds = kept ? kept.ingestSeconds : (performance.now() - t0) / 1000;
  const ingestCpu = kept ? kept.ingestCpu : cpuMs(pid) - cpu0;
  if (keep && !kept) writeFileSync(join(keep, 'bench-user.json'), JSON.stringify({ apiKey: user.apiKey, ingestSeconds, ingestCpu }));
  const { chunks } = await documentTotals(daemon, user.apiKey);
  // Let the background index upkeep fold in what was written, so searches read the indexes they will read later.
  await new Promise((r) => setTimeout(r, 8000));
  for (let last = cpuMs(pid); ; ) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuMs(pid);
    if (now - last < 20) break;
    last = now;
  }
  const model = await modelOnly(await storedSearchTexts(daemon.dataDir, 400));
  const bytes = Number(execFileSync('du', ['-sb', join(daemon.dataDir, 'lancedb')], { encoding: 'utf8' }).split('\t')[0]);

  const results: Record<string, QueryOutcome[]> = {};
  const searchCpu: Record<string, number> = {};
  for (const mode of ['keyword', 'hybrid'] as const) {
    await runSetQueries(daemon, user.apiKey, set.queries.slice(0, 20), mode); // warm
    const c0 = cpuMs(pid);
    results[mode] = await runSetQueries(daemon, user.apiKey, set.queries, mode);
    searchCpu[mode] = (cpuMs(pid) - c0) / set.queries.length;
  }

  const pct = (a: number, n: number) => (n === 0 ? '–' : `${Math.round((100 * a) / n)}`);
  const lines: string[] = [];
  lines.push(`${english ? 'English-only analysis (--english). ' : ''}Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load ${loadavg()[0]!.toFixed(1)}; ${set.documents.length} documents + ${set.distractors.length} distractors, ${chunks} chunks, ${set.queries.length} queries.`);
  lines.push('');
  lines.push(`| language | ${QUERY_KINDS.map((k) => `${k} kw top-1/3 | ${k} hybrid top-1/3`).join(' | ')} |`);
  lines.push(`|---|${QUERY_KINDS.map(() => '---|---').join('|')}|`);
  const kw = tally(results.keyword!);
  const hy = tally(results.hybrid!);
  for (const language of [...kw.keys()].sort()) {
    const cells = QUERY_KINDS.map((k) => {
      const a = kw.get(language)!.get(k);
      const b = hy.get(language)!.get(k);
      return `${a ? `${pct(a.top1, a.n)}/${pct(a.top3, a.n)}` : '–'} | ${b ? `${pct(b.top1, b.n)}/${pct(b.top3, b.n)}` : '–'}`;
    });
    lines.push(`| ${language} | ${cells.join(' | ')} |`);
  }
  const all = (mode: string, kinds: readonly string[]) => {
    const os = results[mode]!.filter((o) => kinds.includes(o.query.kind));
    return `${pct(os.filter((o) => o.rank === 1).length, os.length)} %`;
  };
  lines.push('');
  lines.push(`Top-1, all languages: keyword mode on exact + variant ${all('keyword', ['exact', 'variant'])}; hybrid on own-language questions ${all('hybrid', ['paraphrase'])}, on every own-language query ${all('hybrid', ['exact', 'variant', 'paraphrase'])}, on English questions ${all('hybrid', ['cross'])}.`);
  lines.push(
    `Index: ${(bytes / 2 ** 20).toFixed(1)} MiB on disk. Ingest: ${chunks} chunks in ${ingestSeconds.toFixed(1)} s, daemon ${(ingestCpu / chunks).toFixed(1)} CPU-ms/chunk; the model alone ${model.cpuMsPerPassage.toFixed(1)} CPU-ms/passage: ratio ${(ingestCpu / chunks / model.cpuMsPerPassage).toFixed(2)}×.`,
  );
  for (const mode of ['keyword', 'hybrid']) {
    const ms = results[mode]!.map((o) => o.ms);
    lines.push(`Search ${mode}: p50 ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms, daemon ${searchCpu[mode]!.toFixed(1)} CPU-ms per search.`);
  }
  console.log(lines.join('\n'));
  if (process.argv.includes('--misses')) {
    for (const mode of ['keyword', 'hybrid']) {
      console.log(`\nMissed first place, ${mode}:`);
      for (const o of results[mode]!) if (o.rank !== 1) console.log(`  ${o.query.language} ${o.query.kind} "${o.query.q}" → ${o.query.doc}: rank ${o.rank ?? '>3'}; top ${o.top.join(', ')}`);
    }
  }
  const json = arg('--json');
  if (json) writeFileSync(json, JSON.stringify({ chunks, bytes, ingestCpu, modelCpuMsPerPassage: model.cpuMsPerPassage, searchCpu, results }, null, 1));
} finally {
  await closeModel();
  await daemon.stop();
  if (!keep) removeDir(daemon.dataDir);
}
