import { type Project, type Source, SOURCE_LIST } from '../../api-types.js';
import type { Context } from '../../context.js';
import { CliError } from '../../../terminal/errors.js';
import { listAllProjects, resolveProject } from '../shared/resolve-project.js';

/** The sources of one project, or of every project of the caller when none is named. */
export async function listSources(ctx: Context, projectRef?: string): Promise<{ project: Project; sources: Source[] }[]> {
  const projects = projectRef ? [await resolveProject(ctx, projectRef, { offerCreate: false })] : await listAllProjects(ctx.http());
  const out = [];
  for (const project of projects) {
    const { sources } = await ctx.http().get(`/api/v1/projects/${encodeURIComponent(project.id)}/sources`, { shape: SOURCE_LIST });
    out.push({ project, sources });
  }
  return out;
}

/** A source by id, in the named project or in any project of the caller. */
export async function findSource(ctx: Context, id: string, projectRef?: string): Promise<{ project: Project; source: Source }> {
  for (const { project, sources } of await listSources(ctx, projectRef)) {
    const source = sources.find((s) => s.id === id);
    if (source) return { project, source };
  }
  throw new CliError(`source "${id}" not found on ${ctx.http().baseUrl}`, undefined, 'see your sources with `docsearch sources list`');
}

/** The path of a source under its project, for the API. */
export const sourcePath = (project: Pick<Project, 'id'>, source: Pick<Source, 'id'>) => `/api/v1/projects/${encodeURIComponent(project.id)}/sources/${encodeURIComponent(source.id)}`;

/** "active", or "paused: why", or "error: why", for a line of text. */
export const sourceState = (s: Source): string => (s.status === 'paused' ? `paused: ${s.paused_reason ?? ''}` : s.status === 'error' ? `error: ${s.error ?? ''}` : s.status);
