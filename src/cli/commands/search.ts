import { shownHeading } from '../../core/passage-heading.js';
import { type Command, Option } from 'commander';
import { citationLabel } from '../../core/citation-label.js';
import { codePointCount } from '../../core/code-points.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { EXCERPT_CHARS, excerpt } from '../../core/excerpt.js';
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from '../../core/search-limits.js';
import { type DocumentResult, JSON_FIELDS, SEARCH_DOCUMENTS, SEARCH_PASSAGES, type SearchDocument, type SearchPassage, type SearchResponse, type SearchResult } from '../api-types.js';
import type { WireShape } from '../wire-shape.js';
import type { Context } from '../context.js';
import { UsageError } from '../../terminal/errors.js';
import { isStdoutTTY, notice, styles, terminalWidth, warn } from '../../terminal/io.js';
import { emitJson, standsInForArgument } from '../output/json.js';
import { type Field, wrap, wrapFields } from '../output/wrap.js';
import type { FiltersInput } from '../../core/filters.js';
import { filtersToParams } from '../../core/filter-params.js';
import { facetsFlagHelp, facetsFromFlag, printFacets } from './shared/facets.js';
import { addFilterFlags, type FilterFlags, filtersFromFlags } from './shared/filter-flags.js';
import { openWeb } from './shared/open-web.js';
import { findSavedSearch, saveSearch } from './shared/saved-search.js';
import { collect, defineCommand, intOption } from './shared/command.js';
import { getDocuments } from './documents/get-document.js';
import { resolveProjects } from './shared/resolve-project.js';

export interface SearchOptions {
  /** The query; absent with --saved (the saved one's). */
  query?: string;
  /** --saved NAME: run this saved search; the command line's query, projects, filters and facets go over its own. */
  saved?: string;
  /** --save NAME: save this search under the name (shared with the project `share` names, when given). */
  save?: { name: string; share?: string };
  /** Results wanted (documents, or passages); Infinity with --all. */
  limit: number;
  projects: string[];
  /** Only these documents (ids, sync paths or file names). */
  documents: string[];
  mode?: 'hybrid' | 'vector' | 'keyword';
  rerank: boolean;
  /** One entry per document, or every passage in rank order. */
  view: 'documents' | 'passages';
  json: boolean;
  /** The filter language (--type, --label, --meta …: shared/filter-flags.ts). */
  filters?: FiltersInput;
  /** Facets to count over the whole result list (--facets), shown as a table after the results. */
  facets?: string[];
  /** --web: open this search on the web search page instead of running it here. */
  web?: boolean;
}

/**
 * Marks each [start,end) highlight range with `mark`, merging overlaps and clamping to the text; the text itself is
 * made terminal-safe piece by piece (a document's controls are shown, not obeyed), so the offsets still hold.
 */
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
    out += terminalSafe(text.slice(pos, start)) + mark(terminalSafe(text.slice(start, e)));
    pos = e;
  }
  return out + terminalSafe(text.slice(pos));
}

/** What a result cites: "p. 3", "slide 2", "rows 4–9 · Berths", "chapter 3" (page numbers from a server without `citation`). */
function cites(r: SearchPassage): string | null {
  if (r.citation) return citationLabel(r.citation);
  if (r.page_start == null) return null;
  return citationLabel({ unit: 'page', start: r.page_start, end: r.page_end ?? r.page_start });
}

/**
 * The part of a chunk worth reading: its answer, whole, then what follows (core/excerpt.ts, the window the web page
 * shows too), with "…" where text was left out. Returns the excerpt's text and the highlights shifted into it.
 */
export function passage(p: Pick<SearchPassage, 'text' | 'snippet' | 'highlights'>, max = EXCERPT_CHARS): { text: string; highlights: Array<[number, number]> } {
  const { text } = p;
  const highlights = p.highlights ?? [];
  const { start, end } = excerpt(text, p.snippet, highlights, max);
  const pre = start > 0 ? '… ' : '';
  const shifted = highlights
    .map(([s, e]) => [Math.max(s, start) - start + pre.length, Math.min(e, end) - start + pre.length] as [number, number])
    .filter(([s, e]) => e > s);
  return { text: `${pre}${text.slice(start, end)}${end < text.length ? ' …' : ''}`, highlights: shifted };
}

/** Where a result's score came from, in words: its rank in the vector and keyword lists, and the reranker's score. */
export function scoreSources(r: SearchPassage): string {
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

/** A document as people know it: the path it was synced from, else its file name (terminal-safe). */
export const documentLabel = (d: SearchDocument): string => terminalSafe(d.path ?? d.filename);

const items = (res: SearchResponse): (SearchResult | DocumentResult)[] => ('documents' in res ? res.documents : res.results);

/** "10 of 137 documents", "20 of at least 1,000 passages": what is shown of what is known to exist. */
function counted(shown: number, res: SearchResponse, unit: 'document' | 'passage'): string {
  const { value, relation } = res.total;
  const n = (x: number) => x.toLocaleString('en');
  const of = relation === 'eq' ? n(value) : `at least ${n(value)}`;
  return `${n(shown)} of ${of} ${unit}${value === 1 && relation === 'eq' ? '' : 's'}`;
}

/** Pages through the API until `opts.limit` results (or the last page): one request when it fits in one page. */
async function fetchAll(opts: SearchOptions, ctx: Context, body: Record<string, unknown>): Promise<SearchResponse> {
  const http = ctx.http();
  let res: SearchResponse | undefined;
  const all: (SearchResult | DocumentResult)[] = [];
  let took = 0;
  let pages = 0;
  let cursor: string | null = null;
  const shape: WireShape<SearchResponse> = body.group === 'document' ? SEARCH_DOCUMENTS : SEARCH_PASSAGES;
  do {
    const limit = Math.min(MAX_SEARCH_LIMIT, opts.limit - all.length);
    // A search changes nothing: asked again when it fails in flight.
    res = await http.post('/api/v1/search', { ...body, limit, ...(cursor ? { cursor } : {}) }, { retry: true, shape });
    pages++;
    took += res.took_ms;
    all.push(...items(res));
    cursor = res.next_cursor;
  } while (cursor && all.length < opts.limit);
  if (pages === 1) return res;
  return { ...res, took_ms: took, ...('documents' in res ? { documents: all as DocumentResult[] } : { results: all as SearchResult[] }) };
}

/** What a saved search brings to a run: its query, projects, mode, reranking, filters and facets (the view is the command line's). */
function savedParts(search: Record<string, unknown>): Record<string, unknown> {
  const keep = ['query', 'project_ids', 'mode', 'rerank', 'filters', 'facets'];
  return Object.fromEntries(Object.entries(search).filter(([k]) => keep.includes(k)));
}

/** The web search page's address for a search body: its names (q, project, document, mode, view) and the filters as GET /api/v1/documents takes them. */
function webSearchParams(body: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams({ q: String(body.query) });
  for (const id of (body.project_ids as string[] | undefined) ?? []) params.append('project', id);
  // The page searches within one document (its passages); a second --document has no place there.
  const [documentId] = (body.document_ids as string[] | undefined) ?? [];
  if (documentId) params.set('document', documentId);
  if (body.mode) params.set('mode', String(body.mode));
  if (body.group !== 'document') params.set('view', 'passages');
  for (const [k, v] of filtersToParams(body.filters as FiltersInput | undefined)) params.append(k, v);
  return params;
}

export async function run(opts: SearchOptions, ctx: Context): Promise<void> {
  const saved = opts.saved ? savedParts((await findSavedSearch(ctx, opts.saved)).search) : {};
  const projectIds = opts.projects.length > 0 ? (await resolveProjects(ctx, opts.projects)).map((p) => p.id) : undefined;
  const documentIds = opts.documents.length > 0 ? (await getDocuments(ctx, opts.documents)).map((d) => d.id) : undefined;
  const filters = saved.filters || opts.filters ? { ...(saved.filters as object | undefined), ...opts.filters } : undefined;
  const body: Record<string, unknown> = {
    ...saved,
    ...(opts.query ? { query: opts.query } : {}),
    ...(projectIds ? { project_ids: projectIds } : {}),
    ...(documentIds ? { document_ids: documentIds } : {}),
    ...(opts.mode ? { mode: opts.mode } : {}),
    ...(opts.rerank ? {} : { rerank: false }),
    ...(opts.view === 'documents' ? { group: 'document' } : {}),
    ...(filters ? { filters } : {}),
    ...(opts.facets?.length ? { facets: opts.facets } : {}),
  };
  const query = String(body.query);
  if (opts.save) {
    if (documentIds) throw new UsageError('--save keeps a search of projects, not of --document: leave --document out');
    const share = opts.save.share ? (await resolveProjects(ctx, [opts.save.share]))[0]!.id : undefined;
    const { group: _view, ...search } = body;
    const made = await saveSearch(ctx, opts.save.name, search, share);
    if (!opts.json) notice(ctx.io, `saved as "${made.name}"${share ? ` (shared with ${opts.save.share}'s members)` : ''}: run it again with \`docsearch search --saved ${JSON.stringify(made.name)}\``);
  }
  if (opts.web) return openWeb(ctx, `search?${webSearchParams(body)}`);
  const res = await fetchAll(opts, ctx, body);
  // --json prints the API response as is (one page), or the pages' results merged into the last page's response.
  if (opts.json) return 'documents' in res ? emitJson(ctx, res, 'search_documents', 'documents') : emitJson(ctx, res, 'results');
  for (const w of res.warnings ?? []) warn(ctx.io, w);
  const st = styles(ctx.io);
  const indexing = res.indexing > 0 ? `still indexing ${res.indexing} document${res.indexing === 1 ? '' : 's'}: results may be incomplete` : null;
  const shown = items(res);
  if (shown.length === 0) {
    notice(ctx.io, `no results for "${query}"${filters ? ' with these filters' : ''}`);
    if (indexing) notice(ctx.io, indexing);
    return;
  }
  const unit = 'documents' in res ? 'document' : 'passage';
  if (res.weak) notice(ctx.io, `no close matches for "${query}"; these are the nearest ${unit}s`);
  const width = terminalWidth(ctx.io);
  const mark = st.enabled ? (s: string) => st.bold(st.underline(s)) : (s: string) => s;
  const write = (lines: string[]) => ctx.io.stdout.write(`${lines.join('\n')}\n`);
  const text = (p: SearchPassage) => {
    const shownText = passage(p);
    return wrap(applyHighlights(shownText.text, shownText.highlights, mark), width, '   ');
  };
  const where = (p: SearchPassage) => terminalSafe([cites(p), shownHeading(p), p.ocr ? 'OCR' : null].filter(Boolean).join(' · '));
  // Not "matching": in meaning mode every passage can rank; this is how many of the document's passages the results hold.
  const hidden = 'documents' in res && !res.weak && res.documents.some((d) => d.matches > d.passages.length);
  if ('documents' in res) {
    res.documents.forEach((d, i) => {
      const more = res.weak || d.matches <= 1 ? '' : `${d.matches} passages in the results${d.matches > d.passages.length ? `, best ${d.passages.length} shown` : ''}`;
      write(wrapFields([{ text: `${i + 1}. ${documentLabel(d.document)}`, style: st.bold }, { text: `[${terminalSafe(d.project.name)}]`, style: st.dim }, { text: more, style: st.dim }], width, '   '));
      d.passages.forEach((p, pi) => {
        const head: Field[] = [{ text: where(p) }, { text: scoreSources(p), style: st.dim }];
        write([...(pi > 0 ? [''] : []), ...wrapFields(head, width - 3, '').map((l) => `   ${l}`), ...text(p)]);
      });
      write(['']);
    });
  } else {
    res.results.forEach((r, i) => {
      const sources = scoreSources(r);
      const fields: Field[] = [
        { text: `${i + 1}. ${documentLabel(r.document)}`, style: st.bold },
        { text: where(r) },
        { text: `[${terminalSafe(r.project.name)}]${sources ? ` ${sources}` : ''}`, style: st.dim },
      ];
      write([...wrapFields(fields, width, '   '), ...text(r), '']);
    });
  }
  const more = shown.length < res.total.value || res.next_cursor ? '; --limit N or --all for more' : '';
  notice(ctx.io, `${counted(shown.length, res, unit)} in ${res.took_ms} ms${more}`, st.dim);
  if (hidden) notice(ctx.io, 'every passage of one document: add --document NAME', st.dim);
  if (indexing) notice(ctx.io, indexing);
  if (res.facets) printFacets(ctx, res.facets);
}

/**
 * The usage error for a query typed as several arguments (`docsearch search how long is a loan`): the quoted form to
 * type. Under --json, a word after it that is none of the results' fields was taken as a query word: say so.
 */
function severalWords(words: string[], json: boolean): UsageError {
  const fields = json ? `; after --json, only the results' fields are fields (${JSON_FIELDS.results.join(', ')}), other words are the query's` : '';
  return new UsageError(`search takes one query, and got ${words.length} words: ${words.map((w) => JSON.stringify(w)).join(' ')}`, `quote a query of several words: docsearch search ${JSON.stringify(words.join(' '))}${fields}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  const cmd = addFilterFlags(
    defineCommand('search', {
    summary: 'search your documents',
    description:
      'Search your documents: vector similarity and keyword matching, fused by their normalised scores, then reranked by the server\'s reranker when one is configured (none by default). ' +
      'On a terminal, results are grouped by document (its best passages under it); through a pipe, or with --passages, every passage is listed in rank order. ' +
      'Shows each result\'s document (its sync path when it has one), page(s), heading, where it ranked in the vector and keyword lists, and the passage around the match, wrapped to the terminal; ' +
      'matches are bold and underlined on a terminal (not with NO_COLOR or through a pipe; FORCE_COLOR forces them). ' +
      'A query with no keyword match and nothing close in meaning says "no close matches" and shows only the nearest few. ' +
      '--json prints the API response (passages, or documents with --documents); when --limit or --all needs several pages, their results are merged into the last page\'s response.',
    examples: [
      'docsearch search "parental leave policy"',
      'docsearch search "termination clause" --project contracts --limit 5',
      'docsearch search "invoice" --passages --all',
      'docsearch search "notice period" --document handbook.pdf',
      'docsearch search "vpn setup" --json | jq ".results[0].document.filename"',
      'docsearch search "supplier" --type pdf --label unpaid --meta "year>=2020" --facets type,label',
      'docsearch search "supplier contract" --type pdf --since 2025-01-01 --until 2025-12-31 --path contracts/ --facets',
      'docsearch search "invoice" --label unpaid --save "unpaid invoices" --share finance',
      'docsearch search --saved "unpaid invoices" --since 2026-01-01',
      'docsearch search "notice period" --project contracts --web',
    ],
  }),
  )
    .argument('[query]', 'what to look for (words or a question); with --saved, instead of the saved one')
    .option('-n, --limit <n>', 'most results to show: documents, or passages with --passages (pages through the API as needed)', intOption('--limit', 1, 100_000), 10)
    .option('--all', 'show every result (page until the last)')
    .option('-p, --project <project>', 'only this project (name or id); repeatable', collect, [])
    .option('-d, --document <document>', 'only this document (id, sync path or file name), e.g. to see all its passages; repeatable', collect, [])
    .addOption(new Option('--mode <mode>', 'retrieval mode').choices(['hybrid', 'vector', 'keyword']))
    .addOption(new Option('--passages', 'list every passage in rank order (the default through a pipe)').conflicts('documents'))
    .addOption(new Option('--documents', 'group results by document (the default on a terminal)').conflicts('passages'))
    .option('--no-rerank', "skip the server's reranker, if one is configured (faster)")
    .option('--facets [names]', facetsFlagHelp('the whole result list', 'the results'))
    .option('--saved <name>', 'run your saved search of this name, as written or in any case (or one shared with you; its id when names tie); a query, projects, filters or facets given here go over its own')
    .option('--save <name>', 'save this search (query, projects, filters, facets, mode) under a name, then run it')
    .option('--share <project>', "with --save, share it with this project's members (you edit the project)")
    .option('--web', 'open this search on the web search page instead (prints its URL when no browser opens)')
    // Words past the query get a usage error that says how to quote them (commander's says only "too many arguments").
    .allowExcessArguments(true)
    .action((query: string | undefined, flags: FilterFlags & { web?: boolean; saved?: string; save?: string; share?: string; limit: number; all?: boolean; project: string[]; document: string[]; mode?: SearchOptions['mode']; rerank: boolean; passages?: boolean; documents?: boolean; facets?: string | true }, self: Command) => {
      if (self.args.length > 1) throw severalWords(self.args, Boolean(ctx.globals().json));
      if (query === undefined && !flags.saved) throw new UsageError('name what to look for: docsearch search QUERY, or run a saved search with --saved NAME');
      if (flags.share && !flags.save) throw new UsageError('--share goes with --save NAME');
      // The web page searches within one document at most: opening it for the first of several would show another search.
      if (flags.web && flags.document.length > 1) throw new UsageError(`--web opens the web search page, which searches within one document: got ${flags.document.length} --document`, 'give --web one --document, or leave --web out to search them all here');
      if (query !== undefined && !query.trim()) throw new UsageError('the query is empty');
      // Characters as the API counts them, code points: an emoji is one, not its two UTF-16 units.
      const chars = query === undefined ? 0 : codePointCount(query.trim());
      if (chars > MAX_QUERY_CHARS) throw new UsageError(`the query is ${chars} characters long; at most ${MAX_QUERY_CHARS} are allowed`, 'search for the key sentence or words instead');
      const json = Boolean(ctx.globals().json);
      // Grouped on a terminal; through a pipe and for --json the flat list, so scripts get one shape. --web's page is
      // grouped unless --passages says otherwise, wherever its URL is printed.
      const view = flags.passages ? 'passages' : flags.documents || flags.web || (!json && isStdoutTTY(ctx.io)) ? 'documents' : 'passages';
      const filters = filtersFromFlags(flags, Boolean(flags.save));
      const facets = facetsFromFlag(flags.facets);
      const saving = flags.save ? { save: { name: flags.save, ...(flags.share ? { share: flags.share } : {}) } } : {};
      return runF({ ...(query !== undefined ? { query } : {}), ...(flags.saved ? { saved: flags.saved } : {}), ...saving, limit: flags.all ? Infinity : flags.limit, projects: flags.project, documents: flags.document, mode: flags.mode, rerank: flags.rerank, view, json, ...(filters ? { filters } : {}), ...(facets?.length ? { facets } : {}), ...(flags.web ? { web: true } : {}) }, ctx);
    });
  // With --saved the query is the saved one's: the word after --json may then be fields (`--saved weekly --json score`).
  return standsInForArgument(cmd, '--saved');
}
