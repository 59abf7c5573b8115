import { Command } from 'commander';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { registerClientCommands } from '../../src/cli/commands/index.js';
import type { IO } from '../../src/terminal/io.js';
import { runCli } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

/** A program with only the client commands, on buffers: nothing here touches config, keychain or network. */
function program(): { root: Command; out: () => string } {
  let out = '';
  const sink = new PassThrough();
  sink.on('data', (b: Buffer) => (out += b.toString()));
  const io: IO = { stdin: new PassThrough(), stdout: sink, stderr: sink, env: {} };
  const root = new Command('docsearch').exitOverride();
  registerClientCommands(root, io, {
    credentials: () => {
      throw new Error('help must not read credentials');
    },
  });
  return { root, out: () => out };
}

function walk(cmd: Command, path: string[] = []): Array<{ cmd: Command; path: string[] }> {
  return cmd.commands.flatMap((c) => [{ cmd: c, path: [...path, c.name()] }, ...walk(c, [...path, c.name()])]);
}

const EXPECTED = [
  'login', 'logout', 'whoami', 'auth', 'auth status', 'upload', 'search',
  'saved-searches', 'saved-searches list', 'saved-searches rename', 'saved-searches delete',
  'projects', 'projects list', 'projects create', 'projects show', 'projects rename', 'projects settings', 'projects share', 'projects unshare', 'projects members', 'projects transfer', 'projects delete',
  'documents', 'documents list', 'documents show', 'documents retry', 'documents rename', 'documents move', 'documents label', 'documents delete',
  'sources', 'sources list', 'sources add', 'sources show', 'sources edit', 'sources sync', 'sources remove',
  'trash', 'trash list', 'trash restore', 'trash purge',
  'keys', 'keys list', 'keys create', 'keys revoke',
  'admin',
  'admin users', 'admin users list', 'admin users invite', 'admin users disable', 'admin users enable', 'admin users delete', 'admin users reset-link', 'admin users set-quota', 'admin users set-admin',
  'admin invitations', 'admin invitations list', 'admin invitations revoke',
  'admin groups', 'admin groups list', 'admin groups create', 'admin groups delete', 'admin groups members', 'admin groups add', 'admin groups remove',
  'admin mail', 'admin mail list', 'admin mail test', 'admin mail retry',
  'mcp', 'completion',
];

describe('every client command (npm load-all-commands)', () => {
  const { root } = program();
  const all = walk(root);

  it('has the expected command tree', () => {
    expect(all.map((c) => c.path.join(' '))).toEqual(EXPECTED);
  });

  it.each(all.map((c) => [c.path.join(' '), c.cmd] as const))('%s: description, summary, examples, help renders', (name, cmd) => {
    expect(cmd.description().length).toBeGreaterThan(10);
    expect(cmd.summary().length).toBeGreaterThan(5);
    let help = '';
    cmd.configureOutput({ writeOut: (s) => (help += s) });
    cmd.outputHelp();
    expect(help).toContain(`Usage: docsearch ${name}`);
    const examples = help.slice(help.indexOf('\nExamples:\n'));
    expect(help).toContain('\nExamples:\n');
    expect(examples).toMatch(/\n {2}\$ (\S+=\S+ )*(npx )?docsearch /);
    // Every option is described.
    for (const o of cmd.options) expect(o.description, `${o.flags}`).not.toBe('');
  });

  it('the built binary renders help with exit 0, the exit codes on the root', { timeout: 120_000 }, async () => {
    const env = cliEnv(null);
    const rootHelp = await runCli(['--help'], { env });
    expect(rootHelp.code).toBe(0);
    expect(rootHelp.stdout).toContain('Exit codes:\n  0  success\n  1  error (a request failed, a file failed to ingest, a project or document not found, the server is unreachable)\n  2  usage error');
    expect(rootHelp.stdout).toContain('4  authentication needed (run `docsearch login`');
    for (const name of ['login', 'upload', 'search', 'projects', 'keys', 'documents', 'whoami', 'logout', 'completion']) {
      expect(rootHelp.stdout).toMatch(new RegExp(`\\n  ${name}\\b`));
    }
    // Spawning every command is slow on a small machine; the in-process checks above cover each one.
    for (const p of ['projects delete', 'upload', 'login']) {
      const r = await runCli([...p.split(' '), '--help'], { env });
      expect(r.code, p).toBe(0);
      expect(r.stdout, p).toContain('Examples:');
      expect(r.stderr, p).toBe('');
      // gh shows the inherited flags under every command.
      expect(r.stdout, p).toContain('Global Options:');
      expect(r.stdout, p).toContain('--server <url>');
    }
  });
});
