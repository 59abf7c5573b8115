import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { lowerKey } from '../../../core/name-spellings.js';
import { emitJson } from '../../output/json.js';
import { CliError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';
import { listMembers, memberLabel, shareTarget } from './members.js';

export interface UnshareOptions {
  project: string;
  member: string;
  json: boolean;
}

export async function run(opts: UnshareOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const target = shareTarget(opts.member);
  const same = (a: string | undefined, b: string) => a !== undefined && lowerKey(a) === lowerKey(b);
  const member = (await listMembers(ctx, p.id)).find(
    (m) => m.id === opts.member || ('group' in target ? m.kind === 'group' && same(m.group, target.group) : m.kind === 'user' && same(m.email, target.email)),
  );
  if (!member) throw new CliError(`${opts.member} is not a member of project ${p.name}`, undefined, `see its members with \`docsearch projects members ${JSON.stringify(p.name)}\``);
  await ctx.http().delete(`/api/v1/projects/${encodeURIComponent(p.id)}/members/${encodeURIComponent(member.id)}`);
  if (opts.json) return emitJson(ctx, { removed: member.id });
  notice(ctx.io, `stopped sharing project ${p.name} with ${memberLabel(member)}; what they uploaded stays`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('unshare', {
    summary: 'stop sharing a project with a person or a group',
    description: 'Stop sharing a project with a person (their e-mail) or a group (group:NAME). What they uploaded stays in the project. Owners only; the owner of record cannot be removed (transfer the project first).',
    examples: ['docsearch projects unshare handbook bob@example.com', 'docsearch projects unshare handbook group:legal'],
  })
    .argument('<project>', 'project name or id')
    .argument('<member>', 'an e-mail, or group:NAME')
    .action((project: string, member: string) => runF({ project, member, json: Boolean(ctx.globals().json) }, ctx));
}
