/**
 * The filter language (core/filters.ts, docs/api.md#filters) as command-line flags, the same on `search` and
 * `documents list`: each flag a field of `filters`, repeatable where the field takes a list, and `--meta` the
 * metadata expressions of core/filter-params.ts (`team=ops`, `year>=2020`, `reviewed`, `!draft`). A bad value is a
 * usage error naming the flag typed: checked here where core has the rule as a plain function (days, types, labels),
 * else by the server, whose 400 naming the filter's field (`filters.uploaded_since: …`) is said of the flag.
 */
import { type Command, Option } from 'commander';
import { TYPE_FILTER_NAMES } from '../../../core/document-types.js';
import { addMetaExpression } from '../../../core/filter-params.js';
import type { FiltersInput } from '../../../core/filters.js';
import { labelNameProblem } from '../../../core/label-name.js';
import { MOMENT_FORM, momentProblem, momentSpan, RELATIVE_MOMENT_FORMS, relativeMoment } from '../../../core/moment.js';
import { ApiError, UsageError } from '../../../terminal/errors.js';
import { collect } from './command.js';

export interface FilterFlags {
  type: string[];
  since?: string;
  until?: string;
  before?: string;
  path?: string;
  pathPrefix?: string;
  by: string[];
  source: string[];
  label: string[];
  lang: string[];
  meta: string[];
}

/**
 * Adds the filter flags to a command, and wraps the action it is given so that a server's refusal of a filter is
 * said of the flag (asFlagError), on every command with these flags alike.
 */
export function addFilterFlags(cmd: Command): Command {
  const setAction = cmd.action.bind(cmd);
  cmd.action = (fn) =>
    setAction(async function (this: Command, ...args: unknown[]) {
      try {
        await fn.apply(this, args);
      } catch (err) {
        throw asFlagError(err, cmd.opts<FilterFlags>());
      }
    });
  return cmd
    .option('--type <type>', 'only documents of this type (pdf, docx, markdown, email …); repeatable: any of', collect, [])
    .option('--since <date>', 'only documents uploaded at or after this day (2026-03-31, from 00:00 UTC), RFC 3339 time, time ago (7d, 2w, 12h), today or yesterday')
    .addOption(new Option('--until <date>', 'only documents uploaded up to and including this day (2026-03-31 or yesterday: the whole of it) or time').conflicts('before'))
    .option('--before <date>', 'only documents uploaded before this day (its 00:00 UTC), time or time ago (7d)')
    .addOption(new Option('--path <prefix>', 'only documents whose upload or sync path starts with this (contracts/)').conflicts('pathPrefix'))
    // The name the flag had before #60's --path: scripts written for it keep working.
    .addOption(new Option('--path-prefix <prefix>', 'the earlier name of --path').hideHelp())
    .option('--by <email>', 'only documents this person uploaded; repeatable: any of', collect, [])
    .option('--source <id>', 'only documents this source keeps current; repeatable: any of', collect, [])
    .option('--label <name>', 'only documents with this label; repeatable: all of them', collect, [])
    .option('--lang <code>', 'only this language (ISO 639-1: en, de …); repeatable: any of', collect, [])
    .option('--meta <expr>', 'by metadata: KEY=VALUE (repeated for a key: any of), KEY>=VALUE, KEY<VALUE …, KEY (has it), !KEY (has not); repeatable: all hold', collect, []);
}

const oneOrList = (values: string[]): string | string[] | undefined => (values.length === 0 ? undefined : values.length === 1 ? values[0] : values);

/** Each filter field (core/filters.ts) and the flag that sets it. */
const FLAGS = {
  type: ['type', '--type'],
  uploaded_since: ['since', '--since'],
  uploaded_before: ['before', '--before'],
  path_prefix: ['path', '--path'],
  uploaded_by: ['by', '--by'],
  source_id: ['source', '--source'],
  labels: ['label', '--label'],
  language: ['lang', '--lang'],
  metadata: ['meta', '--meta'],
} as const satisfies Record<string, [keyof FilterFlags, string]>;

const given = (f: FilterFlags, key: keyof FilterFlags): string[] => {
  const v = f[key];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** A flag and the value given to it, as a message names them: `--since "yesterday-ish"`. */
const typed = (flag: string, value: string) => `${flag} ${JSON.stringify(value)}`;

const MOMENT_FLAGS = ['since', 'until', 'before'] as const;

/**
 * The flags with their relative moments (`7d`, `yesterday`) as the moments they name now; `saving` (`search --save`)
 * refuses them, since a saved search would keep the moment, not "the last 7 days".
 */
function resolveMoments(f: FilterFlags, saving: boolean): FilterFlags {
  const out = { ...f };
  for (const key of MOMENT_FLAGS) {
    const moment = f[key] === undefined ? undefined : relativeMoment(f[key]!, Date.now());
    if (moment === undefined) continue;
    if (saving) throw new UsageError(`${typed(`--${key}`, f[key]!)}: a saved search keeps its moments as written, so it would not move with the days`, `give a date (--${key} ${moment.slice(0, 10)}), or add the flag when running it: docsearch search --saved NAME --${key} ${f[key]}`);
    out[key] = moment;
  }
  return out;
}

/** Refuses, as a usage error, the values whose rules core has as plain functions (the CLI loads no zod). */
function checkLocally(f: FilterFlags): void {
  for (const key of MOMENT_FLAGS) {
    const value = f[key];
    const problem = value === undefined ? undefined : momentProblem(value);
    // A text of no form gets the forms; a real form's wrong day or time ("2026-02-31") only what is wrong.
    if (problem) throw new UsageError(`${typed(`--${key}`, value!)}: ${problem}${problem === MOMENT_FORM ? `, or ${RELATIVE_MOMENT_FORMS}` : ''}`);
  }
  const type = f.type.find((t) => !(t.trim().toLowerCase() in TYPE_FILTER_NAMES));
  if (type !== undefined) throw new UsageError(`--type: unknown type ${JSON.stringify(type)}`, `one of ${Object.keys(TYPE_FILTER_NAMES).join(', ')}`);
  for (const label of f.label) {
    const problem = labelNameProblem(label.trim());
    if (problem) throw new UsageError(`${typed('--label', label)}: ${problem}${label.includes(',') ? ' (one label per --label)' : ''}`);
  }
}

/**
 * The flags as the API's `filters`; undefined when none is given. A value the CLI can tell is bad is a usage error.
 * `saving`: the search is being saved (relative moments refused: resolveMoments).
 */
export function filtersFromFlags(typedFlags: FilterFlags, saving = false): FiltersInput | undefined {
  const f = resolveMoments(typedFlags, saving);
  checkLocally(f);
  const metadata: Record<string, unknown> = {};
  for (const expression of f.meta) {
    try {
      addMetaExpression(metadata, expression);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const out: Record<string, unknown> = {
    type: oneOrList(f.type),
    uploaded_since: f.since,
    // --until takes in the whole of what it names (core/moment.ts): the API's bound is the first moment after it.
    uploaded_before: f.until === undefined ? f.before : new Date(momentSpan(f.until)!.to).toISOString(),
    path_prefix: f.path ?? f.pathPrefix,
    uploaded_by: oneOrList(f.by),
    source_id: oneOrList(f.source),
    labels: oneOrList(f.label),
    language: oneOrList(f.lang),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return Object.keys(out).length > 0 ? (out as FiltersInput) : undefined;
}

/**
 * A refusal field: a filter's field as the server names it in a search body (`filters.language.1`), a saved
 * search's (`search.filters.…`) or a list's query (`language`), then its message.
 */
const FILTER_REFUSAL = new RegExp(`^(?:search\\.)?(?:filters\\.)?(${Object.keys(FLAGS).join('|')})((?:\\.[^\\s:]+)*): ([\\s\\S]*)$`);

/** The metadata key of one --meta expression (its parse says it). */
const metaKey = (expression: string): string => {
  const one: Record<string, unknown> = {};
  addMetaExpression(one, expression);
  return Object.keys(one)[0]!;
};

/**
 * The server's 400 about a filter the command line set, as a usage error naming the flag and the value typed
 * (`--lang "english": must be a language code …`); anything else as it was. A filter the flags did not set (a
 * saved search's own) stays the server's words.
 */
export function asFlagError(err: unknown, f: FilterFlags): unknown {
  if (!(err instanceof ApiError) || err.status !== 400) return err;
  const m = FILTER_REFUSAL.exec(err.message);
  if (!m) return err;
  const [, field, rest, why] = m as unknown as [string, keyof typeof FLAGS, string, string];
  const [key, flag] = FLAGS[field];
  const values = given(f, key);
  if (values.length === 0) return err;
  // The value the field's path points at: a --meta expression by its key, a list's item by its index.
  const at = rest.split('.').filter(Boolean);
  const value =
    key === 'meta' ? values.find((e) => metaKey(e) === at.filter((p) => !p.startsWith('$')).join('.'))
    : /^\d+$/.test(at[0] ?? '') ? values[Number(at[0])]
    : values.length === 1 ? values[0]
    : undefined;
  return new UsageError(`${value === undefined ? flag : typed(flag, value)}: ${why}`);
}
