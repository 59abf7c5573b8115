import type { Command } from 'commander';
import { PROJECT } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { UsageError } from '../../../terminal/errors.js';
import { notice, writeOut } from '../../../terminal/io.js';
import { defineCommand } from '../shared/command.js';

export interface CreateOptions {
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  json: boolean;
}

/** `--metadata '{"team":"docs"}'`: a JSON object, checked before anything is sent. */
export function parseMetadata(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`--metadata is not valid JSON (${(err as Error).message})`, `pass an object, e.g. --metadata '{"team":"docs"}'`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--metadata must be a JSON object', `e.g. --metadata '{"team":"docs"}'`);
  return value as Record<string, unknown>;
}

export async function run(opts: CreateOptions, ctx: Context): Promise<void> {
  const body = { name: opts.name, ...(opts.description !== undefined ? { description: opts.description } : {}), ...(opts.metadata ? { metadata: opts.metadata } : {}) };
  const project = await ctx.http().post('/api/v1/projects', body, { shape: PROJECT });
  if (opts.json) return emitJson(ctx, project);
  notice(ctx.io, `created project ${project.name}`);
  writeOut(ctx.io, project.id);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('create', {
    summary: 'create a project',
    description: 'Create a project. Names are unique per account (case-insensitive). Prints the new project id on stdout.',
    examples: ['docsearch projects create handbook', `docsearch projects create contracts --description "Signed contracts" --metadata '{"team":"legal"}'`],
  })
    .argument('<name>', 'project name (1–100 characters)')
    .option('--description <text>', 'a description')
    .option('--metadata <json>', 'a JSON object stored with the project')
    .action((name: string, flags: { description?: string; metadata?: string }) =>
      runF({ name, description: flags.description, metadata: parseMetadata(flags.metadata), json: Boolean(ctx.globals().json) }, ctx),
    );
}
