/**
 * docs/scale-out.md's S3 store for a trial, as an operator would follow it: its shell block run as written (the
 * folder, ports and keys it lets one set beforehand chosen here), a daemon serving a library on the store it made
 * (an upload found by search), then its stop block, which leaves no process and no folder behind.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { rgwUnavailable } from '../helpers/rgw.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const SKIP = rgwUnavailable();

/** The shell blocks of the recipe: the one that starts the store, and the one that stops it. */
function recipe(): { start: string; stop: string } {
  const text = readFileSync(join(REPO, 'docs/scale-out.md'), 'utf8');
  const section = text.slice(text.indexOf('### An S3 store for a trial'));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return { start: blocks[0]!, stop: blocks[1]! };
}

/** Runs `script` with bash, `set -e`, to its end (or `timeoutMs`). */
function bash(script: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn('bash', ['-c', `set -e\n${script}`], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe.skipIf(SKIP !== null)(`scale-out.md's S3 store for a trial${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const work = mkdtempSync(join(tmpdir(), 'docsearch-s3-trial-'));
  const dir = join(work, 's3');
  let daemon: Daemon | undefined;
  let env: Record<string, string>;
  afterAll(async () => {
    await daemon?.stop();
    if (existsSync(join(dir, 'run'))) await bash(recipe().stop, env, 60_000);
    removeDir(work);
  });

  it('starts a store a library is served on, and its stop block takes it all down', async () => {
    const { start, stop } = recipe();
    env = {
      DIR: dir,
      MON_PORT: String(await freePort()),
      RGW_PORT: String(await freePort()),
      AWS_ACCESS_KEY_ID: `DS${randomBytes(8).toString('hex')}`,
      AWS_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
    };
    const started = await bash(start, env, 180_000);
    expect(started.code, started.output).toBe(0);

    daemon = await startDaemon({
      databaseUrl: '',
      env: { AWS_ENDPOINT_URL: `http://127.0.0.1:${env.RGW_PORT}`, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY! },
      args: ['--storage', 's3://docsearch/library'],
      timeoutMs: 120_000,
    });
    expect((await api(daemon, '/api/v1/health')).body.components.s3).toEqual({ status: 'up' });
    const user = await addUser(daemon);
    const up = await uploadFiles(daemon, user.apiKey, [{ name: 'kites.txt', bytes: Buffer.from('Box kites fly steadier than diamond kites in gusty wind.\n') }], { query: '?wait=true' });
    expect(up.body.documents[0].status).toBe('ready');
    const found = await api(daemon, '/api/v1/search', { token: user.apiKey, body: { query: 'which kites fly steadily', limit: 1 } });
    expect(found.body.results[0].document.id).toBe(up.body.documents[0].id);
    expect(await daemon.stop()).toBe(0);
    daemon = undefined;

    const pids = readdirSync(join(dir, 'run'))
      .filter((f) => f.endsWith('.pid'))
      .map((f) => Number(readFileSync(join(dir, 'run', f), 'utf8')));
    expect(pids.length, 'the monitor, the OSD and the gateway').toBe(3);
    const stopped = await bash(stop, env, 60_000);
    expect(stopped.code, stopped.output).toBe(0);
    expect(existsSync(dir)).toBe(false);
    const deadline = Date.now() + 30_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(alive)).toEqual([]);
  }, 300_000);
});
