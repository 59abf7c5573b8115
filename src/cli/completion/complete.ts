import type { Command, Option } from 'commander';

/** One completion: the word and a short description (zsh and fish show it). */
export interface Candidate {
  value: string;
  description: string;
}

/** What to offer for the word being completed. `files`: let the shell complete paths. */
export type Completion = { files: true } | { files: false; candidates: Candidate[] };

/** Where project names are asked for: the logged-in server, quickly, silently. */
export type ProjectNames = () => Promise<string[]>;

const visible = (c: Command) => !(c as unknown as { _hidden?: boolean })._hidden;
const oneLine = (s: string) => s.split('\n')[0]!.trim();
const takesValue = (o: Option) => o.required || o.optional;

/** Options of `cmd` and of every command above it (global flags), plus --help. */
function optionsInScope(cmd: Command): Option[] {
  const out: Option[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) out.push(...c.options.filter((o) => !o.hidden));
  return out;
}

function findOption(cmd: Command, word: string): Option | undefined {
  return optionsInScope(cmd).find((o) => o.long === word || o.short === word);
}

/** Values an option takes: its choices, project names for --project, else nothing (a free value). */
async function optionValues(o: Option, projects: ProjectNames): Promise<Completion> {
  if (o.argChoices) return { files: false, candidates: o.argChoices.map((v) => ({ value: v, description: '' })) };
  if (o.long === '--project') return { files: false, candidates: (await projects()).map((v) => ({ value: v, description: 'project' })) };
  if (o.long === '--config' || o.long === '--data-dir' || o.long === '--model-cache-dir') return { files: true };
  return { files: false, candidates: [] };
}

/**
 * Completes the last of `words` (the words after `docsearch`, the last one being typed, maybe empty) against the
 * command tree: subcommands, flags (with their descriptions), enum values (`search --mode <TAB>`), project names
 * from the server (`--project <TAB>`, `projects show <TAB>`), and paths where a command takes files.
 */
export async function complete(root: Command, words: string[], projects: ProjectNames): Promise<Completion> {
  const cur = words.at(-1) ?? '';
  let cmd = root;
  let positional = 0;
  for (let i = 0; i < words.length - 1; i++) {
    const w = words[i]!;
    if (w === '--') break;
    if (w.startsWith('-')) {
      const o = findOption(cmd, w.split('=')[0]!);
      if (o && takesValue(o) && !w.includes('=')) {
        if (i === words.length - 2) return optionValues(o, projects); // the word being typed is this option's value
        i++;
      }
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub && positional === 0) cmd = sub;
    else positional++;
  }
  if (cur.startsWith('-')) {
    const flags = [...optionsInScope(cmd).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)).map((f) => ({ value: f, description: oneLine(o.description) }))), { value: '--help', description: 'show help' }];
    return { files: false, candidates: flags.filter((f) => f.value.startsWith(cur)) };
  }
  const subs = positional === 0 ? cmd.commands.filter(visible) : [];
  if (subs.length > 0) {
    return { files: false, candidates: subs.map((c) => ({ value: c.name(), description: oneLine(c.summary() || c.description()) })).filter((c) => c.value.startsWith(cur)) };
  }
  const args = cmd.registeredArguments;
  const arg = args[Math.min(positional, args.length - 1)];
  if (!arg) return { files: false, candidates: [] };
  if (arg.argChoices) return { files: false, candidates: arg.argChoices.map((v) => ({ value: v, description: '' })).filter((c) => c.value.startsWith(cur)) };
  if (arg.name() === 'project') return { files: false, candidates: (await projects()).filter((p) => p.startsWith(cur)).map((v) => ({ value: v, description: 'project' })) };
  if (/path/.test(arg.name())) return { files: true };
  return { files: false, candidates: [] };
}
