import { z } from 'zod';
import type { Actor } from '../../access/access-control.js';
import { conflict, invalidRequest } from '../../core/errors.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { SearchBody } from '../../search/query.js';
import type { SavedSearch } from '../../store/sql/saved-searches.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';
import { ErrorBody, IdParams, readableText, Timestamp } from './schemas.js';

/**
 * Saved searches (docs/api.md#saved-searches, an extra of docsearch): a person names a search — its query, projects,
 * filters, facets, mode and grouping — and runs it again by name (the web sidebar, `docsearch search --saved NAME`).
 * Each is its author's; shared with a project, its members see and run it too (over what they themselves may read:
 * a saved search carries no access of its own). AccessControl.savedSearch decides who sees, renames and deletes one.
 */

/** What a saved search keeps: a search body without the page (limit and cursor belong to each run). */
export const SavedSearchBody = SearchBody.omit({ limit: true, cursor: true, document_ids: true });

/** `created_by` of a saved search whose author has left the project it is shared with, for its members. */
const FORMER_MEMBER = 'a former member';

export const SavedSearchSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    search: z.record(z.string(), z.unknown()).describe('the search body to send to POST /search (query, project_ids, filters, facets, mode, group …)'),
    project_id: z.string().nullable().describe("the project whose members it is shared with; null: its author's alone"),
    created_by: z.string().describe(`its author's e-mail; "${FORMER_MEMBER}" to the members of the project it is shared with once its author no longer reads that project`),
    mine: z.boolean().describe('the caller is its author (only the author renames and deletes it)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'SavedSearch' });

const toWire = (v: SavedSearch, userId: string) => ({
  id: v.id,
  name: v.name,
  search: v.search,
  project_id: v.projectId,
  created_by: v.userEmail,
  mine: v.userId === userId,
  created_at: new Date(v.createdAt).toISOString(),
  updated_at: new Date(v.updatedAt).toISOString(),
});

/** The saved searches the actor sees (their own, those shared with projects they read), by name: the list route's and the web page's. */
export async function savedSearchesSeen(s: Services, actor: Actor): Promise<SavedSearch[]> {
  const seen: SavedSearch[] = [];
  const authors = new Map<string, Actor>();
  for (const v of await s.savedSearches.visible(actor.userId, await s.access.readable(actor))) if (await s.access.seesSavedSearch(actor, v)) seen.push(await asSeenBy(s, actor, v, authors));
  return seen;
}

/**
 * A saved search the actor sees, as they may see it: its author, shared with a project they no longer read, sees it
 * without its label filters — the project's editors rename those in it (SavedSearchStore.renameLabel), which would
 * tell them of that project's labels since. The rest (name, query, other filters) is their own and stays as they left
 * it. The project's members keep it, but not its author's e-mail once they have left: it may have changed since.
 */
async function asSeenBy(s: Services, actor: Actor, v: SavedSearch, authors?: Map<string, Actor>): Promise<SavedSearch> {
  if (v.userId !== actor.userId) return (await s.access.savedSearchAuthorReads(v, authors)) ? v : { ...v, userEmail: FORMER_MEMBER };
  if (!(await s.access.seesSavedSearchOnlyAsAuthor(actor, v))) return v;
  const { filters, ...search } = v.search as { filters?: Record<string, unknown> };
  const { labels: _labels, ...rest } = filters ?? {};
  return { ...v, search: Object.keys(rest).length > 0 ? { ...search, filters: rest } : search };
}

/** The saved search `id`, when the actor may read it, as they may see it (404 else): GET /saved-searches/{id}'s. */
export async function savedSearchSeen(s: Services, actor: Actor, id: string): Promise<SavedSearch> {
  const saved = await s.savedSearches.get(id);
  await s.access.savedSearch(actor, saved, 'read');
  return asSeenBy(s, actor, saved!);
}

/** A saved search's name: each of a person's once (any case), composed (NFC: core/name-spellings.ts). */
export const SavedSearchName = z.string().trim().normalize('NFC').min(1, 'must not be empty').max(MAX_NAME_CHARS, `must be at most ${MAX_NAME_CHARS} characters`).superRefine(readableText);

/**
 * Saves a search under a name for the actor (POST /saved-searches, the search page's Save form); shared with
 * `projectId`'s members when given (the actor edits it). 403/404 for a project the actor may not share with or read,
 * 400 for a shared search naming another project, 409 for a name the actor has.
 */
export async function saveSearch(s: Services, actor: Actor, name: string, search: z.infer<typeof SavedSearchBody>, projectId: string | null): Promise<SavedSearch> {
  if (projectId !== null) await s.access.check(actor, projectId, 'edit');
  // A shared search names no other project: its members would learn of projects they may not read.
  if (projectId !== null && search.project_ids?.some((id) => id !== projectId)) {
    const message = 'body.search.project_ids: a search shared with a project may search only that project';
    throw invalidRequest(message, [{ path: 'body.search.project_ids', message }]);
  }
  await s.access.scope(actor, search.project_ids);
  const saved = await s.savedSearches.create(actor.userId, name, search, projectId);
  if (!saved) throw conflict(`you have a saved search named "${name}"`, { name });
  const target = { type: 'saved_search', id: saved.id, label: saved.name };
  await s.audit.record({ type: 'saved_search.created', target, details: { project_id: projectId } });
  // Shared, its name and query reach the project's members: that is an event of its own, as sharing a project is.
  if (projectId !== null) await s.audit.record({ type: 'saved_search.shared', target, details: { project_id: projectId } });
  return saved;
}

/**
 * Renames the actor's saved search `id` (PATCH /saved-searches/{id}, the web sidebar's Rename): its author only (403 for
 * a member it is shared with, 404 for one the actor does not see), 409 for a name the author has (any case). The same
 * name again changes nothing and records nothing.
 */
export async function renameSaved(s: Services, actor: Actor, id: string, name: string): Promise<SavedSearch> {
  const saved = await s.savedSearches.get(id);
  await s.access.savedSearch(actor, saved, 'rename');
  if (saved!.name === name) return saved!;
  const renamed = await s.savedSearches.rename(id, name);
  if (!renamed) throw conflict(`you have a saved search named "${name}"`, { name });
  await s.audit.record({ type: 'saved_search.renamed', target: { type: 'saved_search', id, label: renamed.name }, details: { project_id: renamed.projectId, from_name: saved!.name } });
  return renamed;
}

/** Deletes the actor's saved search `id` (DELETE /saved-searches/{id}, the web sidebar's Delete): its author only, as renameSaved. */
export async function deleteSaved(s: Services, actor: Actor, id: string): Promise<SavedSearch> {
  const saved = await s.savedSearches.get(id);
  await s.access.savedSearch(actor, saved, 'delete');
  await s.savedSearches.delete(id);
  await s.audit.record({ type: 'saved_search.deleted', target: { type: 'saved_search', id, label: saved!.name }, details: { project_id: saved!.projectId } });
  return saved!;
}

const notFoundResponse = { description: "No such saved search, or one neither the caller's nor shared with a project they read", schema: ErrorBody };

export const listSavedSearches = (s: Services) =>
  defineRoute({
    name: 'saved_searches.list',
    method: 'GET',
    path: '/saved-searches',
    scope: 'read:documents',
    tag: 'search',
    summary: "The caller's saved searches and those shared with projects they read, by name (theirs first where names tie).",
    responses: { 200: { description: 'The saved searches', schema: z.object({ saved_searches: z.array(SavedSearchSchema) }) } },
    async handler({ principal }) {
      return { status: 200, body: { saved_searches: (await savedSearchesSeen(s, principal)).map((v) => toWire(v, principal.userId)) } };
    },
  });

export const createSavedSearch = (s: Services) =>
  defineRoute({
    name: 'saved_searches.create',
    method: 'POST',
    path: '/saved-searches',
    scope: 'write:documents',
    tag: 'search',
    summary: "Save a search under a name (each of a person's names once, any case); with `project_id`, shared with that project's members (its editors and owners share).",
    body: z.strictObject({
      name: SavedSearchName,
      search: SavedSearchBody,
      project_id: z.string().min(1).max(100).nullable().optional().describe('share it with this project\'s members (the caller edits the project)'),
    }),
    responses: {
      201: { description: 'The saved search', schema: SavedSearchSchema },
      400: { description: 'Invalid body: the message names the field (a filter\'s field or operator too)', schema: ErrorBody },
      403: { description: 'Sharing with a project the caller only views', schema: ErrorBody },
      404: { description: 'A project (of `project_id` or the search\'s `project_ids`) the caller may not read', schema: ErrorBody },
      409: { description: 'The caller has a saved search of that name (any case)', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      return { status: 201, body: toWire(await saveSearch(s, principal, body.name, body.search, body.project_id ?? null), principal.userId) };
    },
  });

export const getSavedSearch = (s: Services) =>
  defineRoute({
    name: 'saved_searches.get',
    method: 'GET',
    path: '/saved-searches/:id',
    scope: 'read:documents',
    tag: 'search',
    summary: 'One saved search.',
    params: IdParams,
    responses: { 200: { description: 'The saved search', schema: SavedSearchSchema }, 404: notFoundResponse },
    async handler({ params, principal }) {
      return { status: 200, body: toWire(await savedSearchSeen(s, principal, params.id), principal.userId) };
    },
  });

export const deleteSavedSearch = (s: Services) =>
  defineRoute({
    name: 'saved_searches.delete',
    method: 'DELETE',
    path: '/saved-searches/:id',
    scope: 'write:documents',
    tag: 'search',
    summary: 'Delete a saved search (its author only; the members it was shared with no longer see it).',
    params: IdParams,
    responses: { 204: { description: 'Deleted' }, 403: { description: 'A member it is shared with (not its author)', schema: ErrorBody }, 404: notFoundResponse },
    async handler({ params, principal }) {
      await deleteSaved(s, principal, params.id);
      return { status: 204 };
    },
  });

export const renameSavedSearch = (s: Services) =>
  defineRoute({
    name: 'saved_searches.rename',
    method: 'PATCH',
    path: '/saved-searches/:id',
    scope: 'write:documents',
    tag: 'search',
    summary: "Rename a saved search (its author only; each of a person's names once, any case). Its search is unchanged.",
    params: IdParams,
    body: z.strictObject({ name: SavedSearchName }),
    responses: {
      200: { description: 'The saved search, renamed', schema: SavedSearchSchema },
      400: { description: 'Invalid name', schema: ErrorBody },
      403: { description: 'A member it is shared with (not its author)', schema: ErrorBody },
      404: notFoundResponse,
      409: { description: 'The author has another saved search of that name (any case)', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      return { status: 200, body: toWire(await renameSaved(s, principal, params.id, body.name), principal.userId) };
    },
  });
