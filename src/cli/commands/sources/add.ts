import type { Command } from 'commander';
import { SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { UsageError } from '../../../terminal/errors.js';
import { canPrompt, notice, readStdin, writeOut } from '../../../terminal/io.js';
import { collect, defineCommand, intOption } from '../shared/command.js';
import { resolveProject } from '../shared/resolve-project.js';
import { sourcePath } from './find-source.js';
import { waitForPass } from './pass-wait.js';

export interface AddOptions {
  project: string;
  url: string;
  kind?: string;
  every?: string;
  options: Record<string, unknown>;
  /** Names of secret options whose values come from stdin (or a prompt on a terminal). */
  secrets: string[];
  /** Wait for the first pass, and say what it did; with `timeout` seconds at most. */
  wait?: boolean;
  timeout?: number;
  json: boolean;
}

/**
 * The kinds' secret options (their `secretOptions` in src/sources/kinds/, which cli/ may not import): never taken from
 * the command line, where shell history and the process list keep them.
 */
const SECRET_OPTIONS = new Set(['password', 'secret_access_key']);

/** `--option key=value`: a value that parses as JSON (true, 3, ["a"]) is taken as such, anything else as text. */
export function parseOption(raw: string, into: Record<string, unknown>): Record<string, unknown> {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`--option ${raw}: expected key=value`, 'e.g. --option region=eu-west-1');
  const key = raw.slice(0, eq);
  // The message names the option, never its value.
  if (SECRET_OPTIONS.has(key)) throw new UsageError(`--option ${key}=…: a secret is never taken from the command line`, `give it on stdin instead: printf '%s\\n' "$SECRET" | docsearch sources … --secret ${key}`);
  const text = raw.slice(eq + 1);
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // plain text
  }
  return { ...into, [key]: value };
}

/** The values of secret options: a prompt each on a terminal, else one line each from stdin, in order. */
export async function readSecrets(ctx: Context, names: string[]): Promise<Record<string, string>> {
  if (names.length === 0) return {};
  if (canPrompt(ctx.io)) {
    const { password } = await import('@inquirer/prompts');
    const out: Record<string, string> = {};
    for (const name of names) out[name] = await password({ message: `${name}:` }, { input: ctx.io.stdin, output: ctx.io.stderr });
    return out;
  }
  const lines = (await readStdin(ctx.io)).split(/\r?\n/);
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    const value = lines[i];
    if (!value) throw new UsageError(`--secret ${name}: no line ${i + 1} on stdin`, `printf '%s\\n' "$PASSWORD" | docsearch sources add … --secret ${name}`);
    out[name] = value;
  });
  return out;
}

export async function run(opts: AddOptions, ctx: Context): Promise<void> {
  const project = await resolveProject(ctx, opts.project, { offerCreate: false });
  const options = { ...opts.options, ...(await readSecrets(ctx, opts.secrets)) };
  const body = {
    url: opts.url,
    ...(opts.kind ? { kind: opts.kind } : {}),
    ...(opts.every ? { every: opts.every } : {}),
    ...(Object.keys(options).length ? { options } : {}),
  };
  const source = await ctx.http().post(`/api/v1/projects/${encodeURIComponent(project.id)}/sources`, body, { shape: SOURCE });
  if (opts.wait) {
    // The id first (a script keeps it even when the pass fails), then what the first pass did.
    if (!opts.json) {
      notice(ctx.io, `added ${source.kind} source ${source.url} to ${project.name}, every ${source.every}`);
      writeOut(ctx.io, source.id);
    }
    return waitForPass(ctx, sourcePath(project, source), source, (opts.timeout ?? 1800) * 1000, opts.json);
  }
  if (opts.json) return emitJson(ctx, source);
  notice(ctx.io, `added ${source.kind} source ${source.url} to ${project.name}, every ${source.every}; its first pass is under way (docsearch sources show ${source.id})`);
  writeOut(ctx.io, source.id);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('add', {
    summary: 'add a source that keeps a project current',
    description:
      'Add a source to a project: a folder on the server (file:///srv/docs), a WebDAV or Nextcloud folder, an S3 bucket (s3://bucket/prefix), a Git repository, ' +
      'a web site or an IMAP mailbox (docs/sources.md). The kind comes from the URL unless --kind says it. Secret options (passwords, keys) are read ' +
      'from stdin, one line each, or asked for on a terminal, never taken from the command line. Prints the new source id on stdout.',
    examples: [
      'docsearch sources add handbook file:///srv/handbook --every 15m',
      "printf '%s\\n' \"$APP_PASSWORD\" | docsearch sources add team https://cloud.example.com/remote.php/dav/files/alice/Team/ --option username=alice --secret password",
      "printf '%s\\n' \"$SECRET_KEY\" | docsearch sources add reports s3://reports/2026/ --option endpoint=https://s3.example.com --option access_key_id=AKIA… --secret secret_access_key",
    ],
  })
    .argument('<project>', 'project name or id')
    .argument('<url>', 'what to keep the project current with')
    .option('--kind <kind>', 'folder, webdav, s3, git, web or imap (default: from the URL)')
    .option('--every <duration>', 'how often to look for changes: 15m, 1h (default), 1d')
    .option('--option <key=value>', "one of the kind's options (repeatable; JSON values such as true or [\"a\"] are taken as such)", collect)
    .option('--include <glob>', 'index only paths matching (repeatable)', collect)
    .option('--exclude <glob>', 'leave out paths matching (repeatable)', collect)
    .option('--secret <name>', 'a secret option (password, secret_access_key) read from stdin or a prompt (repeatable)', collect)
    .option('-w, --wait', 'wait until its first pass has ended, and say what it did (exit 1 if it failed)')
    .option('--timeout <seconds>', 'with --wait, give up after this many seconds', intOption('--timeout', 1, 86_400), 1800)
    .action((project: string, url: string, flags: { kind?: string; every?: string; option?: string[]; include?: string[]; exclude?: string[]; secret?: string[]; wait?: boolean; timeout: number }) => {
      let options = (flags.option ?? []).reduce<Record<string, unknown>>((acc, raw) => parseOption(raw, acc), {});
      if (flags.include) options = { ...options, include: flags.include };
      if (flags.exclude) options = { ...options, exclude: flags.exclude };
      return runF({ project, url, kind: flags.kind, every: flags.every, options, secrets: flags.secret ?? [], wait: Boolean(flags.wait), timeout: flags.timeout, json: Boolean(ctx.globals().json) }, ctx);
    });
}
