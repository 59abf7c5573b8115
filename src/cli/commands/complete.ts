import type { Command } from 'commander';
import { type ApiKey, DOCUMENT_PAGE, KEY_LIST, LABEL_LIST } from '../api-types.js';
import { SAVED_SEARCH_LIST } from './shared/saved-search.js';
import { type Candidate, complete, type Lookups } from '../completion/complete.js';
import type { Context } from '../context.js';
import { maskedKey } from './keys/list.js';
import { listAllProjects } from './shared/resolve-project.js';

/** A TAB must never hang: values come from the server within this time, or not at all. */
const LOOKUP_TIMEOUT_MS = 1500;

/** Requests one lookup keeps in flight: a library of many projects is not asked all at once, on one abort signal. */
const LOOKUP_CONCURRENCY = 4;

/** `fn` over `items`, in order, at most `limit` at a time. */
async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Asks the server the CLI would talk to; nothing on any error (no login, server down, slow). */
function fromServer(ask: (signal: AbortSignal) => Promise<Candidate[]>): Promise<Candidate[]> {
  const timeout = new Promise<Candidate[]>((resolve) => setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS).unref());
  const answer = ask(AbortSignal.timeout(LOOKUP_TIMEOUT_MS)).catch(() => []);
  return Promise.race([answer, timeout]);
}

function serverLookups(ctx: Context): Lookups {
  return {
    projects: () => fromServer(async (signal) => (await listAllProjects(ctx.http(), signal)).map((p) => ({ value: p.name, description: 'project' }))),
    documents: () =>
      fromServer(async (signal) => {
        // The newest page is enough to pick from (the API lists oldest first unless asked); `documents list` shows the rest.
        const { documents } = await ctx.http().get('/api/v1/documents', { query: { limit: 100, sort: '-uploaded' }, signal, shape: DOCUMENT_PAGE });
        return documents.map((d) => ({ value: d.id, description: `${d.path ?? d.filename} (${d.status})` }));
      }),
    labels: () =>
      fromServer(async (signal) => {
        const projects = await listAllProjects(ctx.http(), signal);
        const lists = await mapBounded(projects, LOOKUP_CONCURRENCY, (p) => ctx.http().get(`/api/v1/projects/${encodeURIComponent(p.id)}/labels`, { signal, shape: LABEL_LIST }));
        // A name several projects use is one label to a filter (names match in any case): offered once, counts summed.
        const counts = new Map<string, { name: string; n: number }>();
        for (const l of lists.flatMap((x) => x.labels)) {
          const seen = counts.get(l.name.toLowerCase());
          counts.set(l.name.toLowerCase(), { name: seen?.name ?? l.name, n: (seen?.n ?? 0) + l.document_count });
        }
        return [...counts.values()].map((l) => ({ value: l.name, description: `label (${l.n} document${l.n === 1 ? '' : 's'})` }));
      }),
    metadataKeys: () =>
      fromServer(async (signal) => {
        const { documents } = await ctx.http().get('/api/v1/documents', { query: { limit: 100, sort: '-uploaded' }, signal, shape: DOCUMENT_PAGE });
        const keys = new Set(documents.flatMap((d) => Object.keys((d.metadata ?? {}) as Record<string, unknown>)));
        return [...keys].sort().map((k) => ({ value: `${k}=`, description: 'metadata key' }));
      }),
    savedSearches: () =>
      fromServer(async (signal) => {
        const { saved_searches } = await ctx.http().get('/api/v1/saved-searches', { signal, shape: SAVED_SEARCH_LIST });
        return saved_searches.map((v) => ({ value: v.name, description: v.mine ? 'saved search' : `saved search by ${v.created_by}` }));
      }),
    keys: () =>
      fromServer(async (signal) => {
        const { keys } = await ctx.http().get('/api/v1/keys', { signal, shape: KEY_LIST });
        // A name two keys share cannot pick one (`keys revoke` refuses it): offer those keys by id.
        const shared = (k: ApiKey) => keys.filter((o) => o.name === k.name).length > 1;
        return keys.map((k) => ({ value: k.name && !shared(k) ? k.name : k.id, description: `API key ${maskedKey(k)}` }));
      }),
  };
}

/**
 * `docsearch __complete <words…> <current>`: what the completion scripts call on TAB (cobra's `__complete`).
 * Runs before commander parses anything (the words are a command line being typed, not options for us). Prints
 * one `value<TAB>description` line per candidate, or the single line `:files` for path completion.
 */
export async function runComplete(program: Command, words: string[], ctx: Context): Promise<void> {
  const result = await complete(program, words.length ? words : [''], serverLookups(ctx));
  ctx.io.stdout.write(result.files ? ':files\n' : result.candidates.map((c) => `${c.value}\t${c.description}\n`).join(''));
}
