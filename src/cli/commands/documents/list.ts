import { type Command, Option } from 'commander';
import type { WireFacetValue } from '../../../mcp/library.js';
import { DOCUMENT_PAGE, type DocumentRecord, type Project } from '../../api-types.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../../terminal/errors.js';
import type { ApiClient } from '../../http.js';
import { notice } from '../../../terminal/io.js';
import { emitJson } from '../../output/json.js';
import { count } from '../../output/plural.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { filtersToParams } from '../../../core/filter-params.js';
import type { FiltersInput } from '../../../core/filters.js';
import { facetsFlagHelp, facetsFromFlag, printFacets } from '../shared/facets.js';
import { addFilterFlags, type FilterFlags, filtersFromFlags } from '../shared/filter-flags.js';
import { listAllProjects, resolveProject } from '../shared/resolve-project.js';

export const STATUSES = ['queued', 'processing', 'ready', 'failed'] as const;
/** The API's sort values (GET /api/v1/documents `sort`); `-uploaded` is the web library's "Newest first". */
export const SORTS = ['-uploaded', 'uploaded', 'name', '-name', '-size', 'size'] as const;

export interface ListOptions {
  project?: string;
  status?: string;
  sort: string;
  json: boolean;
  /** The filter language (--type, --label, --meta …: shared/filter-flags.ts). */
  filters?: FiltersInput;
  /** Facets to count over the whole list (--facets), shown as a table after it. */
  facets?: string[];
}

type ListQuery = { project_id?: string; status?: string; path?: string; sort?: string; sha256?: string; [filter: string]: string | undefined };

/** Every document matching the filters, following next_cursor. */
export async function listDocuments(http: ApiClient, query: ListQuery): Promise<DocumentRecord[]> {
  return (await listCounted(http, query)).documents;
}

/** Every document matching the filters, and with `facets` their counts (asked of the first page: they cover every page). */
async function listCounted(http: ApiClient, query: ListQuery, facets?: string[]): Promise<{ documents: DocumentRecord[]; facets?: Record<string, WireFacetValue[]> }> {
  const documents: DocumentRecord[] = [];
  let counts: Record<string, WireFacetValue[]> | undefined;
  let cursor: string | undefined;
  do {
    const page = await http.get('/api/v1/documents', { query: { ...query, limit: 100, cursor, ...(facets?.length && !cursor ? { facets: facets.join(',') } : {}) }, shape: DOCUMENT_PAGE });
    documents.push(...page.documents);
    counts ??= page.facets;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { documents, ...(counts ? { facets: counts } : {}) };
}

export async function run(opts: ListOptions, ctx: Context): Promise<void> {
  const http = ctx.http();
  const project = opts.project ? await resolveProject(ctx, opts.project) : undefined;
  const { documents, facets } = await listCounted(http, { project_id: project?.id, status: opts.status, sort: opts.sort, ...Object.fromEntries(filtersToParams(opts.filters)) }, opts.facets);
  if (opts.json) return emitJson(ctx, { documents, ...(facets ? { facets } : {}) }, 'documents');
  // One projects list for every row's name (none needed when --project names the one project).
  const names = project ? new Map([[project.id, project.name]]) : await projectNames(http);
  printTable(ctx.io, {
    headers: ['ID', 'FILENAME', 'PROJECT', 'STATUS', 'CHUNKS', 'SIZE', 'UPDATED'],
    rows: documents.map((d) => [d.id, shownName(d), names.get(d.project_id) ?? d.project_id, statusText(d), d.chunk_count, { bytes: d.size_bytes }, { time: d.updated_at ?? d.created_at ?? null }]),
    now: ctx.now(),
    // On a narrow terminal the name is what a person reads: counts and times give way before it is cut.
    fit: { flexible: 'FILENAME', drop: ['CHUNKS', 'SIZE', 'UPDATED', 'PROJECT'] },
  });
  if (facets) printFacets(ctx, facets);
  const indexing = documents.filter((d) => d.status === 'queued' || d.status === 'processing').length;
  if (indexing > 0) notice(ctx.io, indexingNotice(indexing));
}

/** Project names by id; empty for a key that may not list projects (rows then show the id). */
export async function projectNames(http: ApiClient): Promise<Map<string, string>> {
  try {
    return new Map((await listAllProjects(http)).map((p: Project) => [p.id, p.name]));
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return new Map();
    throw err;
  }
}

/** The line under a listing while documents are queued or processing: they are not searchable yet. */
export const indexingNotice = (n: number, where = ''): string => `still indexing ${count(n, 'document')}${where}: not searchable until ready (\`docsearch upload --wait\` waits for them)`;

/** The caller's documents still queued or processing, in every project. */
export async function indexingDocuments(http: ApiClient): Promise<DocumentRecord[]> {
  return [...(await listDocuments(http, { status: 'queued' })), ...(await listDocuments(http, { status: 'processing' }))];
}

/**
 * What the FILENAME column shows: the document's name in the folder it was synced from (a name given since, on the
 * web or with `documents rename`, replaces the file's own in its path).
 */
export const shownName = (d: Pick<DocumentRecord, 'filename' | 'path'>): string => (d.path ? `${d.path.slice(0, d.path.lastIndexOf('/') + 1)}${d.filename}` : d.filename);

/** A document still being processed shows how far along it is: `processing 40%`. */
export const statusText = (d: DocumentRecord): string => (d.status === 'processing' && d.progress !== undefined ? `processing ${Math.round(d.progress * 100)}%` : d.status);

export function build(ctx: Context, runF: typeof run = run): Command {
  return addFilterFlags(
    defineCommand('list', {
    summary: 'list documents and their processing status',
    description:
      'List documents and their processing status (with how far along a document being processed is), newest first like the web library. ' +
      'FILENAME shows the path in the folder for documents uploaded from a folder (`upload FOLDER`, `--sync`, the web\'s folder upload); PROJECT the project each belongs to. ' +
      'A line on stderr says how many are still being indexed. ' +
      '--facets counts the whole list by type, label, year … (as `search --facets` does): a table after the documents, `facets` with --json.',
    examples: [
      'docsearch documents list',
      'docsearch documents list --project handbook --status failed',
      'docsearch documents list --json id,path,sha256 --jq ".documents[].path"',
      'docsearch documents list --label unpaid --type pdf --meta team=ops',
      'docsearch documents list --since 2025-01-01 --facets type,label,metadata.team',
    ],
  }),
  )
    .option('-p, --project <project>', 'only this project (name or id)')
    .addOption(new Option('--status <status>', 'only documents in this state').choices(STATUSES))
    .addOption(new Option('--sort <order>', 'order: uploaded, name or size; a leading - reverses').choices(SORTS).default('-uploaded'))
    .option('--facets [names]', facetsFlagHelp('the whole list', 'the documents'))
    .action((flags: FilterFlags & { project?: string; status?: string; sort: string; facets?: string | true }) => {
      const filters = filtersFromFlags(flags);
      const facets = facetsFromFlag(flags.facets);
      return runF({ project: flags.project, status: flags.status, sort: flags.sort, json: Boolean(ctx.globals().json), ...(filters ? { filters } : {}), ...(facets?.length ? { facets } : {}) }, ctx);
    });
}
