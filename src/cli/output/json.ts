import type { Command } from 'commander';
import { ALL_JSON_FIELDS, type JsonList, JSON_FIELDS, JSON_LIST_COMMANDS } from '../api-types.js';
import { commandPath, findOption, takesValue } from '../completion/complete.js';
import type { Context } from '../context.js';
import { CliError, UsageError } from '../../terminal/errors.js';
import { writeJson } from '../../terminal/io.js';
import { closest } from '../commands/shared/suggest.js';

/** Options that make a command's optional argument unneeded (`search --saved NAME` takes no query): see takesFields. */
const argumentStandIns = new WeakMap<Command, readonly string[]>();

/** Marks `options` (long names) as standing in for `cmd`'s optional argument; returns `cmd`. */
export function standsInForArgument(cmd: Command, ...options: string[]): Command {
  argumentStandIns.set(cmd, options);
  return cmd;
}

/** The command `argv` names, leaving out the word at `skip`, how many positional words it was given, and its options given (long names). */
function commandOf(root: Command, argv: string[], skip: number): { cmd: Command; positionals: number; options: Set<string> } {
  let cmd = root;
  let positionals = 0;
  const options = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (i === skip) continue;
    if (a === '--') return { cmd, positionals: positionals + argv.length - i - 1, options };
    if (a.startsWith('-')) {
      const o = findOption(cmd, a.split('=')[0]!);
      if (o?.long) options.add(o.long);
      if (o && takesValue(o) && !a.includes('=') && i + 1 !== skip) i++;
      continue;
    }
    const sub = positionals === 0 ? cmd.commands.find((c) => c.name() === a || c.aliases().includes(a)) : undefined;
    if (sub) cmd = sub;
    else positionals++;
  }
  return { cmd, positionals, options };
}

/** The fields a command's `--json` list has (`search` both of its views); any known field for a command without a list. */
function fieldsOf(cmd: Command): ReadonlySet<string> {
  const path = commandPath(cmd);
  const lists = (Object.keys(JSON_LIST_COMMANDS) as JsonList[]).filter((l) => JSON_LIST_COMMANDS[l].command.split(' --')[0] === path);
  return lists.length > 0 ? new Set(lists.flatMap((l) => JSON_FIELDS[l])) : ALL_JSON_FIELDS;
}

/**
 * Whether the word after the `--json` at `at` is a field list: never when the command still lacks a positional
 * argument (`upload --json pages --dry-run` uploads `pages`) or the word is a subcommand; else the command's own
 * field names, several comma-separated words that look like them, or one word a typo away from one of its fields
 * (`--json nme`), so a misspelt field gets the unknown-field error, and `search --json status` searches for "status"
 * while `search --saved weekly --json score` keeps the score of each result.
 */
function takesFields(root: Command, argv: string[], at: number): boolean {
  const word = argv[at + 1]!;
  const { cmd, positionals, options } = commandOf(root, argv, at + 1);
  // A `[query]` counts: search without one fails, while a list (`[documents...]`) may be empty; with --saved it needs none.
  const standIn = argumentStandIns.get(cmd)?.some((o) => options.has(o)) ? 1 : 0;
  const wanted = cmd.registeredArguments.filter((arg) => arg.required || !arg.variadic).length - standIn;
  if (positionals < wanted || cmd.commands.some((c) => c.name() === word)) return false;
  const fields = fieldsOf(cmd);
  const parts = word.split(',').map((f) => f.trim());
  if (parts.every((f) => fields.has(f))) return true;
  if (!parts.every((f) => /^[a-z][a-z0-9_]*$/.test(f))) return false;
  return parts.length > 1 || closest(word, [...fields]) !== undefined;
}

/**
 * `--json a,b` (gh's `--json fields`) becomes `--json --json-fields a,b` before commander parses argv, so `--json`
 * stays a plain flag: the word after it is taken as fields only when it is a field list (see takesFields), so
 * `search --json "vpn setup"` still searches for "vpn setup".
 */
export function splitJsonFields(argv: string[], root: Command): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a.startsWith('--json=')) out.push('--json', '--json-fields', a.slice('--json='.length));
    else if (a === '--json' && next !== undefined && takesFields(root, argv, i)) {
      out.push('--json', '--json-fields', next);
      i++;
    } else out.push(a);
    if (a === '--') return [...out, ...argv.slice(i + 1)];
  }
  return out;
}

function pick(item: unknown, fields: string[]): unknown {
  const o = item as Record<string, unknown>;
  return Object.fromEntries(fields.map((f) => [f, o[f] ?? null]));
}

/** What stopped a command partway (`{code, message}`; a document's or source's own `error` is a string or null). */
const stopError = (data: unknown): unknown => {
  const e = (data as Record<string, unknown>).error;
  return e !== null && typeof e === 'object' ? e : undefined;
};

/**
 * Writes a command's JSON output: the whole document, or with `--json a,b` only those fields of each item of
 * its list (`list` names its fields in JSON_FIELDS, `key` its property when that differs; commands without a list
 * select from the object itself, where `error` may always be asked for and is kept, asked or not, when something
 * stopped the command partway, so a script selecting fields still tells a partial run), then `--jq EXPR` over it
 * (real jq, compiled to WebAssembly; strings print raw like `jq -r`, as gh does).
 */
export async function emitJson(ctx: Context, data: unknown, list?: JsonList, key: string | undefined = list): Promise<void> {
  const g = ctx.globals();
  const fields = g.jsonFields?.split(',').map((f) => f.trim()).filter(Boolean);
  let out = data;
  if (fields) {
    const known: readonly string[] = list ? JSON_FIELDS[list] : [...new Set([...Object.keys(data as object), 'error'])];
    const unknown = fields.filter((f) => !known.includes(f));
    if (unknown.length > 0) {
      const guess = unknown.length === 1 ? closest(unknown[0]!, [...known]) : undefined;
      throw new UsageError(`unknown JSON field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `"${f}"`).join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`, `available fields: ${known.join(', ')}`);
    }
    out = Array.isArray(data)
      ? data.map((i) => pick(i, fields))
      : key
        ? { ...(data as object), [key]: ((data as Record<string, unknown[]>)[key] ?? []).map((i) => pick(i, fields)) }
        : { ...(pick(data, fields) as object), ...(stopError(data) ? { error: stopError(data) } : {}) };
  }
  if (g.jq === undefined) return writeJson(ctx.io, out);
  const { default: jqReady } = await import('jq-web');
  const jq = await jqReady;
  let text: string;
  try {
    text = jq.raw(JSON.stringify(out), g.jq, ['-r']);
  } catch (err) {
    const why = String((err as Error).message ?? err).split('\n').filter((l) => l.startsWith('jq: error')).join('; ') || (err as Error).message;
    throw new CliError(`--jq ${JSON.stringify(g.jq)}: ${why.replace(/^jq: error:?\s*/, '')}`, 2, 'see https://jqlang.org/manual/ for the filter language');
  }
  if (text) ctx.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
