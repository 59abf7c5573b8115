/**
 * Operator commands load what their work needs, when it starts: `--help` of any of them loads no database, index,
 * model or server (only commander, and none of the rooms that hold them), and `users add` on a data directory — what
 * provisioning scripts and the test suite run per account — loads SQLite and Kysely but no LanceDB, ONNX Runtime,
 * Koa, pdf.js, mail, source kinds or terminal prompts (its password is piped; on a terminal the prompts load, and
 * ask). Each process runs under
 * test/helpers/record-requires.cjs, which records every package it require()s or imports by name, and with
 * NODE_V8_COVERAGE, which lists every script it compiled (the rooms of dist/ it loaded).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, removeDir, runCli } from '../helpers/daemon.js';
import { recordedDaemon } from '../helpers/recorded-loads.js';
import { missingFile } from '../helpers/requirement.js';

const NO_SCRIPT = missingFile('/usr/bin/script', 'apt-get install -y bsdutils');

/** What no operator command but `serve`, `reindex`, `migrate`, `backup` and `restore` at work may load. */
const SERVER_PACKAGES = [
  '@lancedb/lancedb',
  'apache-arrow',
  'onnxruntime-node',
  '@huggingface/tokenizers',
  'koa',
  'pdfjs-dist',
  'tesseract.js',
  'sharp',
  'nodemailer',
  'imapflow',
  'webdav',
  'openid-client',
  '@simplewebauthn/server',
  '@aws-sdk/client-s3',
  '@smithy/signature-v4',
];

/**
 * What of dist/ a command's help may load: the program's own rooms (docs/DEVELOPING.md), admin's declarations, and
 * the list of scopes `users add --scopes` names.
 */
const HELP_ROOMS = ['main.js', 'admin', 'cli', 'core', 'mcp', 'terminal'];
const HELP_FILES = ['auth/scopes.js'];

interface Run {
  code: number | null;
  stderr: string;
  /** The packages the process loaded, by name. */
  packages: Set<string>;
  /** The scripts of dist/ it compiled, relative to dist/. */
  scripts: string[];
  /** Their rooms: the top-level entries of dist/. */
  rooms: Set<string>;
}

describe('operator commands load only what their work needs', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-operator-startup-'));
    dirs.push(dir);
    return dir;
  };
  let dataDir: string;

  /** Runs `docsearch args` under the recorders, the password on stdin, with a config home of its own. */
  const recorded = async (args: string[]): Promise<Run> => {
    const recorder = recordedDaemon();
    const home = tempDir();
    const coverage = join(home, 'coverage');
    const res = await runCli(args, {
      input: 'correct horse battery staple\n',
      env: { ...recorder.options.env, NODE_V8_COVERAGE: coverage, HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
    });
    const dist = pathToFileURL(join(REPO, 'dist')).href;
    const urls = readdirSync(coverage).flatMap((f) => (JSON.parse(readFileSync(join(coverage, f), 'utf8')) as { result: { url: string }[] }).result.map((r) => r.url));
    const scripts = urls.filter((url) => url.startsWith(`${dist}/`)).map((url) => url.slice(dist.length + 1));
    return { code: res.code, stderr: res.stderr, packages: recorder.loaded(), scripts, rooms: new Set(scripts.map((script) => script.split('/')[0]!)) };
  };

  beforeAll(async () => {
    dataDir = tempDir();
    const made = await runCli(['users', 'add', 'first@example.com', '--data-dir', dataDir, '--init'], { input: 'correct horse battery staple\n' });
    expect(made.code, made.stderr).toBe(0);
  }, 60_000);
  afterAll(() => dirs.forEach(removeDir));

  const HELP = ['users', 'users add', 'users list', 'users reset-2fa', 'groups', 'groups create', 'clients add', 'backup', 'restore', 'migrate', 'reindex'];

  it.each(HELP)("docsearch %s --help loads commander alone, and no room but the program's and admin's", { timeout: 60_000 }, async (command) => {
    const run = await recorded([...command.split(' '), '--help']);
    expect(run.code, run.stderr).toBe(0);
    expect([...run.packages]).toEqual(['commander']);
    // The recorder saw the command's own module load (so an empty list of what it should not load means something).
    expect(run.rooms).toContain('admin');
    expect(run.scripts.filter((script) => !HELP_ROOMS.includes(script.split('/')[0]!) && !HELP_FILES.includes(script))).toEqual([]);
  });

  it('serve --help loads its option declarations (server/config.ts) but no server', { timeout: 60_000 }, async () => {
    const run = await recorded(['serve', '--help']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.rooms).toContain('server');
    for (const name of [...SERVER_PACKAGES, 'kysely', 'better-sqlite3', 'pg', 'zod', '@node-rs/argon2']) expect(run.packages, name).not.toContain(name);
  });

  it('users add --api-key on a data directory loads SQLite, Kysely and argon2, and nothing of the server, the index, the prompts or the client commands', { timeout: 60_000 }, async () => {
    const run = await recorded(['users', 'add', 'second@example.com', '--data-dir', dataDir, '--api-key']);
    expect(run.code, run.stderr).toBe(0);
    for (const name of ['better-sqlite3', 'kysely', '@node-rs/argon2']) expect(run.packages, name).toContain(name);
    // zod: the migrations' own helper (022's metadata rows) loads it only when that migration runs.
    for (const name of [...SERVER_PACKAGES, 'pg', '@inquirer/prompts', 'otpauth', 'zod']) expect(run.packages, name).not.toContain(name);
    for (const room of ['search', 'sources', 'documents', 'pdf', 'web']) expect(run.rooms, room).not.toContain(room);
    // The client commands (about a hundred modules) are the program's only for a client command, help or completion.
    expect(run.scripts.filter((s) => s.startsWith('cli/commands/') && !s.startsWith('cli/commands/shared/') && s !== 'cli/commands/global-options.js')).toEqual([]);
  });

  it('users list loads the accounts work (the team admin) but no server, index or prompts', { timeout: 60_000 }, async () => {
    const run = await recorded(['users', 'list', '--data-dir', dataDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.rooms).toContain('access');
    for (const name of [...SERVER_PACKAGES, 'pg', '@inquirer/prompts', 'otpauth']) expect(run.packages, name).not.toContain(name);
  });

  it.skipIf(NO_SCRIPT !== null)('users add on a terminal loads the prompts, asks for the password twice, and makes the account', { timeout: 120_000 }, async () => {
    const recorder = recordedDaemon();
    const cmd = `stty cols 400 rows 60; ${[process.execPath, BIN, 'users', 'add', 'third@example.com', '--data-dir', dataDir].join(' ')}`;
    const proc = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, ...recorder.options.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await expect.poll(() => out, { timeout: 60_000 }).toContain('Password:');
    proc.stdin.write('correct horse battery staple\r');
    await expect.poll(() => out, { timeout: 60_000 }).toContain('Repeat password:');
    proc.stdin.write('correct horse battery staple\r');
    const code = await new Promise<number | null>((r) => proc.once('close', r));
    expect(code, out).toBe(0);
    expect(out).toContain('created account third@example.com');
    expect(recorder.loaded()).toContain('@inquirer/prompts');
    const listed = await runCli(['users', 'list', '--json', '--data-dir', dataDir]);
    expect((JSON.parse(listed.stdout) as { users: { email: string }[] }).users.map((u) => u.email)).toContain('third@example.com');
  });
});
