import { ALL_JSON_FIELDS, type JsonList, JSON_FIELDS } from '../api-types.js';
import type { Context } from '../context.js';
import { CliError, UsageError } from '../../terminal/errors.js';
import { writeJson } from '../../terminal/io.js';
import { closest } from '../commands/shared/suggest.js';

/**
 * Known field names, several comma-separated words that look like them, or one word a typo away from a field
 * (`--json nme`) that is not a command name (`--json projects show x`): a misspelt field gets the unknown-field
 * error, not "unknown command".
 */
const isFieldList = (word: string, commands: ReadonlySet<string>): boolean => {
  const parts = word.split(',').map((f) => f.trim());
  if (parts.every((f) => ALL_JSON_FIELDS.has(f))) return true;
  if (!parts.every((f) => /^[a-z][a-z0-9_]*$/.test(f))) return false;
  return parts.length > 1 || (!commands.has(word) && closest(word, [...ALL_JSON_FIELDS]) !== undefined);
};

/**
 * `--json a,b` (gh's `--json fields`) becomes `--json --json-fields a,b` before commander parses argv, so `--json`
 * stays a plain flag: the word after it is taken as fields only when it is a field list (see isFieldList), so
 * `search --json "vpn setup"` still searches for "vpn setup".
 */
export function splitJsonFields(argv: string[], commands: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a.startsWith('--json=')) out.push('--json', '--json-fields', a.slice('--json='.length));
    else if (a === '--json' && next !== undefined && isFieldList(next, commands)) {
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

/**
 * Writes a command's JSON output: the whole document, or with `--json a,b` only those fields of each item of
 * its list (`list` names its fields in JSON_FIELDS, `key` its property when that differs; commands without a list
 * select from the object itself), then `--jq EXPR` over it
 * (real jq, compiled to WebAssembly; strings print raw like `jq -r`, as gh does).
 */
export async function emitJson(ctx: Context, data: unknown, list?: JsonList, key: string | undefined = list): Promise<void> {
  const g = ctx.globals();
  const fields = g.jsonFields?.split(',').map((f) => f.trim()).filter(Boolean);
  let out = data;
  if (fields) {
    const known: readonly string[] = list ? JSON_FIELDS[list] : Object.keys(data as object);
    const unknown = fields.filter((f) => !known.includes(f));
    if (unknown.length > 0) {
      const guess = unknown.length === 1 ? closest(unknown[0]!, [...known]) : undefined;
      throw new UsageError(`unknown JSON field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `"${f}"`).join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`, `available fields: ${known.join(', ')}`);
    }
    out = Array.isArray(data)
      ? data.map((i) => pick(i, fields))
      : key
        ? { ...(data as object), [key]: ((data as Record<string, unknown[]>)[key] ?? []).map((i) => pick(i, fields)) }
        : pick(data, fields);
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
