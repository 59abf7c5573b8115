/**
 * What `--json` leaves on stdout when a command fails (docs/cli.md, "When a command fails"): a command stopped after
 * it began its work prints its usual JSON document of what it did, with `error: {code, message}`, and exits with the
 * error's code; one that failed before its work prints nothing on stdout. Driven through the built CLI against a real
 * daemon, failing the way they fail in use: the API key revoked through REST mid-run, a real 500 (the daemon's upload
 * folder made unusable), the daemon killed, nothing listening, a malformed URL. A relay in front of the daemon holds
 * one chosen request while the test does that, so the failure comes at a known point of the run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { type CliSuite, cliEnv, cliSuite, unusedUrl } from './cli-env.js';

const MINUTE = 60_000;

interface Held {
  /** Resolves when the request has come and is being held. */
  reached: Promise<void>;
  release(): void;
}

/**
 * An HTTP relay to `target` that holds the `nth` request `matches` picks until released; every other request passes
 * unchanged. A request whose target no longer answers (the daemon killed) has its connection dropped, as a dead
 * server's would; once `down(status)`, every request gets that status, as from a load balancer whose backend is gone.
 */
async function relay(target: string): Promise<{ url: string; hold(matches: (req: IncomingMessage) => boolean, nth?: number): Held; down(status: number): void; close(): Promise<void> }> {
  const holds: Array<{ matches: (req: IncomingMessage) => boolean; left: number; reached: () => void; released: Promise<void> }> = [];
  let downWith: number | undefined;
  const server: Server = createServer((req, res) => {
    const forward = () => {
      if (downWith !== undefined) {
        req.resume();
        res.writeHead(downWith, { 'content-type': 'text/html' }).end('<html><body>no backend</body></html>');
        return;
      }
      const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    const h = holds.find((x) => x.left > 0 && x.matches(req) && --x.left === 0);
    if (!h) return forward();
    h.reached();
    void h.released.then(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(matches, nth = 1) {
      let reached!: () => void;
      let release!: () => void;
      const held = { matches, left: nth, reached: () => reached(), released: new Promise<void>((r) => (release = r)) };
      holds.push(held);
      return { reached: new Promise<void>((r) => (reached = r)), release: () => release() };
    },
    down: (status) => (downWith = status),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  };
}

/** `count` small text files in a new folder, each its own bytes. */
function textFolder(dir: string, count: number, tag: string): string {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(dir, `${tag}-${String(i).padStart(2, '0')}.txt`), `${tag} note ${i}: about the heron number ${i * 13}.`);
  return dir;
}

const isUpload = (req: IncomingMessage) => req.method === 'POST' && req.url!.startsWith('/api/v1/upload');

interface UploadJson {
  documents: Array<{ id: string; file: string }>;
  failed: unknown[];
  error?: { code: string; message: string };
}

describe('--json when a command fails partway', () => {
  const dirs = tempDirs('docsearch-json-failures');
  const root = dirs.make('sources');
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { args: ['--source-roots', root, '--sources-min-interval', '1'] });
  afterAll(() => dirs.removeAll());

  /** A second key of the suite's user, for a CLI run the test revokes it under. */
  async function key(name: string): Promise<{ id: string; key: string }> {
    const made = await api(s.d, '/api/v1/keys', { token: s.user.apiKey, body: { name } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return { id: made.body.id, key: made.body.key };
  }
  const revoke = async (id: string) => expect((await api(s.d, `/api/v1/keys/${id}`, { method: 'DELETE', token: s.user.apiKey })).status).toBe(204);
  const documentStatus = async (id: string) => (await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).status;

  it('upload: the key revoked before the second batch — stdout lists the first batch, with the error; exit 4', { timeout: 2 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('revoked'), 'notes'), 45, 'revoked');
    const k = await key('revoked mid-upload');
    const r = await relay(s.d.url);
    try {
      const held = r.hold(isUpload, 2);
      const run = runCli(['upload', folder, '--project', 'json-revoked', '--create-project', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await held.reached;
      await revoke(k.id);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(4);
      const out = JSON.parse(res.stdout) as UploadJson;
      expect(out.documents).toHaveLength(20);
      expect(out.error).toMatchObject({ code: 'unauthenticated' });
      expect(out.error!.message).toContain('POST /api/v1/upload');
      expect(res.stderr).toContain(out.error!.message);
      // The record is true: each document it lists is on the server.
      for (const d of out.documents) expect(await documentStatus(d.id)).toBe(200);
    } finally {
      await r.close();
    }
  });

  it('upload --sync: a 500 on the second batch — stdout lists what got in, with the server\'s error; exit 1', { timeout: 2 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('broken'), 'notes'), 30, 'broken');
    const r = await relay(s.d.url);
    const spool = join(s.d.dataDir, 'files', 'tmp');
    try {
      const held = r.hold(isUpload, 2);
      const run = runCli(['upload', folder, '--project', 'json-500', '--create-project', '--sync', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url } });
      await held.reached;
      // Where the daemon receives uploads becomes a file: its next upload fails on the server (500).
      rmSync(spool, { recursive: true, force: true });
      writeFileSync(spool, 'not a folder');
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(1);
      const out = JSON.parse(res.stdout) as UploadJson & { sync: { counts: { new: number } } };
      expect(out.documents).toHaveLength(20);
      expect(out.sync.counts.new).toBe(30);
      expect(out.error?.code).toBe('internal_error');
      expect(res.stderr).toContain('request');
      for (const d of out.documents) expect(await documentStatus(d.id)).toBe(200);
    } finally {
      rmSync(spool, { force: true });
      mkdirSync(spool, { recursive: true, mode: 0o700 });
      await r.close();
    }
  });

  it('documents delete: the key revoked before the second delete — stdout has the one deleted, with the error; exit 4', { timeout: MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('delete'), 'notes'), 3, 'deleted');
    const up = await runCli(['upload', folder, '--project', 'json-delete', '--create-project', '--json'], { env: s.env });
    expect(up.code, up.stderr).toBe(0);
    const ids = (JSON.parse(up.stdout) as UploadJson).documents.map((d) => d.id);
    const k = await key('revoked mid-delete');
    const r = await relay(s.d.url);
    try {
      const held = r.hold((req) => req.method === 'DELETE' && req.url!.startsWith('/api/v1/documents/'), 2);
      const run = runCli(['documents', 'delete', ...ids, '--yes', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await held.reached;
      await revoke(k.id);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(4);
      const out = JSON.parse(res.stdout) as { deleted: string[]; failed: unknown[]; error: { code: string } };
      expect(out.deleted).toEqual([ids[0]]);
      expect(out.failed).toEqual([]);
      expect(out.error.code).toBe('unauthenticated');
      expect(await Promise.all(ids.map(documentStatus))).toEqual([404, 200, 200]);
    } finally {
      await r.close();
    }
  });

  it('documents delete: a load balancer answering 503 past the retries stops the rest (not a minute per document)', { timeout: 4 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('lb'), 'notes'), 3, 'balanced');
    const up = await runCli(['upload', folder, '--project', 'json-503', '--create-project', '--json'], { env: s.env });
    expect(up.code, up.stderr).toBe(0);
    const ids = (JSON.parse(up.stdout) as UploadJson).documents.map((d) => d.id);
    const r = await relay(s.d.url);
    try {
      const held = r.hold((req) => req.method === 'DELETE' && req.url!.startsWith('/api/v1/documents/'), 2);
      const run = runCli(['documents', 'delete', ...ids, '--yes', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url }, timeoutMs: 3 * MINUTE });
      await held.reached;
      r.down(503);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(1);
      const out = JSON.parse(res.stdout) as { deleted: string[]; failed: unknown[]; error: { code: string; message: string } };
      expect(out.deleted).toEqual([ids[0]]);
      expect(out.failed).toEqual([]);
      expect(out.error.code).toBe('http_503');
      expect(out.error.message).toContain('asked again for');
      expect(await Promise.all(ids.map(documentStatus))).toEqual([404, 200, 200]);
    } finally {
      await r.close();
    }
  });

  it('sources add --wait: the key revoked while waiting — stdout still holds the new source; exit 4', { timeout: 2 * MINUTE }, async () => {
    const dir = textFolder(join(root, 'add-wait'), 2, 'source');
    const client = new SourceClient(s.d, s.user.apiKey);
    const project = await client.project('json source wait');
    const k = await key('revoked mid-wait');
    const r = await relay(s.d.url);
    try {
      const held = r.hold((req) => req.method === 'GET' && /\/sources\/[^/?]+$/.test(req.url!));
      const run = runCli(['sources', 'add', 'json source wait', `file://${dir}`, '--wait', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await held.reached;
      await revoke(k.id);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(4);
      const out = JSON.parse(res.stdout) as { id: string; url: string };
      const listed = await api(s.d, `/api/v1/projects/${project}/sources`, { token: s.user.apiKey });
      expect(listed.body.sources.map((x: { id: string }) => x.id)).toEqual([out.id]);
      expect(out.url).toBe(`file://${dir}`);
    } finally {
      await r.close();
    }
  });

  it('sources sync --wait --jq: a bad filter is the usage error it is everywhere (exit 2), not a crash', { timeout: 2 * MINUTE }, async () => {
    const dir = textFolder(join(root, 'jq'), 1, 'jq');
    const client = new SourceClient(s.d, s.user.apiKey);
    const project = await client.project('json jq');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    const res = await runCli(['sources', 'sync', source.id, '--wait', '--jq', '.['], { env: s.env });
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: --jq "\.\[": /m);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(res.code, res.stderr).toBe(2);
  });

  it('upload --sync --watch --json: a key revoked while watching ends the stream with a stopped line naming the error; exit 4', { timeout: 2 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('watch'), 'notes'), 2, 'watched');
    const k = await key('revoked mid-watch');
    const cli: ChildProcess = spawn(process.execPath, [BIN, 'upload', folder, '--project', 'json-watch', '--create-project', '--sync', '--watch', '--json'], {
      env: { ...process.env, ...s.env, DOCSEARCH_TOKEN: k.key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    cli.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    cli.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const closed = new Promise<number | null>((resolve) => cli.once('close', resolve));
    try {
      await waitFor(() => stdout.includes('"event":"watching"'), MINUTE, 'the watch to start');
      await revoke(k.id);
      writeFileSync(join(folder, 'after.txt'), 'A note written once the key was revoked.');
      expect(await closed, stderr).toBe(4);
      const last = JSON.parse(stdout.trim().split('\n').at(-1)!);
      expect(last).toMatchObject({ event: 'stopped', folder, error: { code: 'unauthenticated' } });
      expect(stderr).toContain(last.error.message);
    } finally {
      cli.kill('SIGKILL');
    }
  });

  it('before any work: nothing listening, a malformed URL, a project not found — stdout empty, the error on stderr (exit 1, exit 2)', { timeout: MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('early'), 'notes'), 1, 'early');
    const refused = await runCli(['upload', folder, '--json'], { env: cliEnv(null, { DOCSEARCH_URL: await unusedUrl(), DOCSEARCH_TOKEN: s.user.apiKey }) });
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/could not reach .*ECONNREFUSED/);
    expect(refused.code).toBe(1);
    const malformed = await runCli(['documents', 'delete', 'doc_x', '--yes', '--json'], { env: cliEnv(null, { DOCSEARCH_URL: 'http://exa mple:99999', DOCSEARCH_TOKEN: s.user.apiKey }) });
    expect(malformed.stdout).toBe('');
    expect(malformed.stderr).toContain('invalid server URL');
    expect(malformed.code).toBe(2);
    // A watch whose first pass cannot begin (no such project) has no stream to end: nothing on stdout either.
    const watch = await runCli(['upload', folder, '--project', 'no-such-project', '--sync', '--watch', '--json'], { env: s.env });
    expect(watch.stdout).toBe('');
    expect(watch.stderr).toContain('no-such-project');
    expect(watch.code).toBe(1);
  });
});

describe('--json when the daemon is killed mid-upload', () => {
  const dirs = tempDirs('docsearch-json-killed');
  let d: Daemon | undefined;
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('upload: stdout lists the batch the server took before it died, with the error; each is there after a restart', { timeout: 4 * MINUTE }, async () => {
    const first = await startDaemon();
    d = first;
    const user = await addUser(first);
    const folder = textFolder(join(dirs.make('killed'), 'notes'), 25, 'killed');
    const r = await relay(first.url);
    let out: UploadJson;
    try {
      const held = r.hold(isUpload, 2);
      const run = runCli(['upload', folder, '--json'], { env: cliEnv(null, { DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: user.apiKey }), timeoutMs: 3 * MINUTE });
      await held.reached;
      first.proc.kill('SIGKILL');
      await first.stop();
      held.release();
      // The CLI asks a server that went away again for a minute before it gives up.
      const res = await run;
      expect(res.code, res.stderr).toBe(1);
      out = JSON.parse(res.stdout) as UploadJson;
      expect(out.documents).toHaveLength(20);
      expect(out.error).toMatchObject({ code: 'unreachable' });
      expect(res.stderr).toContain('could not reach');
    } finally {
      await r.close();
    }
    d = await startDaemon({ dataDir: first.dataDir, databaseUrl: first.databaseUrl });
    for (const doc of out.documents) expect((await api(d, `/api/v1/documents/${doc.id}`, { token: user.apiKey })).status).toBe(200);
  });
});
