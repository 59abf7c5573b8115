import type { Command } from 'commander';
import { SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { UsageError } from '../../../terminal/errors.js';
import { notice } from '../../../terminal/io.js';
import { collect, defineCommand } from '../shared/command.js';
import { parseOption, readSecrets } from './add.js';
import { findSource, sourcePath } from './find-source.js';

export interface EditOptions {
  id: string;
  project?: string;
  every?: string;
  /** Options set (key=value), and removed. */
  set: Record<string, unknown>;
  unset: string[];
  include?: string[];
  exclude?: string[];
  /** Secret options whose new values come from stdin (or a prompt on a terminal). */
  secrets: string[];
  json: boolean;
}

/**
 * Changes a source in place: its schedule, options, globs and credentials (PATCH, which replaces the options: the
 * ones not named here are sent back as they are; a secret not named keeps its value, never shown). Its documents stay.
 */
export async function run(opts: EditOptions, ctx: Context): Promise<void> {
  const { project, source } = await findSource(ctx, opts.id, opts.project);
  const changesOptions = Object.keys(opts.set).length > 0 || opts.unset.length > 0 || opts.include !== undefined || opts.exclude !== undefined || opts.secrets.length > 0;
  if (!changesOptions && opts.every === undefined) throw new UsageError('nothing to change', 'give --every, --option, --unset, --include, --exclude or --secret');
  const options: Record<string, unknown> = { ...source.options, ...opts.set };
  for (const key of opts.unset) delete options[key];
  for (const key of ['include', 'exclude'] as const) {
    const given = opts[key];
    if (given === undefined) continue;
    // `--include ''` leaves every path in again.
    const globs = given.filter(Boolean);
    if (globs.length) options[key] = globs;
    else delete options[key];
  }
  Object.assign(options, await readSecrets(ctx, opts.secrets));
  const body = { ...(opts.every !== undefined ? { every: opts.every } : {}), ...(changesOptions ? { options } : {}) };
  const saved = await ctx.http().patch(sourcePath(project, source), body, { shape: SOURCE });
  if (opts.json) return emitJson(ctx, saved);
  const what = [opts.every !== undefined ? `every ${saved.every}` : null, changesOptions ? 'options' : null, opts.secrets.length ? `credentials (${opts.secrets.join(', ')})` : null].filter(Boolean).join(', ');
  notice(ctx.io, `saved ${what} of ${saved.url}: its documents stay${changesOptions ? ', and its next pass starts now' : ''} (docsearch sources show ${saved.id})`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('edit', {
    summary: "change a source's schedule, options, globs or credentials; its documents stay",
    description:
      "Change a source in place: --every its schedule, --option and --unset its options, --include and --exclude which paths it indexes (each replaces that list; '' empties it), " +
      '--secret a credential (read from stdin, one line each, or asked for on a terminal; never on the command line, never shown back). ' +
      'Options not named stay as they are, and so do its documents: a rotated password takes effect at the next pass, which starts at once.',
    examples: [
      "printf '%s\\n' \"$NEW_APP_PASSWORD\" | docsearch sources edit src_0m1abc2de3FgHiJkLmNoPq --secret password",
      "docsearch sources edit src_0m1abc2de3FgHiJkLmNoPq --every 30m --include '**/*.pdf' --include '**/*.md'",
      'docsearch sources edit src_0m1abc2de3FgHiJkLmNoPq --option username=bob --unset region',
    ],
  })
    .argument('<source>', 'source id')
    .option('--project <project>', 'the project it is in (default: looked for in all)')
    .option('--every <duration>', 'how often to look for changes: 15m, 1h, 1d')
    .option('--option <key=value>', "set one of the kind's options (repeatable; JSON values such as true or [\"a\"] are taken as such)", collect)
    .option('--unset <key>', 'remove one of its options (repeatable)', collect)
    .option('--include <glob>', 'index only paths matching; replaces the list (repeatable)', collect)
    .option('--exclude <glob>', 'leave out paths matching; replaces the list (repeatable)', collect)
    .option('--secret <name>', 'a new value for a secret option (password, secret_access_key), read from stdin or a prompt (repeatable)', collect)
    .action((id: string, flags: { project?: string; every?: string; option?: string[]; unset?: string[]; include?: string[]; exclude?: string[]; secret?: string[] }) =>
      runF(
        {
          id,
          project: flags.project,
          every: flags.every,
          set: (flags.option ?? []).reduce<Record<string, unknown>>((acc, raw) => parseOption(raw, acc), {}),
          unset: flags.unset ?? [],
          include: flags.include,
          exclude: flags.exclude,
          secrets: flags.secret ?? [],
          json: Boolean(ctx.globals().json),
        },
        ctx,
      ),
    );
}
