import { lowerKey } from '../../../core/name-spellings.js';
import { PROJECT, PROJECT_PAGE, type Project } from '../../api-types.js';
import type { Context } from '../../context.js';
import { CancelledError, CliError } from '../../../terminal/errors.js';
import type { ApiClient } from '../../http.js';
import { canPrompt, notice } from '../../../terminal/io.js';

/** Every project of the caller, following next_cursor. */
export async function listAllProjects(http: ApiClient, signal?: AbortSignal): Promise<Project[]> {
  const all: Project[] = [];
  let cursor: string | undefined;
  do {
    const page = await http.get('/api/v1/projects', { query: { limit: 100, cursor }, shape: PROJECT_PAGE, ...(signal ? { signal } : {}) });
    all.push(...page.projects);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}

/** The one error for a project that does not exist, whichever command asked: exit 1 (like gh's "not found"). */
export function projectNotFound(ref: string, baseUrl: string, hint = 'see your projects with `docsearch projects list`'): CliError {
  return new CliError(`project "${ref}" not found on ${baseUrl}`, undefined, hint);
}

/**
 * A project by exact id, else by name (case-insensitive, either Unicode spelling). Names are unique per owner, but the caller may read
 * projects of several (shared with them): a name two of those share is refused, listing them with their owners, so
 * nothing is done to a project picked by guess.
 */
export function findProject(projects: Project[], ref: string): Project | undefined {
  const byId = projects.find((p) => p.id === ref);
  if (byId) return byId;
  // In either Unicode spelling: a name typed on macOS may come decomposed ("e" + U+0301).
  const named = projects.filter((p) => lowerKey(p.name) === lowerKey(ref));
  if (named.length <= 1) return named[0];
  const owner = (p: Project) => (p.owner === undefined ? '' : `  owned by ${p.owner ?? 'a deleted account'}`);
  const list = named.map((p) => `  ${p.id}  ${p.name}${owner(p)}`).join('\n');
  throw new CliError(`${named.length} of your projects are named "${ref}":\n${list}`, undefined, 'use the id');
}

/** Several projects by id or name, from one listing (`search --project a --project b`, `keys create --project`). */
export async function resolveProjects(ctx: Context, refs: readonly string[]): Promise<Project[]> {
  const http = ctx.http();
  const all = await listAllProjects(http);
  return refs.map((ref) => {
    const found = findProject(all, ref);
    if (!found) throw projectNotFound(ref, http.baseUrl);
    return found;
  });
}

/** The caller's default project (uploads without --project go there). */
export async function defaultProject(ctx: Context): Promise<Project> {
  const found = (await listAllProjects(ctx.http())).find((p) => p.is_default);
  if (!found) throw new CliError(`no default project on ${ctx.http().baseUrl}`, undefined, 'name one with --project');
  return found;
}

export interface ResolveOptions {
  /** `--create-project`: create a missing name without asking. */
  create?: boolean;
  /** May offer to create it on a terminal (upload); commands that act on an existing project pass false. */
  offerCreate?: boolean;
}

export async function resolveProject(ctx: Context, ref: string, opts: ResolveOptions = {}): Promise<Project> {
  const http = ctx.http();
  const found = findProject(await listAllProjects(http), ref);
  if (found) return found;
  if (opts.offerCreate) {
    let create = opts.create ?? false;
    if (!create && canPrompt(ctx.io)) {
      const { confirm } = await import('@inquirer/prompts');
      try {
        create = await confirm({ message: `Project "${ref}" does not exist on ${http.baseUrl}. Create it?`, default: true }, { input: ctx.io.stdin, output: ctx.io.stderr });
      } catch {
        throw new CancelledError();
      }
      if (!create) throw new CancelledError();
    }
    if (create) {
      const project = await http.post('/api/v1/projects', { name: ref }, { shape: PROJECT });
      notice(ctx.io, `created project ${project.name} (${project.id})`);
      return project;
    }
    throw projectNotFound(ref, http.baseUrl, `create it with \`docsearch projects create ${JSON.stringify(ref)}\`, or pass --create-project`);
  }
  throw projectNotFound(ref, http.baseUrl);
}
