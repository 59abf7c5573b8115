import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { api, BIN, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliSuite } from './cli-env.js';

/**
 * `upload --sync` and `upload --sync --watch` say what they did to files the project already held, as the plain upload
 * does (the server answers such a file with its document, `duplicate: true`, and gives it the run's labels and
 * metadata), and a rename under `--sync --prune` keeps what the document carried.
 */
const text = (topic: string) => `A note about ${topic}. It has enough words to form a chunk of its own about ${topic} and nothing else.\n`;

/**
 * An HTTP relay in front of the daemon that holds the first request `hold` picks until the test lets it go: the
 * moment between the CLI listing a folder and sending (or hashing) its files, made as long as the test needs.
 */
async function holdingRelay(target: string, hold: (req: IncomingMessage) => boolean) {
  let arrived!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let once = false;
  const server = createServer(async (req, res) => {
    if (!once && hold(req)) {
      once = true;
      arrived();
      await gate;
    }
    const up = new URL(target);
    const fwd = request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    // The CLI may give up on the request (the failure before the fix): the relay just lets it go.
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held, release, close: () => server.close() };
}

interface Doc {
  id: string;
  path: string | null;
  labels: string[];
  metadata: Record<string, unknown>;
  status: string;
}

describe('upload --sync and --watch report files the project already held', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s), { setupTimeoutMs: 60_000 });
  const procs: ChildProcess[] = [];
  const dirs: string[] = [];
  afterAll(() => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const folder = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-modes-'));
    dirs.push(dir);
    for (const [p, t] of Object.entries(files)) writeFileSync(join(dir, p), t);
    return dir;
  };
  const documents = async (project: string): Promise<Doc[]> => {
    const projects = await api(d, '/api/v1/projects', { token: user.apiKey });
    const id = projects.body.projects.find((p: { name: string }) => p.name === project)!.id as string;
    const res = await api(d, `/api/v1/documents?project_id=${id}&limit=100`, { token: user.apiKey });
    expect(res.status).toBe(200);
    return res.body.documents;
  };
  const cli = async (args: string[], code = 0) => {
    const res = await runCli(args, { env, timeoutMs: 120_000 });
    expect(res.code, res.stderr).toBe(code);
    return res;
  };

  it('--sync: unchanged files get the labels and metadata asked, and each is said as the plain upload says it', { timeout: 180_000 }, async () => {
    const dir = folder({ 'a.txt': text('lighthouse lenses'), 'b.txt': text('harbour tides') });
    await cli(['upload', dir, '--sync', '--project', 'held', '--create-project', '--wait']);

    // The plain upload of a file the project holds: the reference for what the other modes say.
    const plain = await cli(['upload', join(dir, 'a.txt'), '--project', 'held', '--label', 'plain']);
    expect(plain.stderr).toMatch(new RegExp(`${join(dir, 'a.txt')}: already uploaded as doc_\\w+; labelled plain\\n`));

    // A dry run names them as documents to update, not files to upload.
    const dry = JSON.parse((await cli(['upload', dir, '--sync', '--project', 'held', '--label', 'red', '--dry-run', '--json'])).stdout);
    expect([dry.would_upload, [...dry.would_update].sort()]).toEqual([[], [join(dir, 'a.txt'), join(dir, 'b.txt')]]);
    const res = await cli(['upload', dir, '--sync', '--project', 'held', '--label', 'red', '--metadata', '{"team":"ops"}']);
    // Their documents get what was asked without the bytes being sent again.
    expect(res.stderr).toContain('sync: 0 new, 0 changed, 2 unchanged (2 to be given the labels or metadata asked), 0 to delete, 0 ignored\n');
    expect(res.stderr).not.toMatch(/^uploading /m);
    expect(res.stderr).toMatch(new RegExp(`${join(dir, 'a.txt')}: already uploaded as doc_\\w+; labelled red\\n`));
    expect(res.stderr).toMatch(new RegExp(`${join(dir, 'b.txt')}: already uploaded as doc_\\w+; labelled red\\n`));
    expect(res.stderr).toContain('done: 0 added, 0 replaced, 0 deleted, 2 unchanged\n');
    const held = await documents('held');
    expect(held.map((x) => [x.path, x.labels, x.metadata]).sort()).toEqual([
      ['a.txt', ['plain', 'red'], { team: 'ops' }],
      ['b.txt', ['red'], { team: 'ops' }],
    ]);

    // --json: the documents sent again are listed as the plain upload lists them, the sync object unchanged in shape.
    const json = JSON.parse((await cli(['upload', dir, '--sync', '--project', 'held', '--label', 'blue', '--json'])).stdout);
    expect(json.documents.map((x: Doc & { duplicate: boolean; file: string }) => [x.file, x.duplicate, x.labels]).sort()).toEqual([
      [join(dir, 'a.txt'), true, ['blue', 'plain', 'red']],
      [join(dir, 'b.txt'), true, ['blue', 'red']],
    ]);
    expect(json.sync.unchanged.sort()).toEqual(['a.txt', 'b.txt']);
    expect(json.sync.counts).toMatchObject({ new: 0, changed: 0, unchanged: 2, deleted: 0, failed: 0 });

    // Nothing more to give them: nothing is sent.
    const again = await cli(['upload', dir, '--sync', '--project', 'held', '--label', 'RED', '--metadata', '{"team":"ops"}']);
    expect(again.stderr).not.toContain('already uploaded');
    expect(again.stderr).toContain('sync: 0 new, 0 changed, 2 unchanged, 0 to delete, 0 ignored\n');
  });

  it('--sync --watch: files the project held are said with their labels, plain and --json', { timeout: 180_000 }, async () => {
    const dir = folder({ 'c.txt': text('orchard pruning') });
    await cli(['upload', dir, '--sync', '--project', 'watched-held', '--create-project', '--wait']);
    const watch = (...flags: string[]) => {
      const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--watch', '--project', 'watched-held', ...flags], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(proc);
      let out = '';
      let err = '';
      proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
      const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
      return { proc, out: () => out, err: () => err, exited };
    };

    const plain = watch('--label', 'green');
    await vi.waitFor(() => expect(plain.err()).toContain('watching'), { timeout: 60_000, interval: 100 });
    expect(plain.err()).toMatch(/c\.txt: already uploaded as doc_\w+ \(ready\)\nc\.txt: already uploaded as doc_\w+; labelled green\n/);
    plain.proc.kill('SIGTERM');
    expect(await plain.exited).toBe(0);

    const json = watch('--label', 'teal', '--metadata', '{"k":1}', '--json');
    await vi.waitFor(() => expect(json.out()).toContain('"event":"watching"'), { timeout: 60_000, interval: 100 });
    json.proc.kill('SIGTERM');
    expect(await json.exited).toBe(0);
    const events = json.out().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(events.find((e) => e.path === 'c.txt')).toMatchObject({ event: 'unchanged', duplicate: true, labels: ['green', 'teal'], metadata: { k: 1 }, status: 'ready' });
    expect(events.find((e) => e.event === 'synced').counts).toMatchObject({ new: 0, changed: 0, unchanged: 1, deleted: 0, failed: 0 });
    expect(json.err()).toBe('');
    const [doc] = await documents('watched-held');
    expect([doc!.labels, doc!.metadata]).toEqual([['green', 'teal'], { k: 1 }]);
  });

  it('--sync --watch: a file given the bytes of another is held by its document, and sent once that one is replaced', { timeout: 180_000 }, async () => {
    const a = text('desert dunes');
    const dir = folder({ 'a.txt': a, 'b.txt': text('coral reefs') });
    const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--prune', '--watch', '--json', '--project', 'shared-bytes', '--create-project'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(proc);
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const events = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const holdings = async () => (await documents('shared-bytes')).map((x) => `${x.path} ${x.status}`).sort();
    await vi.waitFor(() => expect(events().filter((e) => e.event === 'ready')).toHaveLength(2), { timeout: 60_000, interval: 100 });

    // b.txt now has a.txt's bytes: the project holds them once, as a.txt's document; b.txt's old version goes.
    writeFileSync(join(dir, 'b.txt'), a);
    await vi.waitFor(async () => expect(await holdings()).toEqual(['a.txt ready']), { timeout: 60_000, interval: 200 });
    expect(events()).toContainEqual(expect.objectContaining({ event: 'deleted', path: 'b.txt', reason: 'stale' }));

    // a.txt changes: its old document, the one holding b.txt's bytes, leaves once the new version is ready. The
    // folder says nothing more, yet the project must come to hold b.txt's bytes again.
    writeFileSync(join(dir, 'a.txt'), text('violin varnish'));
    await vi.waitFor(async () => expect(await holdings()).toEqual(['a.txt ready', 'b.txt ready']), { timeout: 120_000, interval: 500 });
    expect(events()).toContainEqual(expect.objectContaining({ event: 'added', path: 'b.txt' }));
    proc.kill('SIGTERM');
  });

  /** A sync's listing of the project's documents, which comes between listing the folder and hashing its files. */
  const isListing = (req: IncomingMessage) => req.method === 'GET' && req.url!.startsWith('/api/v1/documents?project_id=');
  /** Runs the CLI through a relay holding the request `hold` picks, removes `file` meanwhile; exit 1 and whole JSON. */
  const vanishing = async (args: string[], hold: (req: IncomingMessage) => boolean, file: string) => {
    const relay = await holdingRelay(d.url, hold);
    try {
      const run = runCli(args, { env: { ...env, DOCSEARCH_URL: relay.url }, timeoutMs: 120_000 });
      await relay.held;
      rmSync(file);
      relay.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(1);
      return { res, out: JSON.parse(res.stdout) };
    } finally {
      relay.close();
    }
  };

  it('a file gone between listing and sending fails alone: the rest is uploaded, it is named, exit 1, --json whole', { timeout: 180_000 }, async () => {
    const files = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, text(`topic number ${i}`)]));
    const dir = folder(files);
    await cli(['projects', 'create', 'vanish']);
    const { res, out } = await vanishing(['upload', dir, '--project', 'vanish', '--json'], (req) => req.method === 'POST' && req.url === '/api/v1/upload', join(dir, 'f20.txt'));
    // The first 20 files were on their way when the 21st went, before its request.
    expect(out.documents).toHaveLength(20);
    expect(out.failed).toEqual([{ path: join(dir, 'f20.txt'), document_id: null, error: 'cannot read the file (it disappeared)' }]);
    expect(res.stderr).toMatch(/error: 1 of 21 files failed:\n {2}\S+\/f20\.txt: cannot read the file\s+\(it disappeared\)\n/);
  });

  it('--sync: a file gone between listing and hashing is named, the rest synced, nothing pruned, exit 1', { timeout: 180_000 }, async () => {
    const dir = folder({ 'keep.txt': text('salt flats'), 'other.txt': text('moss gardens'), 'going.txt': text('clock springs') });
    await cli(['upload', dir, '--sync', '--prune', '--project', 'vanish-sync', '--create-project']);
    writeFileSync(join(dir, 'new.txt'), text('river deltas'));
    // Listed; the project's documents are being asked for, then each file is hashed.
    const { res, out } = await vanishing(['upload', dir, '--sync', '--prune', '--project', 'vanish-sync', '--json'], isListing, join(dir, 'going.txt'));
    expect(out.sync.added).toEqual(['new.txt']);
    expect(out.sync.removed).toEqual([]);
    expect(out.unreadable).toEqual([`${join(dir, 'going.txt')}: cannot read the file (it disappeared)`]);
    expect(res.stderr).toContain('warning: not pruning: some files or folders could not be read');
    expect((await documents('vanish-sync')).map((x) => x.path).sort()).toEqual(['going.txt', 'keep.txt', 'new.txt', 'other.txt']);
  });

  it('--sync --watch: a file gone between listing and hashing does not end the watch', { timeout: 180_000 }, async () => {
    const dir = folder({ 'stay.txt': text('kite flying'), 'going.txt': text('volcano vents') });
    // The first pass asks for the project's documents once; the pass after the change below is held at its listing.
    let listings = 0;
    const relay = await holdingRelay(d.url, (req) => isListing(req) && ++listings === 2);
    const proc = spawn(process.execPath, [BIN, 'upload', dir, '--sync', '--prune', '--watch', '--json', '--project', 'vanish-watch', '--create-project'], {
      env: { ...process.env, ...env, DOCSEARCH_URL: relay.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(proc);
    let out = '';
    let err = '';
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const events = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    try {
      await vi.waitFor(() => expect(events().map((e) => e.event)).toContain('watching'), { timeout: 60_000, interval: 100 });
      writeFileSync(join(dir, 'new.txt'), text('cheese caves'));
      await relay.held;
      rmSync(join(dir, 'going.txt'));
      relay.release();
      // The file's removal is a change of its own: the project follows the folder.
      await vi.waitFor(async () => expect((await documents('vanish-watch')).map((x) => x.path).sort()).toEqual(['new.txt', 'stay.txt']), { timeout: 60_000, interval: 200 });
      expect(proc.exitCode, err).toBeNull();
      expect(events()).toContainEqual(expect.objectContaining({ event: 'unreadable', paths: [`${join(dir, 'going.txt')}: cannot read the file (it disappeared)`] }));
    } finally {
      proc.kill('SIGTERM');
      relay.close();
    }
  });

  it('--sync --prune after a rename: the old path goes, and the document at the new one keeps its labels and metadata', { timeout: 180_000 }, async () => {
    const dir = folder({ 'before.txt': text('glacier melt') });
    await cli(['upload', dir, '--sync', '--prune', '--project', 'moves', '--create-project', '--wait', '--metadata', '{"team":"ops"}']);
    const [first] = await documents('moves');
    await cli(['documents', 'label', first!.id, 'add', 'important']);

    renameSync(join(dir, 'before.txt'), join(dir, 'after.txt'));
    const res = JSON.parse((await cli(['upload', dir, '--sync', '--prune', '--project', 'moves', '--wait', '--label', 'extra', '--json'])).stdout);
    expect(res.sync.removed).toEqual([expect.objectContaining({ path: 'before.txt', reason: 'moved' })]);
    const held = await documents('moves');
    expect(held.map((x) => [x.path, x.labels, x.metadata, x.status])).toEqual([['after.txt', ['extra', 'important'], { team: 'ops' }, 'ready']]);
  });
});

describe('upload past a quota', () => {
  let env: Record<string, string>;
  cliSuite((s) => ({ env } = s), { args: ['--quota-default', '1'], setupTimeoutMs: 60_000 });

  it('names the files past the quota and uploads those that fit: exit 1, --json whole', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-quota-'));
    writeFileSync(join(dir, 'a.txt'), text('railway signals'));
    // 1.5 MiB: more than the 1 MiB quota on its own.
    writeFileSync(join(dir, 'big.txt'), text('owl pellets').repeat(Math.ceil((1.5 * 1024 * 1024) / text('owl pellets').length)));
    writeFileSync(join(dir, 'c.txt'), text('paper marbling'));
    try {
      const res = await runCli(['upload', dir, '--project', 'quota', '--create-project', '--json'], { env, timeoutMs: 60_000 });
      expect(res.code, res.stderr).toBe(1);
      const out = JSON.parse(res.stdout);
      expect(out.documents.map((x: { filename: string }) => x.filename)).toEqual(['a.txt', 'c.txt']);
      expect(out.failed).toEqual([expect.objectContaining({ path: join(dir, 'big.txt'), document_id: null })]);
      expect(res.stderr).toMatch(/error: 1 of 3 files failed:\n {2}\S+\/big\.txt: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
