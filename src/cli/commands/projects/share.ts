import { type Command, Option } from 'commander';
import { MEMBER } from '../../api-types.js';
import type { Context } from '../../context.js';
import { lowerKey } from '../../../core/name-spellings.js';
import { emitJson } from '../../output/json.js';
import { notice } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';
import { listMembers, memberLabel, ROLES, shareTarget } from './members.js';

export interface ShareOptions {
  project: string;
  member: string;
  /** Unset: a new member becomes a viewer, an existing one keeps their role. */
  role?: (typeof ROLES)[number];
  json: boolean;
}

export async function run(opts: ShareOptions, ctx: Context): Promise<void> {
  const p = await resolveProject(ctx, opts.project);
  const target = shareTarget(opts.member);
  if (!opts.role) {
    // Sharing again without --role must not quietly demote an editor or owner to the default viewer.
    // The server matches e-mails and group names ignoring case and in either Unicode spelling, and so does this.
    const named = lowerKey('group' in target ? `group:${target.group}` : target.email);
    const existing = (await listMembers(ctx, p.id)).find((m) => lowerKey(memberLabel(m)) === named);
    if (existing) {
      if (opts.json) return emitJson(ctx, existing);
      return notice(ctx.io, `${memberLabel(existing)} is already ${existing.role} of project ${p.name}; role unchanged (give --role to change it)`);
    }
  }
  const res = await ctx.http().answer('POST', `/api/v1/projects/${encodeURIComponent(p.id)}/members`, { json: { ...target, role: opts.role ?? 'viewer' }, shape: MEMBER });
  const member = res.body;
  if (opts.json) return emitJson(ctx, member);
  notice(ctx.io, res.status === 201 ? `shared project ${p.name} with ${memberLabel(member)} as ${member.role}` : `${memberLabel(member)} is now ${member.role} of project ${p.name}`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('share', {
    summary: 'share a project with a person or a group, or change their role',
    description:
      "Share a project with a person (their e-mail) or a group (group:NAME), or change the role they have: viewer (search and read), editor (also upload, rename, move and delete documents) or owner (also share, rename, delete and transfer the project). Owners only, within the server's sharing policy.",
    examples: ['docsearch projects share handbook bob@example.com', 'docsearch projects share handbook group:legal --role editor'],
  })
    .argument('<project>', 'project name or id')
    .argument('<member>', 'an e-mail, or group:NAME')
    .addOption(new Option('--role <role>', 'the role to give; without it someone new becomes a viewer and a member keeps theirs').choices(ROLES))
    .action((project: string, member: string, flags: { role?: ShareOptions['role'] }) => runF({ project, member, role: flags.role, json: Boolean(ctx.globals().json) }, ctx));
}
