import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '../helpers/daemon.js';

/** Children run asynchronously: a test worker blocked for minutes loses its line to vitest. */
export const execFileAsync = promisify(execFile);

/**
 * The environment a user's shell would have: this process's, less what `npm test` put there. npm exports the
 * repository's .npmrc (`onnxruntime-node-install=skip`) and its own settings as npm_config_*, its run state as
 * npm_*, and puts node_modules/.bin and its node-gyp shim on PATH; none of that may steer the install under test.
 * The machine's own npm configuration (~/.npmrc) and certificates stay, as they would for a user.
 */
export function userEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^npm_/i.test(k) || /^ONNXRUNTIME_/i.test(k) || k === 'INIT_CWD') continue;
    env[k] = v;
  }
  env.PATH = (env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes(`node_modules${'/'}.bin`) && !p.includes('node-gyp-bin'))
    .join(delimiter);
  return env;
}

/** Runs a committed pack script (scripts/pack-server.mjs or pack-cli.mjs) and returns the tarball's path. */
export async function pack(script: string): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'docsearch-pack-out-'));
  const { stdout } = await execFileAsync(process.execPath, [join(REPO, 'scripts', script), out], { cwd: REPO, env: userEnv(), encoding: 'utf8', timeout: 600_000 });
  return stdout.trim().split('\n').at(-1)!;
}

export interface Installed {
  prefix: string;
  /** The installed `docsearch` launcher. */
  bin: string;
  seconds: number;
}

/** `npm install -g --prefix <empty folder> <tgz>`, run from a folder outside the repository, as a user would. */
export async function installGlobally(tgz: string): Promise<Installed> {
  const prefix = mkdtempSync(join(tmpdir(), 'docsearch-prefix-'));
  const cwd = mkdtempSync(join(tmpdir(), 'docsearch-user-'));
  const t0 = performance.now();
  await execFileAsync('npm', ['install', '-g', '--prefix', prefix, tgz], { cwd, env: userEnv(), encoding: 'utf8', timeout: 900_000, maxBuffer: 64 << 20 });
  return { prefix, bin: join(prefix, 'bin', 'docsearch'), seconds: (performance.now() - t0) / 1000 };
}

/** Bytes of every file under `dir` (links counted as links): the installed size. */
export function installedBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() || e.isSymbolicLink()) total += lstatSync(join(e.parentPath, e.name)).size;
  }
  return total;
}
