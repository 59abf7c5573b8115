/**
 * The one place that decides what a principal may do with a project (docs/permissions.md). Every surface — the
 * REST API, the web pages and forms, MCP (through the REST handlers), search, thumbnails and originals — asks it,
 * and none filters by owner itself.
 *
 * What decides: the user's grants (owner of record, their own rows, their groups' rows: the highest counts), the
 * credential's scopes (read:documents reads, write:documents changes) and a key's project limit. An account that
 * is disabled or deleted has no credential that resolves at all (auth/), so it never reaches here.
 *
 * Nothing is cached between requests: an unshare or a removal from a group takes effect at the next request, on
 * every replica. Within one request the grants are read once (`roles` remembers them per actor object).
 *
 * Refusals: a project (or document) the actor may not read is `not_found`, exactly as one that does not exist, so
 * its existence does not leak; one they read but may not change is `forbidden` (403), naming their role.
 */
import { actingAsAdmin } from '../core/audit.js';
import { KEYS_SCOPE, type Scope } from '../auth/scopes.js';
import { AppError, notFound } from '../core/errors.js';
import type { DocumentRecord, DocumentStore } from '../store/sql/documents.js';
import type { Grant, ProjectMemberStore } from '../store/sql/project-members.js';
import type { Project, ProjectStore } from '../store/sql/projects.js';
import type { UserStore } from '../store/sql/users.js';
import { ACTION_ROLE, ACTION_SCOPE, higher, type ProjectAction, type Role, roleAllows } from './roles.js';

/** Who is asking: a user, through a credential with scopes and perhaps a project limit. */
export interface Actor {
  userId: string;
  /** The credential's scopes (a signed-in browser holds read:documents and write:documents). */
  scopes: readonly string[];
  /** A key limited to these projects; null: every project the user may read. */
  projectLimit: readonly string[] | null;
}

/** A browser signed in as `userId`: the person themselves, with every document scope and no project limit. */
export const sessionActor = (userId: string): Actor => ({ userId, scopes: ['read:documents', 'write:documents'], projectLimit: null });

/** What access asks of a saved search. */
type SavedSearchAccess = { userId: string; projectId: string | null; search: Record<string, unknown> };

export interface AccessDeps {
  grants: Pick<ProjectMemberStore, 'grantsOf' | 'holders'>;
  projects: Pick<ProjectStore, 'get' | 'heads' | 'defaultId'>;
  documents: Pick<DocumentStore, 'get' | 'getMany' | 'trashed'>;
  users: Pick<UserStore, 'findById'>;
}

const forbidden = (message: string, details?: unknown) => new AppError('forbidden', message, { details });

function scopeRefused(scope: Scope): AppError {
  return new AppError('insufficient_scope', `this credential lacks the ${scope} scope`, { details: { required_scope: scope } });
}

export class AccessControl {
  private readonly asked = new WeakMap<Actor, Promise<Map<string, Role>>>();

  constructor(private readonly deps: AccessDeps) {}

  /**
   * Every project the actor may read, with their effective role on it: the highest of their grants, within the
   * credential's project limit.
   */
  roles(actor: Actor): Promise<Map<string, Role>> {
    let roles = this.asked.get(actor);
    if (!roles) {
      roles = this.deps.grants.grantsOf(actor.userId).then((grants) => effectiveRoles(grants, actor.projectLimit));
      this.asked.set(actor, roles);
    }
    return roles;
  }

  /** The ids of every project the actor may read. */
  async readable(actor: Actor): Promise<string[]> {
    return [...(await this.roles(actor)).keys()];
  }

  /** The actor's role on a project, or null when they may not read it. */
  async roleOn(actor: Actor, projectId: string): Promise<Role | null> {
    return (await this.roles(actor)).get(projectId) ?? null;
  }

  /**
   * Throws unless the actor may do `action` with the project (see the refusals above); their role when they may.
   * `scope` stands in for the action's own where an owner only reads (the member list).
   */
  async check(actor: Actor, projectId: string, action: ProjectAction, opts: { what?: string; scope?: Scope } = {}): Promise<Role> {
    const role = await this.roleOn(actor, projectId);
    if (!role) throw notFound(opts.what ?? 'project');
    const scope = opts.scope ?? ACTION_SCOPE[action];
    if (!actor.scopes.includes(scope)) throw scopeRefused(scope);
    if (!roleAllows(role, action)) {
      throw forbidden(`your role on this project is ${role}: this needs ${ACTION_ROLE[action]}`, { role, required_role: ACTION_ROLE[action] });
    }
    return role;
  }

  /** The project with its counts, when the actor may do `action` with it. */
  async project(actor: Actor, projectId: string, action: ProjectAction, opts: { scope?: Scope } = {}): Promise<{ project: Project; role: Role }> {
    const role = await this.check(actor, projectId, action, opts);
    const project = await this.deps.projects.get(projectId);
    if (!project) throw notFound('project');
    return { project, role };
  }

  /**
   * The document, when the actor may do `action` with its project. A refusal of a document they can read names it,
   * its project, their role and the role needed; one they cannot read stays `not_found`.
   */
  async document(actor: Actor, documentId: string, action: ProjectAction): Promise<{ document: DocumentRecord; role: Role }> {
    const document = await this.deps.documents.get(documentId);
    if (!document) throw notFound('document');
    const held = await this.roleOn(actor, document.projectId);
    if (held && actor.scopes.includes(ACTION_SCOPE[action]) && !roleAllows(held, action)) throw await this.documentRefused(document, held, action);
    const role = await this.check(actor, document.projectId, action, { what: 'document' });
    return { document, role };
  }

  /** Why `document` is refused to someone who holds `role` on its project: the document, the project, the role held and the one needed. */
  async documentRefused(document: DocumentRecord, role: Role, action: ProjectAction): Promise<AppError> {
    const project = await this.deps.projects.get(document.projectId);
    const needed = ACTION_ROLE[action];
    return forbidden(`"${document.filename}" is in the project "${project?.name ?? document.projectId}", where your role is ${role}: this needs ${needed}`, {
      role,
      required_role: needed,
      document_id: document.id,
      project_id: document.projectId,
    });
  }

  /**
   * A document in the trash, when the actor edits its project: the trash is theirs to see (`read`), restore and
   * purge (`edit`). Anyone else — a viewer too — finds no such entry (`not_found`); a credential without the action's
   * scope is refused.
   */
  async trashed(actor: Actor, documentId: string, action: 'read' | 'edit'): Promise<DocumentRecord> {
    const document = await this.deps.documents.trashed(documentId);
    const role = document ? await this.roleOn(actor, document.projectId) : null;
    if (!document || !role || !roleAllows(role, 'edit')) throw notFound('document');
    const scope = ACTION_SCOPE[action];
    if (!actor.scopes.includes(scope)) throw scopeRefused(scope);
    return document;
  }

  /** The projects whose trash the actor sees: those they edit (within a key's limit), or of `requested` (each readable, else `not_found`). */
  async trashScope(actor: Actor, requested?: string): Promise<string[]> {
    const roles = await this.roles(actor);
    if (requested !== undefined && !roles.has(requested)) throw new AppError('not_found', `project "${requested}" not found`, { details: { project_id: requested } });
    return [...roles].filter(([id, role]) => roleAllows(role, 'edit') && (requested === undefined || id === requested)).map(([id]) => id);
  }

  /**
   * The documents among `ids` the actor may do `action` with, in the order of `ids` (the others, unreadable or
   * absent, are left out silently: a bulk form acts on what it may).
   */
  async documents(actor: Actor, ids: string[], action: ProjectAction): Promise<DocumentRecord[]> {
    return (await this.sortDocuments(actor, ids, action)).allowed;
  }

  /**
   * The documents among `ids` the actor may do `action` with, and those they may read but not do it with (with the
   * role they hold): a bulk form says which were left out and why. Unreadable or absent ones are in neither.
   */
  async sortDocuments(actor: Actor, ids: string[], action: ProjectAction): Promise<{ allowed: DocumentRecord[]; refused: { document: DocumentRecord; role: Role }[] }> {
    if (!actor.scopes.includes(ACTION_SCOPE[action])) return { allowed: [], refused: [] };
    const roles = await this.roles(actor);
    const allowed: DocumentRecord[] = [];
    const refused: { document: DocumentRecord; role: Role }[] = [];
    // The store answers in its own order; what is done and said follows the order asked.
    const order = new Map(ids.map((id, i) => [id, i] as const));
    const found = (await this.deps.documents.getMany(ids)).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    for (const d of found) {
      const role = roles.get(d.projectId);
      if (role === undefined) continue;
      if (roleAllows(role, action)) allowed.push(d);
      else refused.push({ document: d, role });
    }
    return { allowed, refused };
  }

  /**
   * The projects a search or a listing covers: every readable one, or those of `requested` (each must be readable,
   * else `not_found` naming the first that is not, as REST and MCP say of any other unknown id).
   */
  async scope(actor: Actor, requested?: readonly string[]): Promise<string[]> {
    const roles = await this.roles(actor);
    if (!requested) return [...roles.keys()];
    const unknown = requested.filter((id) => !roles.has(id));
    if (unknown.length > 0) throw new AppError('not_found', `project "${unknown[0]}" not found`, { details: { project_ids: unknown } });
    return [...new Set(requested)];
  }

  /**
   * Where an upload goes: the named project (the actor must edit it), or else the user's own default project —
   * for a key limited to projects, the one of them the user may edit (none: refused as a viewer is; two or more: name one).
   */
  async uploadTarget(actor: Actor, projectId?: string): Promise<string> {
    if (projectId) {
      await this.check(actor, projectId, 'edit');
      return projectId;
    }
    if (actor.projectLimit) {
      const editable = [...(await this.roles(actor))].filter(([, role]) => roleAllows(role, 'edit')).map(([id]) => id);
      if (editable.length === 1) return editable[0]!;
      if (editable.length === 0) throw forbidden('this key is limited to projects where your role is viewer: uploading needs editor', { role: 'viewer', required_role: 'editor' });
      throw new AppError('invalid_request', 'this key is limited to projects: name one with project_id', { details: { project_ids: actor.projectLimit } });
    }
    const id = await this.deps.projects.defaultId(actor.userId);
    await this.check(actor, id, 'edit');
    return id;
  }

  /**
   * Whether the actor may see and revoke one of its user's API keys (whose limit is `keyLimit`): a credential without a
   * project limit, any of them; a key limited to projects, only keys limited within its own limit — never an
   * unlimited one, which would reach further than it does. It makes keys within that limit too (keys.create).
   */
  keyWithin(actor: Actor, keyLimit: readonly string[] | null): boolean {
    if (!actor.projectLimit) return true;
    const own = new Set(actor.projectLimit);
    return keyLimit !== null && keyLimit.every((id) => own.has(id));
  }

  /**
   * Whether the actor sees a saved search: one shared with a project they read (within a key's limit), and their
   * own — but not, through a key limited to projects, their own shared with a project outside its limit, nor their
   * own unshared one naming such a project (its ids, query and filters are of what the key may not read).
   */
  async seesSavedSearch(actor: Actor, saved: SavedSearchAccess): Promise<boolean> {
    return seesWith(await this.roles(actor), actor, saved);
  }

  /**
   * Throws unless the actor may do `action` with a saved search (null: none of that id): `read` (use it) one they
   * see (seesSavedSearch); `rename` and `delete` their own only — a member it is shared with is refused (403). Anyone
   * else finds none, as if it did not exist. Renaming one shared with a project takes the author's edit there still,
   * as sharing it did: a new name reaches its members, and an author since made a viewer or removed may no longer
   * put words before them (403); deleting it stays theirs.
   */
  async savedSearch(actor: Actor, saved: SavedSearchAccess | null, action: 'read' | 'rename' | 'delete'): Promise<void> {
    const refused = await this.savedSearchRefusal(actor, saved, action);
    if (refused) throw refused;
  }

  /**
   * Whether the actor may rename and delete each of these saved searches (a page offers only what it may), in their
   * order: one decision per search, on grants read once, for a sidebar of hundreds.
   */
  async savedSearchesOffer(actor: Actor, saved: readonly SavedSearchAccess[]): Promise<{ rename: boolean; delete: boolean }[]> {
    const roles = await this.roles(actor);
    return saved.map((v) => ({ rename: refusalWith(roles, actor, v, 'rename') === null, delete: refusalWith(roles, actor, v, 'delete') === null }));
  }

  /**
   * Whether the actor sees this saved search only as its author: it is shared with a project they no longer read
   * (removed, their group's grant gone). They see it to delete it, and learn nothing of that project through it — not
   * the labels its editors renamed since (docs/api.md#saved-searches).
   */
  async seesSavedSearchOnlyAsAuthor(actor: Actor, saved: SavedSearchAccess): Promise<boolean> {
    return saved.projectId !== null && saved.userId === actor.userId && (await this.roleOn(actor, saved.projectId)) === null;
  }

  /**
   * Whether a saved search's author still reads the project it is shared with (through any grant of theirs, whatever
   * their credential): once they do not, its members keep it but are not told who they are now (their e-mail).
   * `authors` keeps one actor per author across a list, so each author's grants are read once.
   */
  async savedSearchAuthorReads(saved: SavedSearchAccess, authors: Map<string, Actor> = new Map()): Promise<boolean> {
    if (saved.projectId === null) return true;
    let author = authors.get(saved.userId);
    if (!author) authors.set(saved.userId, (author = sessionActor(saved.userId)));
    return (await this.roles(author)).has(saved.projectId);
  }

  private async savedSearchRefusal(actor: Actor, saved: SavedSearchAccess | null, action: 'read' | 'rename' | 'delete'): Promise<AppError | null> {
    return refusalWith(await this.roles(actor), actor, saved, action);
  }

  /** Throws unless the actor may make a project (owned by them): a key limited to projects may not. */
  requireCreate(actor: Actor): void {
    if (!actor.scopes.includes('write:documents')) throw scopeRefused('write:documents');
    if (actor.projectLimit) throw forbidden('this key is limited to some projects: it cannot create projects');
  }

  /** Whether the user is an admin (and live). */
  async isAdmin(userId: string): Promise<boolean> {
    return (await this.deps.users.findById(userId))?.isAdmin === true;
  }

  /**
   * Who may change a project's documents and sources (its owners and editors, directly or through a group), live
   * and enabled: who is told when one of its sources needs someone.
   */
  managersOf(projectId: string): Promise<{ id: string; email: string }[]> {
    return this.deps.grants.holders(projectId, ['owner', 'editor']);
  }

  /** Throws `forbidden` unless the actor is an admin. */
  async requireAdmin(actor: Pick<Actor, 'userId'>): Promise<void> {
    if (!(await this.isAdmin(actor.userId))) throw forbidden('only an administrator may do this');
    // What the request changes from here on is an admin's doing (the audit log's `by: admin`).
    actingAsAdmin();
  }

  /**
   * Running the library (the admin API, the audit log): an admin (now, on every replica), through a credential not
   * limited to some projects (such a key is for those projects' documents) and not an application's token: an admin
   * who connects an application for their documents has not handed it the library (its consent screen asked for
   * documents only). The docsearch CLI's own login, which holds manage:keys, is the admin's, as at the keys.
   */
  async requireAdminCredential(actor: Actor & { kind: 'api_key' | 'oauth' }): Promise<void> {
    await this.requireAdmin(actor);
    if (actor.projectLimit !== null) throw forbidden('a key limited to some projects cannot use the admin API: use a key without a project limit');
    if (actor.kind === 'oauth' && !actor.scopes.includes(KEYS_SCOPE)) {
      throw forbidden("an application's access token cannot use the admin API: use an API key, or the docsearch command (docsearch login)");
    }
  }
}

/** seesSavedSearch, given the actor's roles. */
function seesWith(roles: Map<string, Role>, actor: Actor, saved: SavedSearchAccess): boolean {
  const own = saved.userId === actor.userId;
  if (saved.projectId === null) {
    const named = saved.search.project_ids;
    return own && (actor.projectLimit === null || !Array.isArray(named) || named.every((id) => actor.projectLimit!.includes(id as string)));
  }
  return (own && actor.projectLimit === null) || roles.has(saved.projectId);
}

/** Why the actor may not do `action` with a saved search (AccessControl.savedSearch), given their roles; null: they may. */
function refusalWith(roles: Map<string, Role>, actor: Actor, saved: SavedSearchAccess | null, action: 'read' | 'rename' | 'delete'): AppError | null {
  if (!saved || !seesWith(roles, actor, saved)) return notFound('saved search');
  const scope = action === 'read' ? 'read:documents' : 'write:documents';
  if (!actor.scopes.includes(scope)) return scopeRefused(scope);
  if (action !== 'read' && saved.userId !== actor.userId) return forbidden(`only its author may ${action} a saved search`);
  if (action === 'rename' && saved.projectId !== null) {
    const role = roles.get(saved.projectId) ?? null;
    if (!role || !roleAllows(role, 'edit')) {
      return forbidden('only an editor or owner of the project a saved search is shared with may rename it, as only they may share one: delete it, or ask an owner to make you an editor again', { role, required_role: 'editor' });
    }
  }
  return null;
}

/** The highest role per project among `grants`, kept to `limit` when the credential has one. */
export function effectiveRoles(grants: readonly Grant[], limit: readonly string[] | null): Map<string, Role> {
  const allowed = limit ? new Set(limit) : null;
  const roles = new Map<string, Role>();
  for (const g of grants) {
    if (allowed && !allowed.has(g.projectId)) continue;
    const had = roles.get(g.projectId);
    roles.set(g.projectId, had ? higher(had, g.role) : g.role);
  }
  return roles;
}
