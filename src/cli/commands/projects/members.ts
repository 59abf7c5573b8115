import type { Command } from 'commander';
import { MEMBER_LIST, type ProjectMember } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { printTable } from '../../output/table.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';

export const ROLES = ['viewer', 'editor', 'owner'] as const;

/** `group:NAME` names a group; anything else is an account's e-mail (as on the web page's Share form). */
export const shareTarget = (member: string): { group: string } | { email: string } =>
  /^group:/i.test(member) ? { group: member.slice('group:'.length).trim() } : { email: member.trim() };

/** "bob@example.com" or "group:legal": how a member is named on the command line. */
export const memberLabel = (m: Pick<ProjectMember, 'kind' | 'email' | 'group'>): string => (m.kind === 'group' ? `group:${m.group ?? ''}` : (m.email ?? ''));

/** A project's members, its owner of record first (GET …/members: owners only). */
export async function listMembers(ctx: Context, projectId: string): Promise<ProjectMember[]> {
  return (await ctx.http().get(`/api/v1/projects/${encodeURIComponent(projectId)}/members`, { shape: MEMBER_LIST })).members;
}

export interface MembersOptions {
  project: string;
  json: boolean;
}

export async function run(opts: MembersOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const members = await listMembers(ctx, p.id);
  if (opts.json) return emitJson(ctx, { members }, 'members');
  printTable(ctx.io, { headers: ['ID', 'MEMBER', 'KIND', 'ROLE'], rows: members.map((m) => [m.id, memberLabel(m), m.kind, m.role]), now: ctx.now() });
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('members', {
    summary: 'list who a project is shared with, and their roles',
    description: 'List the people and groups a project is shared with and their roles, its owner of record first. Owners only.',
    examples: ['docsearch projects members handbook', 'docsearch projects members handbook --json'],
  })
    .argument('<project>', 'project name or id')
    .action((project: string) => runF({ project, json: Boolean(ctx.globals().json) }, ctx));
}
