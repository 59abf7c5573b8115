/**
 * Writes the generated parts of docs/cli.md (command reference, JSON fields, exit codes) and the README's
 * command synopsis from the commander tree, so neither can drift from `--help`. Run: npm run docs:cli.
 * test/cli/cli-docs.test.ts fails when the committed files are stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, type Option } from 'commander';
import { JSON_FIELDS, JSON_LIST_COMMANDS } from '../src/cli/api-types.js';
import { registerClientCommands } from '../src/cli/commands/index.js';
import { EXIT_CODE_TABLE } from '../src/terminal/errors.js';
import { BENCHMARK_ENVIRONMENT, CLIENT_ENVIRONMENT } from '../src/cli/environment.js';
import { OPERATOR_COMMANDS, serverVariables } from '../src/main.js';
import { optionHelp } from '../src/server/config.js';

export const CLI_DOC_PATH = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
export const README_PATH = fileURLToPath(new URL('../README.md', import.meta.url));

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
const prose = (s: string) => cell(s).replaceAll('<', '&lt;').replaceAll('>', '&gt;');

function program(): Command {
  const root = new Command('docsearch');
  const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: {} };
  registerClientCommands(root, io);
  return root;
}

function walk(cmd: Command, path: string[] = []): Array<{ cmd: Command; path: string[] }> {
  return cmd.commands.flatMap((c) => [{ cmd: c, path: [...path, c.name()] }, ...walk(c, [...path, c.name()])]);
}

const usage = (c: Command, path: string[]) => `docsearch ${path.join(' ')} ${c.usage()}`.replace(/ \[options\]/, c.options.length ? ' [options]' : '').trim();
const flagRow = (o: Option) => `| \`${cell(o.flags)}\` | ${prose(o.description)}${o.argChoices ? ` (${o.argChoices.join(', ')})` : ''} |`;

function commandReference(): string {
  const root = program();
  const out: string[] = [];
  out.push('### Global options (every client command)', '', '| flag | meaning |', '|---|---|', ...root.options.filter((o) => !o.hidden).map(flagRow), '');
  for (const { cmd, path } of walk(root)) {
    out.push(`### \`docsearch ${path.join(' ')}\``, '', prose(cmd.description()), '', '```', usage(cmd, path), '```', '');
    const opts = cmd.options.filter((o) => !o.hidden);
    if (opts.length) out.push('| flag | meaning |', '|---|---|', ...opts.map(flagRow), '');
  }
  out.push('### Operator commands (on the server machine)', '', '| command | what it does |', '|---|---|', ...OPERATOR_COMMANDS.map((o) => `| \`docsearch ${o.name}\` | ${prose(o.summary)} (see \`docsearch ${o.name} --help\`) |`), '');
  return out.join('\n');
}

function jsonFields(): string {
  return [
    '| command | list | fields |',
    '|---|---|---|',
    ...Object.entries(JSON_FIELDS).map(([list, fields]) => {
      const { command, key } = JSON_LIST_COMMANDS[list as keyof typeof JSON_FIELDS];
      return `| \`${command}\` | \`.${key}\` | ${fields.map((f) => `\`${f}\``).join(', ')} |`;
    }),
    '',
  ].join('\n');
}

const environment = () =>
  [
    '| variable | read by | meaning |',
    '|---|---|---|',
    ...CLIENT_ENVIRONMENT.map((v) => `| \`${v.name}\` | client | ${prose(v.description)} |`),
    ...serverVariables(optionHelp()).map((v) => `| \`${v.env}\` | \`serve\` (\`${v.flag.split(' ')[0]}\`) | ${prose(v.description)}${v.defaultText === undefined ? '' : ` (default ${prose(v.defaultText)})`} |`),
    ...BENCHMARK_ENVIRONMENT.map((v) => `| \`${v.name}\` | \`serve\`, for benchmarks only | ${prose(v.description)} |`),
    '',
  ].join('\n');

const exitCodes = () => ['| code | meaning |', '|---|---|', ...EXIT_CODE_TABLE.map(([c, m]) => `| ${c} | ${prose(m)} |`), ''].join('\n');

function synopsis(): string {
  const root = program();
  const lines = root.commands.map((c) => {
    const subs = c.commands.map((s) => s.name());
    const head = `docsearch ${c.name()} ${subs.length ? subs.join('|') : c.usage()}`.trim();
    return `${head.padEnd(56)} ${c.summary()}`;
  });
  const ops = OPERATOR_COMMANDS.map((o) => `${`docsearch ${o.name} …`.padEnd(56)} ${o.summary}`);
  return ['```', ...lines, ...ops, '```', ''].join('\n');
}

/** Replaces what lies between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`. */
function fill(text: string, name: string, body: string): string {
  const open = `<!-- generated:${name} (scripts/gen-cli-docs.ts; run \`npm run docs:cli\`) -->`;
  const close = `<!-- /generated:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`markers for "${name}" not found`);
  return `${text.slice(0, start + open.length)}\n${body}${text.slice(end)}`;
}

export function renderCliDoc(current = readFileSync(CLI_DOC_PATH, 'utf8')): string {
  return fill(fill(fill(fill(current, 'commands', commandReference()), 'json-fields', jsonFields()), 'exit-codes', exitCodes()), 'environment', environment());
}

export function renderReadme(current = readFileSync(README_PATH, 'utf8')): string {
  return fill(fill(current, 'cli-synopsis', synopsis()), 'exit-codes', exitCodes());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(CLI_DOC_PATH, renderCliDoc());
  writeFileSync(README_PATH, renderReadme());
}
