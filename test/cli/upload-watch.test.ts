import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

/**
 * How long a change may take to show before the test gives up: far past what following takes (0.5–1.1 s, printed
 * below for docs/BENCHMARKS.md), so that only a watcher that misses the change fails, not a busy machine.
 */
const FOLLOW_MS = 60_000;

const TOPICS = ['lighthouse lenses', 'harbour tides', 'orchard pruning', 'glacier melt', 'violin varnish', 'canal locks', 'honey bees', 'desert dunes'];
const text = (topic: string, extra = '') => `A note about ${topic}. ${extra} It has enough words to form a chunk of its own about ${topic} and nothing else.\n`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

interface Watcher {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The --json events so far. */
  events: () => Array<Record<string, any>>;
  exited: Promise<number | null>;
}

function startWatch(dir: string, env: Record<string, string>, ...flags: string[]): Watcher {
  const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--watch', '--json', ...flags], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    events: () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    exited: new Promise((res) => proc.once('exit', (code) => res(code))),
  };
}

describe('upload --sync --watch: the project follows the folder (issue 41)', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  const watchers: Watcher[] = [];
  beforeAll(async () => {
    d = await startDaemon();
    user = await addUser(d);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
  });
  afterAll(async () => {
    for (const w of watchers) if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGKILL');
    await d.stop();
    removeDir(d.dataDir);
  });

  const projectId = async (name: string) => {
    const res = await api(d, '/api/v1/projects', { token: user.apiKey });
    return res.body.projects.find((p: { name: string }) => p.name === name)!.id as string;
  };
  /** The project's documents as `path sha256` lines, sorted: a path listed twice, or a version left behind, shows. */
  const holdings = async (project: string) => {
    const res = await api(d, `/api/v1/documents?project_id=${project}&limit=100`, { token: user.apiKey });
    expect(res.status).toBe(200);
    return res.body.documents.map((x: { path: string; sha256: string }) => `${x.path} ${x.sha256}`).sort();
  };
  /** What the project must hold for the folder as it is: each file's path and the hash of its bytes. */
  const expected = (files: Record<string, string>) => Object.entries(files).map(([p, t]) => `${p} ${sha(t)}`).sort();
  /**
   * Waits until the project follows `files`: the same paths, each with the file's bytes. An edited file's old
   * version is listed until the new one is ready (the server's processing time, not the watcher's), so it may
   * linger here; `mirrors` waits for that too. Returns the milliseconds it took from `since`.
   */
  const follows = async (project: string, files: Record<string, string>, since: number) => {
    await vi.waitFor(
      async () => {
        const held = await holdings(project);
        expect([...new Set(held.map((h: string) => h.split(' ')[0]))].sort()).toEqual(Object.keys(files).sort());
        expect(held).toEqual(expect.arrayContaining(expected(files)));
      },
      { timeout: FOLLOW_MS, interval: 100 },
    );
    return Date.now() - since;
  };
  const mirrors = (project: string, files: Record<string, string>) =>
    vi.waitFor(async () => expect(await holdings(project)).toEqual(expected(files)), { timeout: 60_000, interval: 200 });

  it('add, edit, rename and delete are each followed, through a daemon restart; SIGTERM ends it with exit 0', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watch-'));
    mkdirSync(join(dir, 'sub'));
    const files: Record<string, string> = { 'a1.txt': text(TOPICS[0]!), 'a2.txt': text(TOPICS[1]!), 'a3.txt': text(TOPICS[2]!), 'sub/a4.txt': text(TOPICS[3]!) };
    for (const [p, t] of Object.entries(files)) writeFileSync(join(dir, p), t);
    const w = startWatch(dir, env, '--prune', '--project', 'watched', '--create-project');
    watchers.push(w);
    await vi.waitFor(() => expect(w.events().map((e) => e.event)).toContain('watching'), { timeout: 60_000, interval: 100 });
    expect(w.events().filter((e) => e.event === 'added').map((e) => e.path).sort()).toEqual(['a1.txt', 'a2.txt', 'a3.txt', 'sub/a4.txt']);
    expect(w.events().find((e) => e.event === 'synced')!.counts).toEqual({ new: 4, changed: 0, unchanged: 0, deleted: 0, failed: 0, ignored: 0 });
    const project = await projectId('watched');
    expect(await holdings(project)).toEqual(expected(files));
    const took: Record<string, number> = {};

    // Add.
    files['b.txt'] = text(TOPICS[4]!);
    let t0 = Date.now();
    writeFileSync(join(dir, 'b.txt'), files['b.txt']);
    took.add = await follows(project, files, t0);

    // Edit: the new version replaces the old one at its path (the old one leaves once the new one is ready).
    files['a1.txt'] = text(TOPICS[0]!, 'Edited: the quokka keeps the lighthouse.');
    t0 = Date.now();
    writeFileSync(join(dir, 'a1.txt'), files['a1.txt']);
    took.edit = await follows(project, files, t0);
    await mirrors(project, files);

    // Rename: the same bytes at a new path (the project holds each content once, so the old document goes first).
    files['renamed.txt'] = files['a2.txt']!;
    delete files['a2.txt'];
    t0 = Date.now();
    renameSync(join(dir, 'a2.txt'), join(dir, 'renamed.txt'));
    took.rename = await follows(project, files, t0);

    // Delete (--prune).
    delete files['a3.txt'];
    t0 = Date.now();
    rmSync(join(dir, 'a3.txt'));
    took.delete = await follows(project, files, t0);

    const kinds = w.events().map((e) => `${e.event} ${e.path ?? ''}`.trim());
    expect(kinds).toEqual(expect.arrayContaining(['added b.txt', 'replaced a1.txt', 'deleted a2.txt', 'added renamed.txt', 'deleted a3.txt']));
    expect(w.events().find((e) => e.event === 'deleted' && e.path === 'a2.txt')!.reason).toBe('moved');

    // The daemon goes away; the folder changes while it is down; it comes back on the same data and port.
    const port = new URL(d.url).port;
    expect(await d.stop()).toBe(0);
    files['c.txt'] = text(TOPICS[5]!);
    files['b.txt'] = text(TOPICS[4]!, 'Edited while the daemon was down.');
    delete files['sub/a4.txt'];
    writeFileSync(join(dir, 'c.txt'), files['c.txt']);
    writeFileSync(join(dir, 'b.txt'), files['b.txt']);
    rmSync(join(dir, 'sub/a4.txt'));
    await vi.waitFor(() => expect(w.events().map((e) => e.event)).toContain('unreachable'), { timeout: 20_000, interval: 100 });
    // Retrying at its backoff for a while, said once.
    await new Promise((r) => setTimeout(r, 3_000));
    d = await startDaemon({ dataDir: d.dataDir, databaseUrl: d.databaseUrl, args: ['--port', port] });
    t0 = Date.now();
    took.restart = await follows(project, files, t0);
    await mirrors(project, files);
    await vi.waitFor(() => expect(w.events().map((e) => e.event)).toContain('reconnected'), { timeout: FOLLOW_MS, interval: 100 });
    expect(w.events().filter((e) => e.event === 'unreachable')).toHaveLength(1);
    expect(w.stderr().match(/warning: lost contact with http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); retrying with backoff/g)).toHaveLength(1);

    // Every version the project holds is searchable: the edit made before the restart is found by its word.
    await vi.waitFor(async () => {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'quokka', mode: 'keyword', project_ids: [project], limit: 5 } });
      expect(res.body.results.map((r: { document: { path: string } }) => r.document.path)).toEqual(['a1.txt']);
    }, { timeout: 60_000, interval: 250 });

    // A mass delete (3 of the 4 synced documents, past the default --max-delete of half) is refused and said; what
    // else changed in the same burst still goes.
    const before = await holdings(project);
    files['d.txt'] = text(TOPICS[6]!);
    writeFileSync(join(dir, 'd.txt'), files['d.txt']);
    for (const p of ['a1.txt', 'b.txt', 'renamed.txt']) rmSync(join(dir, p));
    await vi.waitFor(() => expect(w.events().map((e) => e.event)).toContain('delete_refused'), { timeout: FOLLOW_MS, interval: 100 });
    const refused = w.events().find((e) => e.event === 'delete_refused')!;
    expect(refused.paths.sort()).toEqual(['a1.txt', 'b.txt', 'renamed.txt']);
    expect(refused.message).toBe('--prune would delete 3 of the 4 synced documents of project watched, more than --max-delete 2');
    expect(w.stderr()).toContain('warning: --prune would delete 3 of the 4 synced documents of project watched, more than --max-delete 2: not deleting');
    await vi.waitFor(async () => expect(await holdings(project)).toEqual([...before, `d.txt ${sha(files['d.txt']!)}`].sort()), { timeout: FOLLOW_MS, interval: 100 });

    w.proc.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(w.events().at(-1)).toMatchObject({ event: 'stopped', signal: 'SIGTERM' });
    expect(w.stderr()).not.toContain('error');
    // Recorded for docs/BENCHMARKS.md: how long the project took to follow each change.
    process.stderr.write(`upload --watch followed: ${JSON.stringify(took)} ms\n`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an explicit --max-delete holds a single delete; Ctrl-C (SIGINT) ends it with exit 130 and its text lines', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watch-'));
    const files: Record<string, string> = { 'x1.md': text(TOPICS[7]!), 'x2.md': text(TOPICS[0]!, 'second') };
    for (const [p, t] of Object.entries(files)) writeFileSync(join(dir, p), t);
    const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--watch', '--prune', '--max-delete', '0', '--project', 'guarded', '--create-project'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
    await vi.waitFor(() => expect(stderr).toContain(`watching ${dir} for changes, mirrored to project guarded (Ctrl-C to stop)`), { timeout: 60_000, interval: 100 });
    expect(stderr).toMatch(/x1\.md: added as doc_\w+ \(queued\)\n/);
    expect(stderr).toContain('synced: 2 added, 0 replaced, 0 deleted, 0 unchanged\n');
    const project = await projectId('guarded');

    rmSync(join(dir, 'x2.md'));
    files['x1.md'] = text(TOPICS[7]!, 'edited');
    writeFileSync(join(dir, 'x1.md'), files['x1.md']);
    await vi.waitFor(() => expect(stderr).toContain('warning: --prune would delete 1 of the 2 synced documents of project guarded, more than --max-delete 0: not deleting'), {
      timeout: FOLLOW_MS,
      interval: 100,
    });
    await vi.waitFor(async () => expect(await holdings(project)).toEqual(expected(files)), { timeout: FOLLOW_MS, interval: 100 });
    expect(stderr).toMatch(/x1\.md: replaced as doc_\w+ \(queued\)\n/);
    expect(stderr).not.toContain('x2.md: deleted');

    proc.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr.endsWith(`stopped watching ${dir}\n`)).toBe(true);
    expect(stderr).not.toContain('error:');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a plain --sync --prune follows a rename too: the old document goes first, the bytes are sent at the new path', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watch-'));
    const body = text(TOPICS[6]!, 'renamed once');
    writeFileSync(join(dir, 'before.txt'), body);
    const sync = async () => {
      const res = await runCli(['upload', dir, '--sync', '--prune', '--project', 'renames', '--create-project', '--json'], { env });
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout).sync;
    };
    await sync();
    renameSync(join(dir, 'before.txt'), join(dir, 'after.txt'));
    const second = await sync();
    expect(second.added).toEqual(['after.txt']);
    expect(second.removed).toEqual([expect.objectContaining({ path: 'before.txt', reason: 'moved' })]);
    expect(await holdings(await projectId('renames'))).toEqual([`after.txt ${sha(body)}`]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('--watch needs --sync, and runs until stopped so it takes neither --wait nor --dry-run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watch-'));
    for (const [flags, message] of [
      [['--watch'], '--watch keeps a --sync running: add --sync'],
      [['--sync', '--watch', '--wait'], '--watch runs until stopped, so it cannot be combined with --wait'],
      [['--sync', '--watch', '--dry-run'], '--watch runs until stopped, so it cannot be combined with --dry-run'],
    ] as const) {
      const res = await runCli(['upload', dir, ...flags], { env });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`error: ${message}`);
    }
    rmSync(dir, { recursive: true, force: true });
  });
  it('says each file\'s final state: ready, failed with the reason, skipped with the reason (#53 item 4)', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watch-final-'));
    writeFileSync(join(dir, 'first.txt'), text(TOPICS[6]!));
    // Without --json: the lines a person reads on stderr.
    const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--watch', '--project', 'finals', '--create-project'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    watchers.push({ proc, stdout: () => '', stderr: () => err, events: () => [], exited: new Promise((res) => proc.once('exit', res)) });
    try {
      await vi.waitFor(() => expect(err).toContain('first.txt: ready (1 chunk)'), { timeout: 60_000, interval: 100 });
      // A truncated PDF (its header, then nothing) and a file of a type docsearch does not read.
      writeFileSync(join(dir, 'bad.pdf'), '%PDF-1.7\n1 0 obj\n<< /Type /Catalog');
      writeFileSync(join(dir, 'notes.bin'), Buffer.from([0, 1, 2, 3, 255, 254]));
      await vi.waitFor(() => expect(err).toMatch(/bad\.pdf: failed: \S+/), { timeout: 60_000, interval: 100 });
      await vi.waitFor(() => expect(err).toMatch(/skipped \S*notes\.bin: unsupported file type/), { timeout: 30_000, interval: 100 });
      expect(err).toContain('bad.pdf: added');
    } finally {
      proc.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
