/**
 * What `--json` leaves on stdout when a command fails (docs/cli.md, "When a command fails"): a command stopped after
 * it began its work prints its usual JSON document of what it did, with `error: {code, message}` (kept when `--json`
 * selects fields), and exits with the error's code; one that failed before its work prints nothing on stdout. Without
 * `--json` the same run says on stderr how far it got and which items are left, to run again. Driven through the built CLI against a real
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

  it('documents delete: a load balancer answering 503 past the retries stops the rest (not a window per document)', async () => {
    const folder = textFolder(join(dirs.make('lb'), 'notes'), 3, 'balanced');
    const up = await runCli(['upload', folder, '--project', 'json-503', '--create-project', '--json'], { env: s.env });
    expect(up.code, up.stderr).toBe(0);
    const ids = (JSON.parse(up.stdout) as UploadJson).documents.map((d) => d.id);
    const r = await relay(s.d.url);
    try {
      const held = r.hold((req) => req.method === 'DELETE' && req.url!.startsWith('/api/v1/documents/'), 2);
      // A window of 3 s rather than the default minute: the run stops after one window, not one per document left.
      const run = runCli(['documents', 'delete', ...ids, '--yes', '--json'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_RETRY_FOR: '3' } });
      await held.reached;
      r.down(503);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(1);
      const out = JSON.parse(res.stdout) as { deleted: string[]; failed: unknown[]; error: { code: string; message: string } };
      expect(out.deleted).toEqual([ids[0]]);
      expect(out.failed).toEqual([]);
      expect(out.error.code).toBe('http_503');
      expect(out.error.message).toMatch(/\(asked again for [34] s\)/);
      expect(await Promise.all(ids.map(documentStatus))).toEqual([404, 200, 200]);
    } finally {
      await r.close();
    }
  });

  /** Three uploaded documents of a new project, their ids in the order `documents delete` takes them. */
  async function threeDocuments(tag: string): Promise<string[]> {
    const up = await runCli(['upload', textFolder(join(dirs.make(tag), 'notes'), 3, tag), '--project', `stop-${tag}`, '--create-project', '--json'], { env: s.env });
    expect(up.code, up.stderr).toBe(0);
    return (JSON.parse(up.stdout) as UploadJson).documents.map((d) => d.id);
  }

  /** Runs the CLI through a relay whose `nth` DELETE under `under` waits while the key it runs with is revoked. */
  async function revokedAtDelete(argv: string[], nth: number, under = '/api/v1/documents/'): ReturnType<typeof runCli> {
    const k = await key(`revoked at delete ${nth}`);
    const r = await relay(s.d.url);
    try {
      const held = r.hold((req) => req.method === 'DELETE' && req.url!.startsWith(under), nth);
      const run = runCli(argv, { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await held.reached;
      await revoke(k.id);
      held.release();
      return await run;
    } finally {
      await r.close();
    }
  }

  it('documents delete without --json: the key revoked before the second delete — stderr says 1 of 3 done and names the two left, then the error; exit 4', { timeout: MINUTE }, async () => {
    const ids = await threeDocuments('text-delete');
    const res = await revokedAtDelete(['documents', 'delete', ...ids, '--yes'], 2);
    expect(res.code, res.stderr).toBe(4);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith('stopped'));
    expect(lines[at]).toBe(`stopped with 1 of 3 documents done; not done: ${ids[1]} ${ids[2]}`);
    expect(lines[at + 1]).toMatch(/^error: DELETE \/api\/v1\/documents\/\S+: /);
    // The list is what the command takes again: the rest is deleted with it.
    const again = await runCli(['documents', 'delete', ...lines[at]!.split('not done: ')[1]!.split(' '), '--yes'], { env: s.env });
    expect(again.code, again.stderr).toBe(0);
    expect(await Promise.all(ids.map(documentStatus))).toEqual([404, 404, 404]);
  });

  it('documents delete without --json: one refused, then the key revoked — the refused one is named with its reason among those not done', { timeout: MINUTE }, async () => {
    const ids = await threeDocuments('text-refused');
    const k = await key('revoked after a refusal');
    const r = await relay(s.d.url);
    try {
      const isDelete = (req: IncomingMessage) => req.method === 'DELETE' && req.url!.startsWith('/api/v1/documents/');
      // The second hold counts the requests the first lets by: its 2nd is the third delete.
      const [first, third] = [r.hold(isDelete, 1), r.hold(isDelete, 2)];
      const run = runCli(['documents', 'delete', ...ids, '--yes'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await first.reached;
      // Deleted elsewhere once the command looked it up: the server refuses that one (404), and the command goes on.
      expect((await api(s.d, `/api/v1/documents/${ids[1]}`, { method: 'DELETE', token: s.user.apiKey })).status).toBe(204);
      first.release();
      await third.reached;
      await revoke(k.id);
      third.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(4);
      const lines = res.stderr.trimEnd().split('\n');
      const at = lines.findIndex((l) => l.startsWith('stopped'));
      expect(lines[at]).toBe(`stopped with 1 of 3 documents done, 1 failed; not done: ${ids[1]} ${ids[2]}`);
      expect(lines[at + 1]).toMatch(new RegExp(`^  notes/text-refused-01\\.txt \\(${ids[1]}\\): \\S`));
      expect(lines[at + 2]).toMatch(/^error: DELETE /);
    } finally {
      await r.close();
    }
  });

  it('saved-searches delete without --json: the ones left are named as the command takes them, by name', { timeout: MINUTE }, async () => {
    const names = ['stop one', 'stop two', 'stop three'];
    for (const name of names) expect((await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey, body: { name, search: { query: 'heron' } } })).status).toBe(201);
    const res = await revokedAtDelete(['saved-searches', 'delete', ...names, '--yes'], 2, '/api/v1/saved-searches/');
    expect(res.code, res.stderr).toBe(4);
    expect(res.stderr).toContain(`\nstopped with 1 of 3 saved searches done; not done: 'stop two' 'stop three'\nerror: `);
  });

  it('--json with fields keeps the error of a stopped run; asking for error is allowed on a complete one (null)', { timeout: MINUTE }, async () => {
    const ids = await threeDocuments('fields');
    const res = await revokedAtDelete(['documents', 'delete', ...ids, '--yes', '--json', 'deleted,failed'], 2);
    expect(res.code, res.stderr).toBe(4);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['deleted', 'error', 'failed']);
    expect(out).toMatchObject({ deleted: [ids[0]], failed: [], error: { code: 'unauthenticated' } });
    const rest = await runCli(['documents', 'delete', ids[1]!, ids[2]!, '--yes', '--json', 'deleted,error'], { env: s.env });
    expect(rest.code, rest.stderr).toBe(0);
    expect(JSON.parse(rest.stdout)).toEqual({ deleted: [ids[1], ids[2]], error: null });
  });

  it('upload without --json: a 500 on the second batch — the table of what got in on stdout, what is left on stderr, and the same command finishes it; exit 1', { timeout: 2 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('text-broken'), 'notes'), 24, 'unsent');
    const r = await relay(s.d.url);
    const spool = join(s.d.dataDir, 'files', 'tmp');
    let res: Awaited<ReturnType<typeof runCli>>;
    try {
      const held = r.hold(isUpload, 2);
      const run = runCli(['upload', folder, '--project', 'text-500', '--create-project'], { env: { ...s.env, DOCSEARCH_URL: r.url } });
      await held.reached;
      rmSync(spool, { recursive: true, force: true });
      writeFileSync(spool, 'not a folder');
      held.release();
      res = await run;
    } finally {
      rmSync(spool, { force: true });
      mkdirSync(spool, { recursive: true, mode: 0o700 });
      await r.close();
    }
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout.trimEnd().split('\n')).toHaveLength(20);
    const stopped = res.stderr.split('\n').find((l) => l.startsWith('stopped'))!;
    // A folder's files named alone would lose their path in it: the same command again finishes the upload.
    expect(stopped).toBe('stopped with 20 of 24 files done; not done: 4 files not sent (the same command again finishes the upload)');
    expect(res.stderr).toMatch(/\nerror: POST \/api\/v1\/upload: .*\(request \S+\)\n/);
    const again = await runCli(['upload', folder, '--project', 'text-500', '--json'], { env: s.env });
    expect(again.code, again.stderr).toBe(0);
    const docs = (JSON.parse(again.stdout) as { documents: Array<{ duplicate?: boolean; path: string }> }).documents;
    expect(docs.filter((d) => !d.duplicate).map((d) => d.path)).toEqual(Array.from({ length: 4 }, (_, i) => `notes/unsent-${String(20 + i).padStart(2, '0')}.txt`));
  });

  it('upload --sync without --json: the key revoked before the second batch — what is left, and that the same command finishes it; exit 4', { timeout: 2 * MINUTE }, async () => {
    const folder = textFolder(join(dirs.make('text-sync'), 'notes'), 22, 'synced');
    const k = await key('revoked mid-sync');
    const r = await relay(s.d.url);
    try {
      const held = r.hold(isUpload, 2);
      const run = runCli(['upload', folder, '--project', 'text-sync', '--create-project', '--sync'], { env: { ...s.env, DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: k.key } });
      await held.reached;
      await revoke(k.id);
      held.release();
      const res = await run;
      expect(res.code, res.stderr).toBe(4);
      expect(res.stderr).toContain('\nstopped with 20 of 22 files done; not done: 2 files not sent (the same command again finishes the sync)\nerror: ');
    } finally {
      await r.close();
    }
    const again = await runCli(['upload', folder, '--project', 'text-sync', '--sync'], { env: s.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('sync: 2 new, 0 changed, 20 unchanged');
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
      // A retry window of 3 s rather than the default minute: what the CLI reports when it gives up is the same.
      const run = runCli(['upload', folder, '--json'], { env: cliEnv(null, { DOCSEARCH_URL: r.url, DOCSEARCH_TOKEN: user.apiKey, DOCSEARCH_RETRY_FOR: '3' }), timeoutMs: 3 * MINUTE });
      await held.reached;
      first.proc.kill('SIGKILL');
      await first.stop();
      held.release();
      // The CLI asks a server that went away again for its retry window before it gives up.
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
