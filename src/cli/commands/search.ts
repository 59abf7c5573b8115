import { type Command, Option } from 'commander';
import type { SearchResponse, SearchResult } from '../api-types.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { notice, styles, writeJson } from '../io.js';
import { collect, defineCommand, intOption } from './shared/command.js';
import { findProject, listAllProjects } from './shared/resolve-project.js';

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

export async function run(opts: SearchOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  let projectIds: string[] | undefined;
  if (opts.projects.length > 0) {
    const all = await listAllProjects(http);
    projectIds = opts.projects.map((ref) => {
      const p = findProject(all, ref);
      if (!p) throw new UsageError(`project "${ref}" not found`, 'see your projects with `docsearch projects list`');
      return p.id;
    });
  }
  const body = { query: opts.query, limit: opts.limit, ...(projectIds ? { project_ids: projectIds } : {}), ...(opts.mode ? { mode: opts.mode } : {}), ...(opts.rerank ? {} : { rerank: false }) };
  const res = await http.post<SearchResponse>('/api/v1/search', body);
  // --json prints the API response as is, so scripts see exactly what the API returns.
  if (opts.json) return writeJson(ctx.io, res);
  const st = styles(ctx.io);
  if (res.results.length === 0) {
    notice(ctx.io, `no results for "${opts.query}"`);
    return;
  }
  res.results.forEach((r, i) => {
    const where = [pages(r), r.heading, r.ocr ? 'OCR' : null].filter(Boolean).join(' · ');
    ctx.io.stdout.write(`${st.bold(`${i + 1}. ${r.document.filename}`)}${where ? `  ${where}` : ''}  ${st.dim(`[${r.project.name}] score ${r.score.toFixed(3)}`)}\n`);
    const snippet = applyHighlights(r.text, r.highlights ?? [], st.enabled ? st.bold : (s) => s).replace(/\s+/g, ' ').trim();
    ctx.io.stdout.write(`   ${snippet}\n\n`);
  });
  notice(ctx.io, st.dim(`${res.results.length} result(s) in ${res.took_ms} ms`));
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('search', {
    summary: 'search your documents',
    description: 'Semantic search (vector + keyword, reranked) across your documents. Shows each result\'s document, page(s), heading and snippet; matches are bold on a terminal.',
    examples: ['docsearch search "parental leave policy"', 'docsearch search "termination clause" --project contracts --limit 5', 'docsearch search "vpn setup" --json | jq ".results[0].document.filename"'],
  })
    .argument('<query>', 'what to look for (words or a question)')
    .option('-n, --limit <n>', 'number of results (1–100)', intOption('--limit', 1, 100), 10)
    .option('-p, --project <project>', 'only this project (name or id); repeatable', collect, [])
    .addOption(new Option('--mode <mode>', 'retrieval mode').choices(['hybrid', 'vector', 'keyword']))
    .option('--no-rerank', 'skip the reranking stage (faster)')
    .action((query: string, flags: { limit: number; project: string[]; mode?: SearchOptions['mode']; rerank: boolean }) => {
      if (!query.trim()) throw new UsageError('the query is empty');
      return runF({ query, limit: flags.limit, projects: flags.project, mode: flags.mode, rerank: flags.rerank, json: Boolean(ctx.globals().json) }, ctx);
    });
}
