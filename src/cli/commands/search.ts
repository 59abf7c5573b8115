import { type Command, Option } from 'commander';
import type { SearchResponse, SearchResult } from '../api-types.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { notice, styles, terminalWidth, warn } from '../io.js';
import { emitJson } from '../output/json.js';
import { wrap } from '../output/wrap.js';
import { collect, defineCommand, intOption } from './shared/command.js';
import { findProject, listAllProjects, projectNotFound } from './shared/resolve-project.js';

export interface SearchOptions {
  query: string;
  limit: number;
  projects: string[];
  mode?: 'hybrid' | 'vector' | 'keyword';
  rerank: boolean;
  json: boolean;
}

/** Marks each [start,end) highlight range with `mark`, merging overlaps and clamping to the text. */
export function applyHighlights(text: string, highlights: Array<[number, number]>, mark: (s: string) => string): string {
  const ranges = highlights
    .map(([s, e]) => [Math.max(0, s), Math.min(text.length, e)] as [number, number])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [s, e] of ranges) {
    if (e <= pos) continue;
    const start = Math.max(s, pos);
    out += text.slice(pos, start) + mark(text.slice(start, e));
    pos = e;
  }
  return out + text.slice(pos);
}

function pages(r: SearchResult): string | null {
  if (r.page_start == null) return null;
  return r.page_end != null && r.page_end !== r.page_start ? `pp. ${r.page_start}–${r.page_end}` : `p. ${r.page_start}`;
}

/** At most this many characters of a chunk are shown: the passage around its matches. */
export const PASSAGE_CHARS = 320;
/** The API takes queries of at most this many characters (after trimming). */
export const MAX_QUERY_CHARS = 2000;

/**
 * The part of a chunk worth reading: a window of about PASSAGE_CHARS around the first highlight (the API marks
 * the best-matching sentence and the query's words), cut at word boundaries with "…" where text was left out.
 * Returns the passage and its highlights shifted into it.
 */
export function passage(text: string, highlights: Array<[number, number]>, max = PASSAGE_CHARS): { text: string; highlights: Array<[number, number]> } {
  if (text.length <= max) return { text, highlights };
  const first = [...highlights].sort((a, b) => a[0] - b[0])[0];
  let start = first ? Math.max(0, first[0] - Math.floor(max / 4)) : 0;
  let end = Math.min(text.length, start + max);
  start = Math.max(0, Math.min(start, end - max));
  if (start > 0) {
    const space = text.indexOf(' ', start);
    if (space >= 0 && space < (first?.[0] ?? end)) start = space + 1;
  }
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  const pre = start > 0 ? '… ' : '';
  const shifted = highlights
    .map(([s, e]) => [Math.max(s, start) - start + pre.length, Math.min(e, end) - start + pre.length] as [number, number])
    .filter(([s, e]) => e > s);
  return { text: `${pre}${text.slice(start, end)}${end < text.length ? ' …' : ''}`, highlights: shifted };
}

/** Where a result's score came from, in words: its rank in the vector and keyword lists, and the reranker's score. */
export function scoreSources(r: SearchResult): string {
  const s = r.scores;
  if (!s) return '';
  return [
    s.vector ? `vector #${s.vector.rank}` : null,
    s.keyword ? `keyword #${s.keyword.rank}` : null,
    s.rerank !== undefined ? `reranked ${s.rerank.toFixed(2)}` : null,
  ]
    .filter(Boolean)
    .join(' · ');
}

export async function run(opts: SearchOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  let projectIds: string[] | undefined;
  if (opts.projects.length > 0) {
    const all = await listAllProjects(http);
    projectIds = opts.projects.map((ref) => {
      const p = findProject(all, ref);
      if (!p) throw projectNotFound(ref, http.baseUrl);
      return p.id;
    });
  }
  const body = { query: opts.query, limit: opts.limit, ...(projectIds ? { project_ids: projectIds } : {}), ...(opts.mode ? { mode: opts.mode } : {}), ...(opts.rerank ? {} : { rerank: false }) };
  const res = await http.post<SearchResponse>('/api/v1/search', body);
  // --json prints the API response as is, so scripts see exactly what the API returns.
  if (opts.json) return emitJson(ctx, res, 'results');
  for (const w of res.warnings ?? []) warn(ctx.io, w);
  const st = styles(ctx.io);
  if (res.results.length === 0) {
    notice(ctx.io, `no results for "${opts.query}"`);
    return;
  }
  const width = terminalWidth(ctx.io);
  const mark = st.enabled ? (s: string) => st.bold(st.underline(s)) : (s: string) => s;
  res.results.forEach((r, i) => {
    const where = [pages(r), r.heading, r.ocr ? 'OCR' : null].filter(Boolean).join(' · ');
    const sources = scoreSources(r);
    ctx.io.stdout.write(`${st.bold(`${i + 1}. ${r.document.filename}`)}${where ? `  ${where}` : ''}  ${st.dim(`[${r.project.name}]${sources ? ` ${sources}` : ''}`)}\n`);
    const shown = passage(r.text, r.highlights ?? []);
    const lines = wrap(applyHighlights(shown.text, shown.highlights, mark), width, '   ');
    ctx.io.stdout.write(`${lines.join('\n')}\n\n`);
  });
  notice(ctx.io, st.dim(`${res.results.length} result(s) in ${res.took_ms} ms`));
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('search', {
    summary: 'search your documents',
    description:
      'Search your documents: vector similarity and keyword matching, fused by rank, then reranked by the server\'s reranker when one is configured (none by default). ' +
      'Shows each result\'s document, page(s), heading, where it ranked in the vector and keyword lists, and the passage around the match, wrapped to the terminal; ' +
      'matches are bold and underlined on a terminal (not with NO_COLOR or through a pipe; FORCE_COLOR forces them).',
    examples: ['docsearch search "parental leave policy"', 'docsearch search "termination clause" --project contracts --limit 5', 'docsearch search "vpn setup" --json | jq ".results[0].document.filename"'],
  })
    .argument('<query>', 'what to look for (words or a question)')
    .option('-n, --limit <n>', 'number of results (1–100)', intOption('--limit', 1, 100), 10)
    .option('-p, --project <project>', 'only this project (name or id); repeatable', collect, [])
    .addOption(new Option('--mode <mode>', 'retrieval mode').choices(['hybrid', 'vector', 'keyword']))
    .option('--no-rerank', "skip the server's reranker, if one is configured (faster)")
    .action((query: string, flags: { limit: number; project: string[]; mode?: SearchOptions['mode']; rerank: boolean }) => {
      if (!query.trim()) throw new UsageError('the query is empty');
      if (query.trim().length > MAX_QUERY_CHARS) throw new UsageError(`the query is ${query.trim().length} characters long; at most ${MAX_QUERY_CHARS} are allowed`, 'search for the key sentence or words instead');
      return runF({ query, limit: flags.limit, projects: flags.project, mode: flags.mode, rerank: flags.rerank, json: Boolean(ctx.globals().json) }, ctx);
    });
}
