import type { Command, Option } from 'commander';
import { TYPE_FILTER_NAMES } from '../../core/document-types.js';
import { FACETS } from '../../core/facet-names.js';
import { JSON_FIELDS, JSON_LIST_COMMANDS, type JsonList } from '../api-types.js';

/** One completion: the word and a short description (zsh and fish show it). */
export interface Candidate {
  value: string;
  description: string;
}

/** What to offer for the word being completed. `files`: let the shell complete paths. */
export type Completion = { files: true } | { files: false; candidates: Candidate[] };

/** Values only the server knows, asked of the logged-in server quickly and silently (nothing on any error). */
export interface Lookups {
  projects(): Promise<Candidate[]>;
  documents(): Promise<Candidate[]>;
  keys(): Promise<Candidate[]>;
  /** The labels of the projects the caller reads (`--label`). */
  labels(): Promise<Candidate[]>;
  /** Metadata keys of recent documents, as `key=` (`--meta`). */
  metadataKeys(): Promise<Candidate[]>;
  /** Saved searches' names (`--saved`, `saved-searches rename|delete`). */
  savedSearches(): Promise<Candidate[]>;
}

const visible = (c: Command) => !(c as unknown as { _hidden?: boolean })._hidden;
const oneLine = (s: string) => s.split('\n')[0]!.trim();
export const takesValue = (o: Option) => o.required || o.optional;
const none: Completion = { files: false, candidates: [] };
const words = (values: readonly string[], description = ''): Candidate[] => values.map((value) => ({ value, description }));

/** Options of `cmd` and of every command above it (global flags), plus --help. */
export function optionsInScope(cmd: Command): Option[] {
  const out: Option[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) out.push(...c.options.filter((o) => !o.hidden));
  return out;
}

export function findOption(cmd: Command, word: string): Option | undefined {
  return optionsInScope(cmd).find((o) => o.long === word || o.short === word);
}

/** The command path below the root (`projects list`); a group stands for its default verb (`projects` lists). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  const fallback = (cmd as unknown as { _defaultCommandName?: string })._defaultCommandName;
  return [...names, ...(fallback ? [fallback] : [])].join(' ');
}

/** `--json <TAB>`: the fields of the command's list; after a comma, the fields not yet given, each as the whole list. */
function jsonFields(cmd: Command, cur: string): Completion {
  const list = (Object.keys(JSON_LIST_COMMANDS) as JsonList[]).find((l) => JSON_LIST_COMMANDS[l].command === commandPath(cmd));
  if (!list) return none;
  const given = cur.split(',');
  const head = given.slice(0, -1);
  const fields = JSON_FIELDS[list].filter((f) => !head.includes(f));
  return { files: false, candidates: fields.map((f) => ({ value: [...head, f].join(','), description: `field of .${JSON_LIST_COMMANDS[list].key}` })) };
}

/** Values an option takes: its choices, project names for --project, paths for folders and files, else a free value. */
async function optionValues(o: Option, lookups: Lookups): Promise<Completion> {
  if (o.argChoices) return { files: false, candidates: words(o.argChoices) };
  if (o.long === '--project' || o.long === '--share') return { files: false, candidates: await lookups.projects() };
  if (o.long === '--type') return { files: false, candidates: Object.keys(TYPE_FILTER_NAMES).map((value) => ({ value, description: 'document type' })) };
  if (o.long === '--label') return { files: false, candidates: await lookups.labels() };
  if (o.long === '--meta') return { files: false, candidates: await lookups.metadataKeys() };
  if (o.long === '--facets') return { files: false, candidates: FACETS.map((value) => ({ value, description: 'facet' })) };
  if (o.long === '--saved') return { files: false, candidates: await lookups.savedSearches() };
  if (o.long === '--config' || o.long === '--data-dir' || o.long === '--model-cache-dir') return { files: true };
  return none;
}

/** Values of a positional argument, by its name. */
async function argumentValues(cmd: Command, positional: number, lookups: Lookups): Promise<Completion> {
  const args = cmd.registeredArguments;
  const arg = args[Math.min(positional, args.length - 1)];
  if (!arg) return none;
  if (arg.argChoices) return { files: false, candidates: words(arg.argChoices) };
  const name = arg.name();
  if (name === 'project') return { files: false, candidates: await lookups.projects() };
  if (name === 'key') return { files: false, candidates: await lookups.keys() };
  // Documents are named by id, sync path or file name; ids are what completion offers (unique, and short to type).
  if (['id', 'ids', 'document', 'documents'].includes(name) && cmd.parent?.name() === 'documents') return { files: false, candidates: await lookups.documents() };
  if ((name === 'name' || name === 'names') && cmd.parent?.name() === 'saved-searches') return { files: false, candidates: await lookups.savedSearches() };
  if (/path/.test(name)) return { files: true };
  return none;
}

/** Keeps the candidates that extend the word being typed; `prefix` (`--project=`) goes back in front of each. */
function matching(c: Completion, cur: string, prefix = ''): Completion {
  if (c.files) return c;
  return { files: false, candidates: c.candidates.filter((x) => x.value.startsWith(cur)).map((x) => ({ ...x, value: prefix + x.value })) };
}

/**
 * Completes the last of `words` (the words after `docsearch`, the last one being typed, maybe empty) against the
 * command tree: subcommands, flags (with their descriptions), enum values (`search --mode <TAB>`), values only the
 * server knows (project names for `--project` and `projects show`, document ids, key names), `--json` fields, and
 * paths where a command takes files. `--flag=value` is completed as one word (`--project=pa` → `--project=paper`).
 */
export async function complete(root: Command, words: string[], lookups: Lookups): Promise<Completion> {
  const cur = words.at(-1) ?? '';
  let cmd = root;
  let positional = 0;
  for (let i = 0; i < words.length - 1; i++) {
    const w = words[i]!;
    if (w === '--') break;
    if (w.startsWith('-')) {
      const o = findOption(cmd, w.split('=')[0]!);
      if (o?.long === '--json' && i === words.length - 2 && !cur.startsWith('-')) {
        // The word after --json is a field list when it looks like one; offer the fields, then the usual.
        const fields = matching(jsonFields(cmd, cur), cur);
        if (!fields.files && fields.candidates.length > 0) return fields;
      }
      if (o && takesValue(o) && !w.includes('=')) {
        if (i === words.length - 2) return matching(await optionValues(o, lookups), cur); // the word being typed is this option's value
        i++;
      }
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub && positional === 0) cmd = sub;
    else positional++;
  }
  if (cur.startsWith('-')) {
    const eq = cur.indexOf('=');
    if (eq > 0) {
      const name = cur.slice(0, eq);
      const value = cur.slice(eq + 1);
      if (name === '--json') return matching(jsonFields(cmd, value), value, '--json=');
      const o = findOption(cmd, name);
      return o && takesValue(o) ? matching(await optionValues(o, lookups), value, `${name}=`) : none;
    }
    const flags = [...optionsInScope(cmd).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)).map((f) => ({ value: f, description: oneLine(o.description) }))), { value: '--help', description: 'show help' }];
    return matching({ files: false, candidates: flags }, cur);
  }
  const subs = positional === 0 ? cmd.commands.filter(visible) : [];
  if (subs.length > 0) return matching({ files: false, candidates: subs.map((c) => ({ value: c.name(), description: oneLine(c.summary() || c.description()) })) }, cur);
  return matching(await argumentValues(cmd, positional, lookups), cur);
}
