/**
 * Ctrl-C (SIGINT) once a command that changes things has begun (docs/cli.md, "When a command fails"): it stops there,
 * and stdout still holds its `--json` document of what it did, with `error.code` "interrupted", exit 130. Before, an
 * `upload` of many files, a `documents delete` of several or a `sources add --wait` died at once on SIGINT: exit 130
 * and empty stdout, though the server had taken the first batch (or made the source). A relay in front of the real daemon holds one chosen request, so the signal
 * comes at a known point of the run.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, BIN } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { type CliSuite, cliSuite } from './cli-env.js';

/** An HTTP relay to `target` that holds the `nth` request `matches` picks until released. */
async function holdingRelay(target: string, matches: (req: IncomingMessage) => boolean, nth: number) {
  let seen = 0;
  let reached!: () => void;
  let release!: () => void;
  const reachedP = new Promise<void>((r) => (reached = r));
  const released = new Promise<void>((r) => (release = r));
  const server: Server = createServer((req, res) => {
    const forward = () => {
      const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.on('error', () => up.destroy());
      req.pipe(up);
    };
    if (matches(req) && ++seen === nth) {
      reached();
      void released.then(forward);
    } else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reached: reachedP,
    release: () => release(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  };
}

/** Runs the CLI, sends it SIGINT once `when` resolves, and gives what it printed and its exit code. */
function interrupted(args: string[], env: Record<string, string>, when: Promise<void>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  void when.then(() => proc.kill('SIGINT'));
  return new Promise((res) => proc.once('close', (code) => res({ code, stdout, stderr })));
}

describe('Ctrl-C partway through a command that changes things', () => {
  const dirs = tempDirs('docsearch-ctrl-c');
  const roots = dirs.make('sources');
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { args: ['--source-roots', roots] });
  afterAll(() => dirs.removeAll());

  it('upload --json of 45 files, Ctrl-C during the second batch: the first batch is on stdout with error "interrupted", exit 130', { timeout: 120_000 }, async () => {
    const folder = join(dirs.make('upload'), 'notes');
    mkdirSync(folder);
    for (let i = 0; i < 45; i++) writeFileSync(join(folder, `n-${String(i).padStart(2, '0')}.txt`), `note ${i} about the kestrel number ${i * 7}`);
    const r = await holdingRelay(s.d.url, (req) => req.method === 'POST' && req.url!.startsWith('/api/v1/upload'), 2);
    try {
      const run = await interrupted(['upload', folder, '--project', 'ctrl-c', '--create-project', '--json'], { ...s.env, DOCSEARCH_URL: r.url }, r.reached);
      expect(run.code, run.stderr).toBe(130);
      const out = JSON.parse(run.stdout) as { documents: Array<{ id: string; file: string }>; error: { code: string; message: string } };
      expect(out.documents).toHaveLength(20);
      expect(out.error.code).toBe('interrupted');
      expect(run.stderr).toContain('interrupted (Ctrl-C)');
      expect(run.stderr).not.toMatch(/\n\s+at /);
      // What stdout names is on the server.
      const listed = await api(s.d, '/api/v1/documents?limit=100', { token: s.user.apiKey });
      const ids = new Set((listed.body.documents as Array<{ id: string }>).map((d) => d.id));
      for (const d of out.documents) expect(ids.has(d.id), d.file).toBe(true);
    } finally {
      r.release();
      await r.close();
    }
  });

  it('upload without --json: the table of what got in on stdout, then how far it got and the command that finishes it', { timeout: 120_000 }, async () => {
    const folder = join(dirs.make('upload-plain'), 'plain');
    mkdirSync(folder);
    for (let i = 0; i < 30; i++) writeFileSync(join(folder, `p-${String(i).padStart(2, '0')}.txt`), `plain note ${i} about the osprey number ${i * 11}`);
    const r = await holdingRelay(s.d.url, (req) => req.method === 'POST' && req.url!.startsWith('/api/v1/upload'), 2);
    try {
      const run = await interrupted(['upload', folder, '--project', 'ctrl-c-plain', '--create-project'], { ...s.env, DOCSEARCH_URL: r.url }, r.reached);
      expect(run.code, run.stderr).toBe(130);
      expect(run.stdout.trimEnd().split('\n')).toHaveLength(20);
      expect(run.stderr).toContain('stopped with 20 of 30 files done; not done: 10 files not sent (the same command again finishes the upload)\ninterrupted (Ctrl-C)\n');
      expect(run.stderr).toContain('interrupted (Ctrl-C)');
    } finally {
      r.release();
      await r.close();
    }
  });

  it('documents delete --json of three, Ctrl-C while the second is asked: the first two are deleted and said, the third is left, exit 130', { timeout: 120_000 }, async () => {
    const ids: string[] = [];
    for (const name of ['d1', 'd2', 'd3']) {
      const form = new FormData();
      form.append('file', new Blob([`the ${name} page about herons`]), `${name}.txt`);
      const res = await fetch(`${s.d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.user.apiKey}` }, body: form });
      expect(res.status).toBeLessThan(300);
      ids.push(((await res.json()) as { documents: Array<{ id: string }> }).documents[0]!.id);
    }
    const r = await holdingRelay(s.d.url, (req) => req.method === 'DELETE', 2);
    try {
      const run = await interrupted(['documents', 'delete', ...ids, '--yes', '--json'], { ...s.env, DOCSEARCH_URL: r.url }, r.reached.then(() => void setTimeout(r.release, 300)));
      expect(run.code, run.stderr).toBe(130);
      const out = JSON.parse(run.stdout) as { deleted: string[]; failed: unknown[]; error: { code: string } };
      expect(out.deleted).toEqual(ids.slice(0, 2));
      expect(out.error.code).toBe('interrupted');
      expect((await api(s.d, `/api/v1/documents/${ids[2]}`, { token: s.user.apiKey })).status).toBe(200);
    } finally {
      r.release();
      await r.close();
    }
  });

  it('sources add --wait --json, Ctrl-C while waiting for the pass: the new source is on stdout, exit 130', { timeout: 120_000 }, async () => {
    const folder = join(roots, 'watched');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a.txt'), 'a page about plovers');
    expect((await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name: 'ctrl-c-source' } })).status).toBe(201);
    const r = await holdingRelay(s.d.url, (req) => req.method === 'GET' && /\/sources\/[^/?]+$/.test(req.url!), 1);
    try {
      const run = await interrupted(['sources', 'add', 'ctrl-c-source', `file://${folder}`, '--wait', '--json'], { ...s.env, DOCSEARCH_URL: r.url }, r.reached);
      expect(run.code, run.stderr).toBe(130);
      const out = JSON.parse(run.stdout) as { id: string; url: string };
      expect(out.url).toBe(`file://${folder}`);
      expect(run.stderr).toContain(`stopped waiting; the pass of file://${folder} goes on on the server\nhint: docsearch sources show ${out.id}`);
    } finally {
      r.release();
      await r.close();
    }
  });
});
