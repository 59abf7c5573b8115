/**
 * How the permission matrix does each operation of docs/permissions.md's tables, and what an allowed cell must have
 * done. One entry per row, keyed by the operation as the table names it; matrix-world.ts runs them (see there how
 * a cell is judged). To add a row: a line in the table, and here
 *
 *   'PATCH /api/v1/projects/{id}': {
 *     on: {},                                              // a fresh P per allowed cell (default: the shared P)
 *     request: (t) => ({ method: 'PATCH', path: `/api/v1/projects/${t.project}`, body: { description: 'changed' } }),
 *     ok: 200,                                             // the documented success status
 *     effect: (c) => must(after(c, 'projects', c.t.project)?.description === 'changed', 'the description is changed'),
 *   },
 *
 * `request` gets the target's ids (P, D, T, F, S, K, an account, a group: see Target), and the same request about ids
 * that do not exist is what a 404 is compared with, so every id a request names must come from the target.
 * `shows` says whether a list or a search shows P or D (else `∅`). `effect` reads the state after the cell (`after`,
 * `added`: the database's rows) or the owner's view (`c.m.owner`). `undo` puts back what must not stay changed for
 * the rows after (an e-mail, the sharing policy).
 */
import { totpCode } from '../auth/two-factor/totp.js';
import { api } from '../helpers/daemon.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { loggedIn } from '../server/web-client.js';
import { rows, type State } from './matrix-state.js';
import { type Answer, type As, type Cell, type Matrix, type McpRequest, type RestRequest, type Spec, type Specs, type Target, type WebRequest, WORD } from './matrix-world.js';

/** A row of `table` after the cell, by its key; undefined when there is none. */
export function after(c: Cell, table: string, key: string): Record<string, any> | undefined {
  const row = c.after.get(table)?.get(key);
  return row === undefined ? undefined : (JSON.parse(row) as Record<string, any>);
}

/** The rows of `table` the cell added. */
export function added(c: Cell, table: string): Record<string, any>[] {
  const before = c.before.get(table);
  return rows(c.after, table).filter((r) => !before?.has(String(Object.values(r)[0])));
}

export function must(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`expected: ${what}`);
}

const DAY = 86_400_000;

/** A row of `table` of the person's (`user_id`), not revoked before the cell, revoked after it. */
const revoked = (c: Cell, table: string, userId: string) =>
  rows(c.before, table).some((x) => x.user_id === userId && x.revoked_at === null && after(c, table, String(Object.values(x)[0]))?.revoked_at !== null);
const includes = (list: unknown, id: string) => JSON.stringify(list ?? null).includes(`"${id}"`);

/** The rows of `table` whose first column starts with `prefix` (composite keys: `<project>:<member>`). */
const keyed = (state: State, table: string, prefix: string) => [...(state.get(table)?.keys() ?? [])].filter((k) => k.startsWith(prefix));

// ---------------------------------------------------------------------------------------------------------------
// REST API

const restGet = (path: (t: Target) => string, shows?: Spec<RestRequest>['shows']): Spec<RestRequest> => ({ request: (t) => ({ path: path(t) }), ok: 200, shows });

const REST: Record<string, Spec<RestRequest>> = {
  'GET /api/v1/health': restGet(() => '/api/v1/health'),
  'GET /api/v1/me': restGet(() => '/api/v1/me'),
  'GET /api/v1/projects': restGet(
    () => '/api/v1/projects?limit=100',
    (a, t) => a.body.projects.some((p: { id: string }) => p.id === t.project),
  ),
  'POST /api/v1/projects': {
    request: (_t, _as, m) => ({ path: '/api/v1/projects', body: { name: `made ${m.next()}` } }),
    ok: 201,
    effect: (c) => must(after(c, 'projects', c.answer.body.id)?.user_id === c.as.user.id, 'a project of the caller'),
  },
  'GET /api/v1/projects/{id}': restGet((t) => `/api/v1/projects/${t.project}`),
  'PATCH /api/v1/projects/{id}': {
    on: {},
    request: (t) => ({ method: 'PATCH', path: `/api/v1/projects/${t.project}`, body: { description: 'changed' } }),
    ok: 200,
    effect: (c) => must(after(c, 'projects', c.t.project)?.description === 'changed', 'the description changed'),
  },
  'DELETE /api/v1/projects/{id}': {
    on: {},
    request: (t) => ({ method: 'DELETE', path: `/api/v1/projects/${t.project}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'projects', c.t.project), 'P deleted'),
  },
  'GET /api/v1/projects/{id}/members': restGet((t) => `/api/v1/projects/${t.project}/members`),
  'POST /api/v1/projects/{id}/members': {
    on: {},
    request: (t, _as, m) => ({ path: `/api/v1/projects/${t.project}/members`, body: { email: m.users.eve.email, role: 'viewer' } }),
    ok: 201,
    effect: (c) => must(after(c, 'project_members', `${c.t.project}:${c.m.users.eve.id}`)?.role === 'viewer', 'Eve a viewer of P'),
  },
  'DELETE /api/v1/projects/{id}/members/{member_id}': {
    on: {},
    request: (t) => ({ method: 'DELETE', path: `/api/v1/projects/${t.project}/members/${t.member}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'project_members', `${c.t.project}:${c.t.member}`), 'Bob no longer a member of P'),
  },
  'POST /api/v1/projects/{id}/transfer': {
    on: {},
    request: (t, _as, m) => ({ path: `/api/v1/projects/${t.project}/transfer`, body: { email: m.users.eve.email } }),
    ok: 200,
    effect: (c) => must(after(c, 'projects', c.t.project)?.user_id === c.m.users.eve.id, 'P belongs to Eve'),
  },
  'GET /api/v1/projects/{id}/sources': restGet((t) => `/api/v1/projects/${t.project}/sources`),
  'POST /api/v1/projects/{id}/sources': {
    on: {},
    request: (t, _as, m) => ({ path: `/api/v1/projects/${t.project}/sources`, body: { url: m.sourceUrl(), every: '1d' } }),
    ok: 201,
    effect: (c) => must(after(c, 'sources', c.answer.body.id)?.project_id === c.t.project, 'a source of P'),
  },
  'GET /api/v1/projects/{id}/sources/{sid}': restGet((t) => `/api/v1/projects/${t.project}/sources/${t.source}`),
  'PATCH /api/v1/projects/{id}/sources/{sid}': {
    on: { source: true },
    request: (t) => ({ method: 'PATCH', path: `/api/v1/projects/${t.project}/sources/${t.source}`, body: { every: '2d' } }),
    ok: 200,
    effect: (c) => must(after(c, 'sources', c.t.source)?.every_ms === 2 * DAY, 'S runs every 2 days'),
  },
  'DELETE /api/v1/projects/{id}/sources/{sid}': {
    on: { source: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/projects/${t.project}/sources/${t.source}?keep_documents=true` }),
    ok: 204,
    effect: (c) => must(!after(c, 'sources', c.t.source), 'S removed'),
  },
  'POST /api/v1/projects/{id}/sources/{sid}/sync': {
    on: { source: true },
    request: (t) => ({ path: `/api/v1/projects/${t.project}/sources/${t.source}/sync`, body: {} }),
    ok: 202,
    effect: (c) => must(after(c, 'sources', c.t.source)!.pass > JSON.parse(c.before.get('sources')!.get(c.t.source)!).pass, 'a pass of S ran'),
  },
  'GET /api/v1/keys': restGet(
    () => '/api/v1/keys',
    (a, t) => a.body.keys.some((k: { id: string }) => k.id === t.key),
  ),
  'POST /api/v1/keys': {
    request: () => ({ path: '/api/v1/keys', body: { name: 'matrix' } }),
    ok: 201,
    effect: (c) => must(after(c, 'api_keys', c.answer.body.id)?.user_id === c.as.user.id, "a key of the caller's"),
  },
  'DELETE /api/v1/keys/{id}': {
    on: { key: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/keys/${t.key}` }),
    ok: 204,
    effect: (c) => must(after(c, 'api_keys', c.t.key)?.revoked_at !== null, 'K revoked'),
  },
  'POST /api/v1/upload': {
    request: (t, _as, m) => ({ path: '/api/v1/upload', files: [{ name: `up-${m.next()}.txt`, bytes: Buffer.from(`An upload about ${WORD}, ${m.next()}.\n`) }], fields: { project_id: t.project } }),
    ok: 202,
    effect: (c) => must(after(c, 'documents', c.answer.body.documents[0].id)?.project_id === c.t.project, 'a document in P'),
  },
  // Filtered by D's label: a filter shows only what the caller reads.
  // With facets, as search's row: they name P exactly when the list shows D, and count exactly the documents listed
  // (one page holds the whole list), so no count holds a document the caller may not read.
  'GET /api/v1/documents': restGet(
    () => '/api/v1/documents?limit=100&filename=handbook.pdf&labels=matrix&facets=project,label,type',
    (a, t) => {
      const listed = a.body.documents as { id: string }[];
      const shows = listed.some((x) => x.id === t.document);
      const counted = a.body.facets.project.some((v: { value: string }) => v.value === t.project);
      must(counted === shows, `facets that name P (${counted}) exactly when the list shows D (${shows})`);
      must(a.body.next_cursor === null, 'one page holds the whole list');
      const sum = (facet: string) => (a.body.facets[facet] as { count: number }[]).reduce((n, v) => n + v.count, 0);
      for (const facet of ['project', 'type']) must(sum(facet) === listed.length, `the ${facet} counts (${sum(facet)}) add up to the ${listed.length} documents listed`);
      const labelled = (a.body.facets.label as { value: string; count: number }[]).find((v) => String(v.value).toLowerCase() === 'matrix')?.count ?? 0;
      must(labelled === listed.length, `the "matrix" label counts ${labelled} of the ${listed.length} documents listed, all labelled so`);
      return shows;
    },
  ),
  'GET /api/v1/documents/{id}': restGet((t) => `/api/v1/documents/${t.document}`),
  'GET /api/v1/documents/{id}/file': restGet((t) => `/api/v1/documents/${t.document}/file`),
  'GET /api/v1/documents/{id}/text': restGet((t) => `/api/v1/documents/${t.document}/text`),
  'GET /api/v1/documents/{id}/thumbnail': restGet((t) => `/api/v1/documents/${t.document}/thumbnail`),
  // A name and a metadata value of its own per cell, so that each refused cell's rename or metadata change would show.
  'PATCH /api/v1/documents/{id}': {
    on: {},
    request: (t, _as, m) => {
      const n = m.next();
      return { method: 'PATCH', path: `/api/v1/documents/${t.document}`, body: { filename: `renamed-${n}.txt`, metadata: { cell: n } } };
    },
    ok: 200,
    effect: (c) => {
      const row = after(c, 'documents', c.t.document);
      must(row?.filename.startsWith('renamed-') && (JSON.parse(row.metadata) as { cell?: unknown }).cell !== undefined, 'D renamed, its metadata changed');
    },
  },
  'POST /api/v1/documents/{id}/retry': {
    request: (t) => ({ method: 'POST', path: `/api/v1/documents/${t.failed}/retry` }),
    ok: 202,
    effect: (c) => must(retried(c), 'F indexed again'),
  },
  'DELETE /api/v1/documents/{id}': {
    on: {},
    request: (t) => ({ method: 'DELETE', path: `/api/v1/documents/${t.document}` }),
    ok: 204,
    effect: (c) => must(after(c, 'documents', c.t.document)?.trashed_at, 'D in the trash'),
  },
  'GET /api/v1/trash': restGet(
    () => '/api/v1/trash?limit=100',
    (a, t) => a.body.documents.some((x: { id: string }) => x.id === t.trashed),
  ),
  'POST /api/v1/trash/{id}/restore': {
    on: { trash: true },
    request: (t) => ({ method: 'POST', path: `/api/v1/trash/${t.trashed}/restore` }),
    ok: 200,
    effect: (c) => must(after(c, 'documents', c.t.trashed)?.trashed_at === null, 'T out of the trash'),
  },
  'DELETE /api/v1/trash/{id}': {
    on: { trash: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/trash/${t.trashed}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'documents', c.t.trashed), 'T purged'),
  },
  // Filtered by D's label, with facets: their counts name P exactly when the results show D, and every facet counts
  // exactly the results shown (one page holds the whole list), so no count holds a document the caller may not read.
  'POST /api/v1/search': {
    request: () => ({ path: '/api/v1/search', body: { query: `${WORD} handbook`, limit: 50, filters: { labels: ['matrix'] }, facets: ['project', 'label', 'type'] } }),
    ok: 200,
    shows: (a, t) => {
      const results = a.body.results as { document: { id: string } }[];
      const shows = results.some((r) => r.document.id === t.document);
      const counted = a.body.facets.project.some((v: { value: string }) => v.value === t.project);
      must(counted === shows, `facets that name P (${counted}) exactly when the results show D (${shows})`);
      must(a.body.total.relation === 'eq' && a.body.total.value === results.length, `one page holds the whole list (total ${JSON.stringify(a.body.total)}, ${results.length} shown)`);
      const sum = (facet: string) => (a.body.facets[facet] as { count: number }[]).reduce((n, v) => n + v.count, 0);
      for (const facet of ['project', 'type']) must(sum(facet) === results.length, `the ${facet} counts (${sum(facet)}) add up to the ${results.length} results shown`);
      const labelled = (a.body.facets.label as { value: string; count: number }[]).find((v) => String(v.value).toLowerCase() === 'matrix')?.count ?? 0;
      must(labelled === results.length, `the "matrix" label counts ${labelled} of the ${results.length} results shown, all labelled so`);
      return shows;
    },
  },
  'GET /api/v1/projects/{id}/labels': restGet(
    (t) => `/api/v1/projects/${t.project}/labels`,
    (a, t) => a.body.labels.some((l: { id: string }) => l.id === t.label),
  ),
  'POST /api/v1/projects/{id}/labels': {
    on: {},
    request: (t, _as, m) => ({ path: `/api/v1/projects/${t.project}/labels`, body: { name: `made ${m.next()}`, color: 'teal' } }),
    ok: 201,
    effect: (c) => must(after(c, 'labels', c.answer.body.id)?.project_id === c.t.project, 'a label of P'),
  },
  'PATCH /api/v1/projects/{id}/labels/{label_id}': {
    on: { label: true },
    request: (t) => ({ method: 'PATCH', path: `/api/v1/projects/${t.project}/labels/${t.label}`, body: { name: 'renamed', color: 'red' } }),
    ok: 200,
    effect: (c) => must(after(c, 'labels', c.t.label)?.name === 'renamed', 'L renamed'),
  },
  'DELETE /api/v1/projects/{id}/labels/{label_id}': {
    on: { label: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/projects/${t.project}/labels/${t.label}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'labels', c.t.label) && !after(c, 'document_labels', `${c.t.document}:${c.t.label}`), 'L deleted, and off D'),
  },
  'GET /api/v1/saved-searches': restGet(
    () => '/api/v1/saved-searches',
    (a, t) => a.body.saved_searches.some((v: { id: string }) => v.id === t.saved),
  ),
  'POST /api/v1/saved-searches': {
    request: (t, _as, m) => ({ path: '/api/v1/saved-searches', body: { name: `made ${m.next()}`, search: { query: WORD, filters: { labels: 'matrix' } }, project_id: t.project } }),
    ok: 201,
    effect: (c) => must(after(c, 'saved_searches', c.answer.body.id)?.project_id === c.t.project && after(c, 'saved_searches', c.answer.body.id)?.user_id === c.as.user.id, "the caller's saved search shared with P"),
  },
  'GET /api/v1/saved-searches/{id}': restGet((t) => `/api/v1/saved-searches/${t.saved}`),
  'DELETE /api/v1/saved-searches/{id}': {
    on: { saved: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/saved-searches/${t.saved}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'saved_searches', c.t.saved), 'V deleted'),
  },
  'PATCH /api/v1/saved-searches/{id}': {
    on: { saved: true },
    request: (t, _as, m) => ({ method: 'PATCH', path: `/api/v1/saved-searches/${t.saved}`, body: { name: `renamed ${m.next()}` } }),
    ok: 200,
    effect: (c) => must(after(c, 'saved_searches', c.t.saved)?.name === c.answer.body.name, 'V renamed'),
  },
  'GET /api/v1/reindex': restGet(() => '/api/v1/reindex'),
  // The index matches the embedder: nothing to do, for anyone who may start it.
  'POST /api/v1/reindex': { request: () => ({ method: 'POST', path: '/api/v1/reindex' }), ok: 200 },
  'GET /api/v1/audit-events': restGet(() => '/api/v1/audit-events?limit=5'),
  'GET /api/v1/admin/users': restGet(() => '/api/v1/admin/users'),
  'GET /api/v1/admin/users/{user}': { on: { account: 'active' }, request: (t) => ({ path: `/api/v1/admin/users/${t.account}` }), ok: 200 },
  'PATCH /api/v1/admin/users/{user}': {
    on: { account: 'active' },
    request: (t) => ({ method: 'PATCH', path: `/api/v1/admin/users/${t.account}`, body: { admin: true } }),
    ok: 200,
    effect: (c) => must(after(c, 'users', c.t.account)?.is_admin === 1, 'the account an admin'),
  },
  'PATCH /api/v1/admin/projects/{project}': {
    request: (t) => ({ method: 'PATCH', path: `/api/v1/admin/projects/${t.project}`, body: { quota_bytes: 1_000_000 } }),
    ok: 200,
    effect: (c) => must(Number(after(c, 'projects', c.t.project)?.quota_bytes) === 1_000_000, 'the project has the quota'),
  },
  'POST /api/v1/admin/users/{user}/disable': {
    on: { account: 'active' },
    request: (t) => ({ method: 'POST', path: `/api/v1/admin/users/${t.account}/disable` }),
    ok: 200,
    effect: (c) => must(after(c, 'users', c.t.account)?.disabled_at, 'the account disabled'),
  },
  'POST /api/v1/admin/users/{user}/enable': {
    on: { account: 'disabled' },
    request: (t) => ({ method: 'POST', path: `/api/v1/admin/users/${t.account}/enable` }),
    ok: 200,
    effect: (c) => must(after(c, 'users', c.t.account)?.disabled_at === null, 'the account enabled'),
  },
  'DELETE /api/v1/admin/users/{user}': {
    on: { account: 'active' },
    request: (t, _as, m) => ({ method: 'DELETE', path: `/api/v1/admin/users/${t.account}?transfer_to=${encodeURIComponent(m.users.frank.email)}` }),
    ok: 200,
    effect: (c) => must(after(c, 'users', c.t.account)?.deleted_at, 'the account deleted'),
  },
  'POST /api/v1/admin/users/{user}/reset-link': {
    on: { account: 'active' },
    request: (t) => ({ path: `/api/v1/admin/users/${t.account}/reset-link`, body: { send: false } }),
    ok: 201,
    effect: (c) => must(added(c, 'password_resets').some((r) => r.user_id === c.t.account), 'a reset link for the account'),
  },
  'GET /api/v1/admin/invitations': restGet(() => '/api/v1/admin/invitations'),
  'POST /api/v1/admin/invitations': {
    request: (_t, _as, m) => ({ path: '/api/v1/admin/invitations', body: { emails: [`invited-${m.next()}@example.com`], send: false } }),
    ok: 201,
    effect: (c) => must(added(c, 'invites').length === 1, 'an invitation'),
  },
  'DELETE /api/v1/admin/invitations/{id}': {
    // An invitation Frank made for the cell.
    request: async (_t, _as, m) => {
      const made = await api(m.d, '/api/v1/admin/invitations', { token: m.users.frank.apiKey, body: { emails: [`revoked-${m.next()}@example.com`], send: false } });
      return { method: 'DELETE', path: `/api/v1/admin/invitations/${made.body.invitations[0].id}` };
    },
    ok: 204,
    effect: (c) => must(rows(c.after, 'invites').length === rows(c.before, 'invites').length - 1, 'the invitation gone'),
  },
  'GET /api/v1/admin/groups': restGet(() => '/api/v1/admin/groups'),
  'POST /api/v1/admin/groups': {
    request: (_t, _as, m) => ({ path: '/api/v1/admin/groups', body: { name: `api group ${m.next()}` } }),
    ok: 201,
    effect: (c) => must(added(c, 'groups').length === 1, 'a group'),
  },
  'GET /api/v1/admin/groups/{group}': { on: { group: true }, request: (t) => ({ path: `/api/v1/admin/groups/${t.group}` }), ok: 200 },
  'DELETE /api/v1/admin/groups/{group}': {
    on: { group: true },
    request: (t) => ({ method: 'DELETE', path: `/api/v1/admin/groups/${t.group}` }),
    ok: 204,
    effect: (c) => must(!after(c, 'groups', c.t.group), 'the group deleted'),
  },
  'POST /api/v1/admin/groups/{group}/members': {
    on: { group: true },
    request: (t, _as, m) => ({ path: `/api/v1/admin/groups/${t.group}/members`, body: { user: m.users.carol.email } }),
    ok: 201,
    effect: (c) => must(keyed(c.after, 'group_members', `${c.t.group}:${c.m.users.carol.id}`).length === 1, 'Carol in the group'),
  },
  'DELETE /api/v1/admin/groups/{group}/members/{user}': {
    on: { group: true },
    request: (t, _as, m) => ({ method: 'DELETE', path: `/api/v1/admin/groups/${t.group}/members/${m.users.eve.id}` }),
    ok: 204,
    effect: (c) => must(keyed(c.after, 'group_members', `${c.t.group}:${c.m.users.eve.id}`).length === 0, 'Eve out of the group'),
  },
  'GET /api/v1/admin/mail': restGet(() => '/api/v1/admin/mail'),
  'POST /api/v1/admin/mail/test': { request: () => ({ path: '/api/v1/admin/mail/test', body: {} }), ok: 202 },
  'POST /api/v1/admin/mail/retry': { request: () => ({ method: 'POST', path: '/api/v1/admin/mail/retry' }), ok: 200 },
};

/** F was queued again: its job ran once more (a new job, or the old one put back to run from now). */
function retried(c: Cell): boolean {
  const jobs = (s: State) => rows(s, 'jobs').filter((j) => j.document_id === c.t.failed);
  const before = jobs(c.before);
  const now = jobs(c.after);
  return now.length > before.length || now.some((j) => before.some((b) => b.id === j.id && j.run_after > b.run_after));
}

// ---------------------------------------------------------------------------------------------------------------
// Web pages and forms

const page = (path: (t: Target, as: As) => string, shows?: (text: string, t: Target) => boolean): Spec<WebRequest> => ({
  request: (t, as) => ({ path: path(t, as) }),
  ok: 200,
  shows: shows ? (a, t) => shows(a.text, t) : undefined,
});

const form = (
  path: (t: Target) => string,
  fields: (t: Target, as: As, m: Matrix) => Record<string, string | string[]>,
  rest: Omit<Spec<WebRequest>, 'request'>,
): Spec<WebRequest> => ({ request: (t, as, m) => ({ path: path(t), form: fields(t, as, m) }), ...rest });

/** What a page says in its flash or error box after a form: for the forms that act on a selection. */
const says = (a: Answer, words: string) => a.text.includes(words);

/** The person's own default project, where they may move a document. */
async function ownDefault(m: Matrix, as: As): Promise<string> {
  const state = await m.state.snapshot();
  return rows(state, 'projects').find((p) => p.user_id === as.user.id && p.is_default === 1)?.id ?? 'prj_none';
}

/** A key of the person's own, made for the cell (none for a disabled account: its keys are revoked). */
async function ownKey(m: Matrix, as: As): Promise<string> {
  const res = await api(m.d, '/api/v1/keys', { token: as.user.apiKey, body: { name: `own ${m.next()}` } });
  return res.status === 201 ? (res.body.id as string) : 'key_none';
}

/** An application of the person's own, registered through the form. */
async function ownApp(m: Matrix, as: As): Promise<string> {
  await as.web.post('/settings/applications', { _csrf: as.csrf, name: `App ${m.next()}`, redirect_uris: 'https://app.example.com/callback' });
  const state = await m.state.snapshot();
  return rows(state, 'oauth_clients').filter((c) => c.user_id === as.user.id).at(-1)?.id ?? 'cli_none';
}

/** The person's authenticator app set up (started and confirmed with a code): the disable row turns it off. */
async function withTotp(m: Matrix, as: As): Promise<void> {
  const started = await as.web.post('/settings/security/totp/start', { _csrf: as.csrf });
  if (started.location?.startsWith('/login')) return;
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await as.web.get('/settings/security')).text)?.[1];
  if (!secret) throw new Error('no authenticator key on Settings → Security');
  await as.web.post('/settings/security/totp', { _csrf: as.csrf, code: totpCode(secret) });
}

async function withoutTotp(c: Cell): Promise<void> {
  await c.as.web.post('/settings/security/totp/disable', { _csrf: c.as.csrf, password: c.as.user.password });
}

/** Another signed-in session of the person's: its handle (what Settings → Security names it by). */
async function otherSession(m: Matrix, as: As): Promise<string> {
  const before = await m.state.snapshot();
  await loggedIn(m.d, as.user).catch(() => null);
  const now = await m.state.snapshot();
  const made = [...(now.get('sessions')?.keys() ?? [])].find((k) => !before.get('sessions')?.has(k) && JSON.parse(now.get('sessions')!.get(k)!).user_id === as.user.id);
  return made?.slice(0, 16) ?? '0000000000000000';
}

const WEB: Record<string, Spec<WebRequest>> = {
  'GET /': page(() => '/'),
  'GET /projects': page(
    () => '/projects',
    (text, t) => text.includes(`/projects/${t.project}"`),
  ),
  'POST /projects': form(() => '/projects', (_t, _as, m) => ({ name: `web ${m.next()}`, description: '' }), {
    ok: 303,
    effect: (c) => must(added(c, 'projects').some((p) => p.user_id === c.as.user.id), 'a project of the caller'),
  }),
  'GET /projects/:id': page((t) => `/projects/${t.project}`),
  'GET /projects/:id/documents.json': { request: (t) => ({ path: `/projects/${t.project}/documents.json`, json: true }), ok: 200 },
  'POST /projects/:id/edit': form((t) => `/projects/${t.project}/edit`, (_t, _as, m) => ({ name: `Renamed ${m.next()}`, description: 'changed' }), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'projects', c.t.project)?.description === 'changed', 'P changed'),
  }),
  'POST /projects/:id/languages': form((t) => `/projects/${t.project}/languages`, () => ({ language: 'de', ocr_languages: ['eng'] }), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'projects', c.t.project)?.language === 'de' && after(c, 'projects', c.t.project)?.ocr_languages === 'eng', 'P language de, OCR eng'),
  }),
  'GET /projects/:id/sharing': page((t) => `/projects/${t.project}/sharing`, (text) => text.includes('id="share-form"')),
  'GET /projects/:id/settings': page((t) => `/projects/${t.project}/settings`, (text, t) => text.includes(`action="/projects/${t.project}/edit"`)),
  'GET /projects/:id/delete': page((t) => `/projects/${t.project}/delete`),
  'POST /projects/:id/delete': form((t) => `/projects/${t.project}/delete`, () => ({}), {
    on: {},
    ok: 303,
    effect: (c) => must(!after(c, 'projects', c.t.project), 'P deleted'),
  }),
  'POST /projects/:id/upload': {
    request: (t, _as, m) => {
      const multipart = new FormData();
      multipart.append('file', new Blob([`web upload ${m.next()}\n`]), `web-${m.next()}.txt`);
      return { path: `/projects/${t.project}/upload`, multipart };
    },
    ok: 202,
    effect: (c) => must(added(c, 'documents').some((x) => x.project_id === c.t.project), 'a document in P'),
  },
  'POST /projects/:id/members': form((t) => `/projects/${t.project}/members`, (_t, _as, m) => ({ member: m.users.eve.email, role: 'viewer' }), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'project_members', `${c.t.project}:${c.m.users.eve.id}`)?.role === 'viewer', 'Eve a viewer of P'),
  }),
  'POST /projects/:id/members/:member_id/remove': form((t) => `/projects/${t.project}/members/${t.member}/remove`, () => ({}), {
    on: {},
    ok: 303,
    effect: (c) => must(!after(c, 'project_members', `${c.t.project}:${c.t.member}`), 'Bob no longer a member of P'),
  }),
  'POST /projects/:id/transfer': form((t) => `/projects/${t.project}/transfer`, (_t, _as, m) => ({ email: m.users.eve.email }), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'projects', c.t.project)?.user_id === c.m.users.eve.id, 'P belongs to Eve'),
  }),
  'GET /projects/:id/sources': page((t) => `/projects/${t.project}/sources`),
  'POST /projects/:id/sources': form((t) => `/projects/${t.project}/sources`, (_t, _as, m) => ({ kind: '', url: m.sourceUrl(), every: '1d' }), {
    on: {},
    ok: 303,
    effect: (c) => must(added(c, 'sources').some((x) => x.project_id === c.t.project), 'a source of P'),
  }),
  'GET /projects/:id/sources/:sid/remove': page((t) => `/projects/${t.project}/sources/${t.source}/remove`),
  'POST /projects/:id/sources/:sid/sync': form((t) => `/projects/${t.project}/sources/${t.source}/sync`, () => ({}), {
    on: { source: true },
    ok: 303,
    effect: (c) => must(after(c, 'sources', c.t.source)!.pass > JSON.parse(c.before.get('sources')!.get(c.t.source)!).pass, 'a pass of S ran'),
  }),
  'POST /projects/:id/sources/:sid/resume': form((t) => `/projects/${t.project}/sources/${t.source}/resume`, () => ({}), {
    on: { source: 'paused' },
    ok: 303,
    effect: (c) => must(after(c, 'sources', c.t.source)?.status === 'active', 'S active'),
  }),
  'POST /projects/:id/sources/:sid/pause': form((t) => `/projects/${t.project}/sources/${t.source}/pause`, () => ({}), {
    on: { source: true },
    ok: 303,
    effect: (c) => must(after(c, 'sources', c.t.source)?.status === 'paused', 'S paused'),
  }),
  'POST /projects/:id/sources/:sid/remove': form((t) => `/projects/${t.project}/sources/${t.source}/remove`, () => ({ keep_documents: 'true' }), {
    on: { source: true },
    ok: 303,
    effect: (c) => must(!after(c, 'sources', c.t.source), 'S removed'),
  }),
  'GET /projects/:id/sources/:sid/edit': page((t) => `/projects/${t.project}/sources/${t.source}/edit`),
  'POST /projects/:id/sources/:sid/edit': form((t) => `/projects/${t.project}/sources/${t.source}/edit`, () => ({ every: '3d', include: '', exclude: '' }), {
    on: { source: true },
    ok: 303,
    effect: (c) => must(after(c, 'sources', c.t.source)?.every_ms === 3 * DAY, 'S runs every 3 days'),
  }),
  // The Labels tab: viewers see P's vocabulary (L among it), editors change it.
  'GET /projects/:id/labels': page(
    (t) => `/projects/${t.project}/labels`,
    (text, t) => text.includes(`data-label-id="${t.label}"`),
  ),
  'POST /projects/:id/labels': form((t) => `/projects/${t.project}/labels`, (_t, _as, m) => ({ name: `web ${m.next()}`, color: 'teal' }), {
    ok: 303,
    effect: (c) => must(added(c, 'labels').some((l) => l.project_id === c.t.project && l.color === 'teal'), 'a label of P'),
  }),
  'POST /projects/:id/labels/:label_id': form((t) => `/projects/${t.project}/labels/${t.label}`, () => ({ name: 'renamed', color: 'red' }), {
    on: { label: true },
    ok: 303,
    effect: (c) => must(after(c, 'labels', c.t.label)?.name === 'renamed' && after(c, 'labels', c.t.label)?.color === 'red', 'L renamed and red'),
  }),
  'GET /projects/:id/labels/:label_id/delete': { on: { label: true }, ...page((t) => `/projects/${t.project}/labels/${t.label}/delete`) },
  'POST /projects/:id/labels/:label_id/delete': form((t) => `/projects/${t.project}/labels/${t.label}/delete`, () => ({}), {
    on: { label: true },
    ok: 303,
    effect: (c) => must(!after(c, 'labels', c.t.label) && !after(c, 'document_labels', `${c.t.document}:${c.t.label}`), 'L deleted, and off D'),
  }),
  'GET /documents': page(
    (t) => `/documents?project_id=${t.project}`,
    (text, t) => text.includes(`/documents/${t.document}"`),
  ),
  'GET /documents/status.json': {
    request: (t) => ({ path: `/documents/status.json?ids=${t.document},${t.failed}`, json: true }),
    ok: 200,
    shows: (a, t) => includes(a.body, t.document) || includes(a.body, t.failed),
  },
  // Retry the selection: F for whoever may change it, nothing at all for the rest (as if unselected).
  'POST /documents/bulk': {
    request: (t) => ({ path: '/documents/bulk', form: { ids: [t.failed], action: 'retry', return_to: '/documents' }, follow: true }),
    ok: 303,
    shows: (a) => !says(a, 'Select one or more documents first') && !says(a, 'where your role is'),
    effect: (c) => must(retried(c), 'F indexed again'),
  },
  // The confirmation's form: deletes the selected documents the person may change.
  'POST /documents/delete': {
    on: {},
    request: (t) => ({ path: '/documents/delete', form: { ids: [t.document], return_to: '/documents' }, follow: true }),
    ok: 303,
    shows: (a) => says(a, 'Deleted “'),
    effect: (c) => must(after(c, 'documents', c.t.document)?.trashed_at, 'D in the trash'),
  },
  'GET /documents/:id': page((t) => `/documents/${t.document}`),
  'GET /documents/:id/file': page((t) => `/documents/${t.document}/file`),
  // D is a PDF: the browser's own viewer shows it, from the original.
  'GET /documents/:id/view': { request: (t) => ({ path: `/documents/${t.document}/view` }), ok: 302 },
  'GET /documents/:id/thumbnail.webp': page((t) => `/documents/${t.document}/thumbnail.webp`),
  'GET /documents/:id/delete': page((t) => `/documents/${t.document}/delete`),
  'POST /documents/:id/delete': form((t) => `/documents/${t.document}/delete`, () => ({}), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'documents', c.t.document)?.trashed_at, 'D in the trash'),
  }),
  'POST /documents/:id/rename': form((t) => `/documents/${t.document}/rename`, (_t, _as, m) => ({ filename: `renamed-${m.next()}.txt` }), {
    on: {},
    ok: 303,
    effect: (c) => must(after(c, 'documents', c.t.document)?.filename.startsWith('renamed-'), 'D renamed'),
  }),
  // To a project the person edits: their own default one.
  'POST /documents/:id/move': {
    on: {},
    request: async (t, as, m) => ({ path: `/documents/${t.document}/move`, form: { project_id: await ownDefault(m, as) } }),
    ok: 303,
    effect: async (c) => must(after(c, 'documents', c.t.document)?.project_id === (await ownDefault(c.m, c.as)), "D in the mover's project"),
  },
  // The document page's label editor: D's labels become exactly those named.
  'POST /documents/:id/labels': form((t) => `/documents/${t.document}/labels`, () => ({ labels: 'from the web, second' }), {
    on: {},
    ok: 303,
    effect: (c) => must(added(c, 'document_labels').filter((x) => x.document_id === c.t.document).length === 2, 'D labelled twice'),
  }),
  'POST /documents/:id/retry': form((t) => `/documents/${t.failed}/retry`, () => ({}), { ok: 303, effect: (c) => must(retried(c), 'F indexed again') }),
  'GET /trash': page(
    () => '/trash',
    (text, t) => text.includes(`/trash/${t.trashed}/restore`),
  ),
  // The Undo of a delete's notice: the trashed documents named in `ids`.
  'POST /trash/restore': {
    on: { trash: true },
    request: (t) => ({ path: '/trash/restore', form: { ids: [t.trashed], return_to: '/documents' }, follow: true }),
    ok: 303,
    shows: (a) => says(a, 'Restored “'),
    effect: (c) => must(after(c, 'documents', c.t.trashed)?.trashed_at === null, 'T out of the trash'),
  },
  'POST /trash/:id/restore': form((t) => `/trash/${t.trashed}/restore`, () => ({}), {
    on: { trash: true },
    ok: 303,
    effect: (c) => must(after(c, 'documents', c.t.trashed)?.trashed_at === null, 'T out of the trash'),
  }),
  'GET /trash/:id/purge': page((t) => `/trash/${t.trashed}/purge`),
  'POST /trash/:id/purge': form((t) => `/trash/${t.trashed}/purge`, () => ({}), {
    on: { trash: true },
    ok: 303,
    effect: (c) => must(!after(c, 'documents', c.t.trashed), 'T purged'),
  }),
  'GET /search': page(
    () => `/search?q=${WORD}+handbook&view=passages`,
    (text, t) => text.includes(`/documents/${t.document}`),
  ),
  // The search page's Save form, shared with P: the project's editors share, its viewers may not.
  'POST /search/save': form(() => '/search/save', (t, _as, m) => ({ name: `web ${m.next()}`, q: `${WORD} handbook`, labels: 'matrix', share: t.project }), {
    ok: 303,
    effect: (c) => must(added(c, 'saved_searches').some((v) => v.project_id === c.t.project && v.user_id === c.as.user.id), "the caller's saved search shared with P"),
  }),
  // The sidebar's Rename and Delete of a saved search: V is Alice's, shared with P; its members see it, only she changes it.
  'POST /search/saved/:id/rename': form((t) => `/search/saved/${t.saved}/rename`, (_t, _as, m) => ({ name: `web renamed ${m.next()}` }), {
    on: { saved: true },
    ok: 303,
    effect: (c) => must(String(after(c, 'saved_searches', c.t.saved)?.name).startsWith('web renamed'), 'V renamed'),
  }),
  'GET /search/saved/:id/delete': { on: { saved: true }, ...page((t) => `/search/saved/${t.saved}/delete`) },
  'POST /search/saved/:id/delete': form((t) => `/search/saved/${t.saved}/delete`, () => ({}), {
    on: { saved: true },
    ok: 303,
    effect: (c) => must(!after(c, 'saved_searches', c.t.saved), 'V deleted'),
  }),
  // The settings pages and forms: each person's own keys, account, applications, connected apps, second factors, sessions.
  'GET /settings/keys': page(() => '/settings/keys'),
  'POST /settings/keys': form(() => '/settings/keys', () => ({ name: 'web key', scopes: ['read:documents'] }), {
    ok: 303,
    effect: (c) => must(added(c, 'api_keys').some((k) => k.user_id === c.as.user.id), "a key of the person's"),
  }),
  'GET /settings/keys/:id/revoke': { request: async (_t, as, m) => ({ path: `/settings/keys/${await ownKey(m, as)}/revoke` }), ok: 200 },
  'POST /settings/keys/:id/revoke': {
    request: async (_t, as, m) => ({ path: `/settings/keys/${await ownKey(m, as)}/revoke`, form: {} }),
    ok: 302,
    effect: (c) => must(revoked(c, 'api_keys', c.as.user.id), 'their key revoked'),
  },
  'GET /settings/account': page(() => '/settings/account'),
  'POST /settings/account/email': form(() => '/settings/account/email', (_t, as) => ({ password: as.user.password, email: `new-${as.user.email}` }), {
    ok: 303,
    effect: (c) => must(after(c, 'users', c.as.user.id)?.email === `new-${c.as.user.email}`, 'their e-mail changed'),
    undo: async (c) => void (await c.as.web.post('/settings/account/email', { _csrf: c.as.csrf, password: c.as.user.password, email: c.as.user.email })),
  }),
  'POST /settings/account/password': form(
    () => '/settings/account/password',
    (_t, as) => ({ current_password: as.user.password, new_password: as.user.password, new_password_again: as.user.password }),
    { ok: 303, effect: (c) => must(after(c, 'users', c.as.user.id)?.password_hash !== JSON.parse(c.before.get('users')!.get(c.as.user.id)!).password_hash, 'their password set anew') },
  ),
  'GET /settings/applications': page(() => '/settings/applications'),
  'POST /settings/applications': form(() => '/settings/applications', () => ({ name: 'Matrix app', redirect_uris: 'https://app.example.com/callback' }), {
    ok: 303,
    effect: (c) => must(added(c, 'oauth_clients').some((x) => x.user_id === c.as.user.id), "an application of the person's"),
  }),
  'GET /settings/applications/:id/rotate': { request: async (_t, as, m) => ({ path: `/settings/applications/${await ownApp(m, as)}/rotate` }), ok: 200 },
  'GET /settings/applications/:id/delete': { request: async (_t, as, m) => ({ path: `/settings/applications/${await ownApp(m, as)}/delete` }), ok: 200 },
  'POST /settings/applications/:id/delete': {
    request: async (_t, as, m) => ({ path: `/settings/applications/${await ownApp(m, as)}/delete`, form: {} }),
    ok: 302,
    effect: (c) => must(rows(c.before, 'oauth_clients').some((x) => x.user_id === c.as.user.id && !after(c, 'oauth_clients', x.id)), 'their application deleted'),
  },
  'POST /settings/applications/:id/rotate': {
    request: async (_t, as, m) => ({ path: `/settings/applications/${await ownApp(m, as)}/rotate`, form: {} }),
    ok: 303,
    effect: (c) => must(rows(c.before, 'oauth_clients').some((x) => x.user_id === c.as.user.id && after(c, 'oauth_clients', x.id)?.secret_hash !== x.secret_hash), 'their secret rotated'),
  },
  'GET /settings/connected': page(() => '/settings/connected'),
  'GET /settings/connected/:clientId/revoke': { request: (_t, _as, m) => ({ path: `/settings/connected/${m.connectedApp}/revoke` }), ok: 200 },
  'POST /settings/connected/:clientId/revoke': {
    request: (_t, _as, m) => ({ path: `/settings/connected/${m.connectedApp}/revoke`, form: {} }),
    ok: 302,
    effect: (c) => must(rows(c.after, 'oauth_grants').some((g) => g.user_id === c.as.user.id && g.client_id === c.m.connectedApp && g.revoked_at !== null), 'their grant revoked'),
    undo: (c) => c.m.connect(c.as.user),
  },
  'GET /settings/security': page(() => '/settings/security'),
  'POST /settings/security/totp/start': form(() => '/settings/security/totp/start', () => ({}), {
    ok: 303,
    effect: (c) => must(after(c, 'totp_secrets', c.as.user.id)?.enabled_at === null, 'an authenticator key being set up'),
  }),
  'POST /settings/security/totp': {
    request: async (_t, as) => {
      await as.web.post('/settings/security/totp/start', { _csrf: as.csrf });
      const secret = /id="totp-secret">([A-Z2-7]+)</.exec((await as.web.get('/settings/security')).text)?.[1];
      return { path: '/settings/security/totp', form: { code: secret ? totpCode(secret) : '000000' } };
    },
    ok: 303,
    effect: (c) => must(after(c, 'totp_secrets', c.as.user.id)?.enabled_at, 'the authenticator app on'),
    undo: withoutTotp,
  },
  'POST /settings/security/totp/disable': {
    request: async (_t, as, m) => {
      await withTotp(m, as);
      return { path: '/settings/security/totp/disable', form: { password: as.user.password } };
    },
    ok: 303,
    effect: (c) => must(!after(c, 'totp_secrets', c.as.user.id), 'the authenticator app off'),
  },
  'POST /settings/security/recovery-codes': form(() => '/settings/security/recovery-codes', (_t, as) => ({ password: as.user.password }), {
    ok: 303,
    effect: (c) => must(added(c, 'recovery_codes').some((x) => x.user_id === c.as.user.id), 'new recovery codes'),
  }),
  // A passkey of a software authenticator (test/helpers/soft-passkey.ts); each row removes its passkeys after itself.
  'POST /settings/security/passkeys/options': { request: () => ({ path: '/settings/security/passkeys/options', jsonBody: {} }), ok: 200 },
  'POST /settings/security/passkeys': {
    request: async (_t, as, m) => {
      const options = await as.web.request('POST', '/settings/security/passkeys/options', undefined, { 'x-csrf-token': as.csrf, accept: 'application/json' });
      const response = options.status === 200 ? registrationResponse(JSON.parse(options.text), m.publicUrl) : {};
      return { path: '/settings/security/passkeys', jsonBody: { response, name: 'Matrix key' } };
    },
    ok: 200,
    effect: (c) => must(added(c, 'passkeys').some((k) => k.user_id === c.as.user.id), 'a passkey of theirs'),
    undo: (c) => c.m.withoutPasskeys(c.as),
  },
  'POST /settings/security/passkeys/:id/rename': {
    request: async (_t, as, m) => ({ path: `/settings/security/passkeys/${await m.passkey(as)}/rename`, form: { name: 'renamed' } }),
    ok: 303,
    effect: (c) => must(rows(c.after, 'passkeys').some((k) => k.user_id === c.as.user.id && k.name === 'renamed'), 'their passkey renamed'),
    undo: (c) => c.m.withoutPasskeys(c.as),
  },
  'POST /settings/security/passkeys/:id/remove': {
    request: async (_t, as, m) => ({ path: `/settings/security/passkeys/${await m.passkey(as)}/remove`, form: { password: as.user.password } }),
    ok: 303,
    effect: (c) => must(rows(c.before, 'passkeys').some((k) => k.user_id === c.as.user.id && !after(c, 'passkeys', k.id)), 'their passkey removed'),
  },
  'POST /settings/security/passkey-sign-in': {
    request: async (_t, as, m) => {
      await m.passkey(as);
      return { path: '/settings/security/passkey-sign-in', form: { sign_in: 'alone' } };
    },
    ok: 303,
    effect: (c) => must(after(c, 'users', c.as.user.id)?.passkey_sign_in === 1, 'their passkeys sign them in alone'),
    undo: (c) => c.m.withoutPasskeys(c.as),
  },
  'POST /settings/security/sessions/:handle/end': {
    request: async (_t, as, m) => ({ path: `/settings/security/sessions/${await otherSession(m, as)}/end`, form: {} }),
    ok: 303,
    effect: (c) => must(rows(c.before, 'sessions').some((x) => x.user_id === c.as.user.id && !after(c, 'sessions', x.id_hash)), 'their other session ended'),
  },
  'POST /settings/security/sessions/end-others': {
    request: async (_t, as, m) => {
      await otherSession(m, as);
      return { path: '/settings/security/sessions/end-others', form: {} };
    },
    ok: 303,
    effect: (c) => must(rows(c.before, 'sessions').some((x) => x.user_id === c.as.user.id && !after(c, 'sessions', x.id_hash)), 'their other sessions ended'),
  },
  // Admin: accounts, groups, the sharing policy. An account or a group made for the row is what each cell acts on.
  'GET /admin': { request: () => ({ path: '/admin' }), ok: 302 },
  'GET /admin/users': page(() => '/admin/users'),
  'POST /admin/users/invite': form(() => '/admin/users/invite', (_t, _as, m) => ({ email: `invited-${m.next()}@example.com` }), {
    ok: 303,
    effect: (c) => must(added(c, 'invites').length === 1, 'an invitation'),
  }),
  'POST /admin/users/:id/disable': form((t) => `/admin/users/${t.account}/disable`, () => ({}), {
    on: { account: 'active' },
    ok: 303,
    effect: (c) => must(after(c, 'users', c.t.account)?.disabled_at, 'the account disabled'),
  }),
  'POST /admin/users/:id/enable': form((t) => `/admin/users/${t.account}/enable`, () => ({}), {
    on: { account: 'disabled' },
    ok: 303,
    effect: (c) => must(after(c, 'users', c.t.account)?.disabled_at === null, 'the account enabled'),
  }),
  'POST /admin/users/:id/admin': form((t) => `/admin/users/${t.account}/admin`, () => ({ admin: 'on' }), {
    on: { account: 'active' },
    ok: 303,
    effect: (c) => must(after(c, 'users', c.t.account)?.is_admin === 1, 'the account an admin'),
  }),
  'POST /admin/users/:id/reset-link': form((t) => `/admin/users/${t.account}/reset-link`, () => ({}), {
    on: { account: 'active' },
    ok: 303,
    effect: (c) => must(added(c, 'password_resets').some((r) => r.user_id === c.t.account), 'a reset link for the account'),
  }),
  'POST /admin/invitations/:id/revoke': {
    // An invitation Frank made for the cell.
    request: async (_t, _as, m) => {
      const made = await api(m.d, '/api/v1/admin/invitations', { token: m.users.frank.apiKey, body: { emails: [`web-revoked-${m.next()}@example.com`], send: false } });
      return { path: `/admin/invitations/${made.body.invitations[0].id}/revoke`, form: {} };
    },
    ok: 303,
    effect: (c) => must(rows(c.after, 'invites').length === rows(c.before, 'invites').length - 1, 'the invitation gone'),
  },
  'GET /admin/mail': page(() => '/admin/mail'),
  'POST /admin/mail/test': form(() => '/admin/mail/test', () => ({}), { ok: 303 }),
  'POST /admin/mail/retry': form(() => '/admin/mail/retry', () => ({}), { ok: 303 }),
  // The confirmation is one's own; another account's goes back to the list.
  'GET /admin/users/:id/admin': { on: { account: 'active' }, request: (t) => ({ path: `/admin/users/${t.account}/admin` }), ok: 302 },
  'GET /admin/users/:id/disable': { on: { account: 'active' }, request: (t) => ({ path: `/admin/users/${t.account}/disable` }), ok: 200 },
  'GET /admin/users/:id/delete': { on: { account: 'active' }, request: (t) => ({ path: `/admin/users/${t.account}/delete` }), ok: 200 },
  'POST /admin/users/:id/delete': form((t) => `/admin/users/${t.account}/delete`, (_t, _as, m) => ({ transfer_to: m.users.frank.email }), {
    on: { account: 'active' },
    ok: 303,
    effect: (c) => must(after(c, 'users', c.t.account)?.deleted_at, 'the account deleted'),
  }),
  'GET /admin/groups': page(() => '/admin/groups'),
  'POST /admin/groups': form(() => '/admin/groups', (_t, _as, m) => ({ name: `group ${m.next()}`, description: '' }), {
    ok: 303,
    effect: (c) => must(added(c, 'groups').length === 1, 'a group'),
  }),
  'GET /admin/groups/:id': { on: { group: true }, request: (t) => ({ path: `/admin/groups/${t.group}` }), ok: 200 },
  'POST /admin/groups/:id/delete': form((t) => `/admin/groups/${t.group}/delete`, () => ({ confirm: 'yes' }), {
    on: { group: true },
    ok: 303,
    effect: (c) => must(!after(c, 'groups', c.t.group), 'the group deleted'),
  }),
  'POST /admin/groups/:id/members': form((t) => `/admin/groups/${t.group}/members`, (_t, _as, m) => ({ email: m.users.carol.email }), {
    on: { group: true },
    ok: 303,
    effect: (c) => must(keyed(c.after, 'group_members', `${c.t.group}:${c.m.users.carol.id}`).length === 1, 'Carol in the group'),
  }),
  'POST /admin/groups/:id/members/:user_id/remove': {
    on: { group: true },
    request: (t, _as, m) => ({ path: `/admin/groups/${t.group}/members/${m.users.eve.id}/remove`, form: {} }),
    ok: 303,
    effect: (c) => must(keyed(c.after, 'group_members', `${c.t.group}:${c.m.users.eve.id}`).length === 0, 'Eve out of the group'),
  },
  'GET /admin/sharing': page(() => '/admin/sharing'),
  'POST /admin/sharing': form(() => '/admin/sharing', () => ({ policy: 'groups' }), {
    ok: 303,
    effect: (c) => must(JSON.stringify(rows(c.after, 'settings')).includes('groups'), 'the policy "groups"'),
    undo: async (c) => void (await c.as.web.post('/admin/sharing', { _csrf: c.as.csrf, policy: 'anyone' })),
  }),
  'GET /admin/audit': page(() => '/admin/audit'),
  'GET /admin/sources': page(() => '/admin/sources'),
  'GET /notices': page(() => '/notices'),
  // Who may post it; the world holds no notice to mark (only a source's alert makes one), so what it marks is proven
  // in test/sources/edit-guard-notices.test.ts (the bell's unread count gone after it).
  'POST /notices/read': form(() => '/notices/read', () => ({}), { ok: 303 }),
};

// ---------------------------------------------------------------------------------------------------------------
// MCP

const tool = (name: string, args: (t: Target, m: Matrix) => Record<string, unknown>, rest: Omit<Spec<McpRequest>, 'request' | 'ok'> = {}): Spec<McpRequest> => ({
  request: (t, _as, m) => ({ tool: name, arguments: args(t, m) }),
  ok: 200,
  ...rest,
});

const MCP: Record<string, Spec<McpRequest>> = {
  'tool list_projects': tool('list_projects', () => ({}), { shows: (a, t) => includes(a.body, t.project) }),
  'tool search': tool('search', (t) => ({ query: `${WORD} handbook`, project_id: t.project }), { shows: (a, t) => includes(a.body, t.document) }),
  // With facets: they count P's documents only, at least those listed (a refused cell answers no counts at all).
  'tool list_documents': tool('list_documents', (t) => ({ project_id: t.project, facets: ['project'] }), {
    shows: (a, t) => {
      const counts = a.body.facets.project as { value: string; count: number }[];
      must(counts.every((v) => v.value === t.project), `facets that count only P's documents (${JSON.stringify(counts)})`);
      must((counts[0]?.count ?? 0) >= a.body.documents.length, `P's count (${counts[0]?.count}) covers the ${a.body.documents.length} documents listed`);
      return includes(a.body, t.document);
    },
  }),
  'tool get_document': tool('get_document', (t) => ({ document_id: t.document })),
  'tool get_documents': tool('get_documents', (t) => ({ document_ids: [t.document] })),
  'tool add_document': tool('add_document', (t, m) => ({ project_id: t.project, filename: `mcp-${m.next()}.txt`, text: `added ${m.next()}` }), {
    effect: (c) => must(added(c, 'documents').some((x) => x.project_id === c.t.project), 'a document in P'),
  }),
  'resources/list': { request: () => ({ list: 'resources' }), ok: 200, shows: (a, t) => includes(a.body, `docsearch://documents/${t.document}`) },
  'resource docsearch://documents/{id}': { request: (t) => ({ read: `docsearch://documents/${t.document}` }), ok: 200 },
};

export const SPECS: Specs = { rest: REST, web: WEB, mcp: MCP };
