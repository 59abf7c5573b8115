/**
 * Saved searches (docs/api.md#saved-searches) for `docsearch search --saved NAME`, `--save NAME` and
 * `docsearch saved-searches`: found by name through GET /api/v1/saved-searches — the caller's own first, then one
 * shared with a project they read.
 */
import type { Context } from '../../context.js';
import { CliError } from '../../../terminal/errors.js';
import { lowerKey } from '../../../core/name-spellings.js';
import { terminalSafe } from '../../../core/unsafe-text.js';
import { shape } from '../../wire-shape.js';

export interface SavedSearchRecord {
  id: string;
  name: string;
  search: Record<string, unknown>;
  project_id: string | null;
  created_by: string;
  mine: boolean;
}

export const SAVED_SEARCH = shape<SavedSearchRecord>({ id: 'string', name: 'string', search: 'object', mine: 'boolean' });
export const SAVED_SEARCH_LIST = shape<{ saved_searches: SavedSearchRecord[] }>({ saved_searches: [SAVED_SEARCH.fields] });

/** Every saved search the caller sees: their own and those shared with projects they read. */
export async function listSavedSearches(ctx: Context): Promise<SavedSearchRecord[]> {
  return (await ctx.http().get('/api/v1/saved-searches', { shape: SAVED_SEARCH_LIST })).saved_searches;
}

/**
 * The saved search of this name among `all`: the name as written first (the server keeps "Ärger" and "ärger" apart:
 * its any-case folds A–Z only), else in any case and either Unicode spelling (a name pasted from a Mac's file name comes
 * decomposed, "e" + U+0301, one typed composed); the caller's own before one shared with them; or the one of this id
 * (`srch_…`), which tells apart those the name alone cannot. Several of the caller's own differing beyond A–Z's case,
 * or several shared ones, are refused, naming them.
 */
export function pickSavedSearch(ctx: Context, all: SavedSearchRecord[], name: string): SavedSearchRecord {
  const exact = all.filter((v) => v.name === name);
  const named = exact.length > 0 ? exact : all.filter((v) => lowerKey(v.name) === lowerKey(name));
  const own = named.filter((v) => v.mine);
  if (own.length === 1) return own[0]!;
  if (own.length > 1) {
    const lines = own.map((v) => `  ${v.id}  ${terminalSafe(v.name)}`).join('\n');
    throw new CliError(`${own.length} of your saved searches are named "${terminalSafe(name)}" in some case:\n${lines}`, undefined, 'name one exactly as it is written, or by its id');
  }
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    const lines = named.map((v) => `  ${v.id}  by ${terminalSafe(v.created_by)}`).join('\n');
    throw new CliError(`${named.length} saved searches shared with you are named "${terminalSafe(name)}":\n${lines}`, undefined, 'name one by its id (docsearch search --saved ID), or ask their authors to rename one');
  }
  const byId = all.find((v) => v.id === name);
  if (byId) return byId;
  const known = all.map((v) => terminalSafe(v.name)).join(', ');
  throw new CliError(`no saved search named "${terminalSafe(name)}" on ${ctx.http().baseUrl}`, undefined, known ? `yours and those shared with you: ${known}` : 'save one with `docsearch search QUERY --save NAME`');
}

/** The saved search of this name, as `pickSavedSearch` finds it on the server. */
export async function findSavedSearch(ctx: Context, name: string): Promise<SavedSearchRecord> {
  return pickSavedSearch(ctx, await listSavedSearches(ctx), name);
}

/** `v` when the caller wrote it; one shared with them by someone else is refused before the server is asked (it would say 403). */
export function authorsOnly(v: SavedSearchRecord, verb: 'rename' | 'delete'): SavedSearchRecord {
  if (v.mine) return v;
  throw new CliError(`"${terminalSafe(v.name)}" is ${terminalSafe(v.created_by)}'s saved search, shared with you: only its author may ${verb} it`, undefined, 'see whose each one is with `docsearch saved-searches`');
}

/** Saves a search body under a name, shared with a project's members when `projectId` is given. */
export async function saveSearch(ctx: Context, name: string, search: Record<string, unknown>, projectId?: string): Promise<SavedSearchRecord> {
  return ctx.http().post('/api/v1/saved-searches', { name, search, ...(projectId ? { project_id: projectId } : {}) }, { shape: SAVED_SEARCH });
}
