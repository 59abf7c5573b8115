import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '../helpers/daemon.js';

/** Children run asynchronously: a test worker blocked for minutes loses its line to vitest. */
export const execFileAsync = promisify(execFile);

/**
 * The environment a user's shell would have: this process's, less what `npm test` put there. npm exports the
 * repository's .npmrc and its own settings as npm_config_*, its run state as
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
  /** What npm said on stderr (its warnings). */
  npmStderr: string;
}

/**
 * The README's lines that install `pkg`'s tarball: from its Install section's code block that packs it, the lines
 * from the first that names the tarball to the `npm install -g` (e.g. `tgz=$PWD/docsearch-0.2.0.tgz` and
 * `npm install -g --allow-scripts="better-sqlite3,$tgz" "$tgz"`).
 */
export function readmeInstall(pkg: 'docsearch' | 'docsearch-cli'): string[] {
  const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  const tarball = `${pkg}-${version}.tgz`;
  const block = [...readFileSync(join(REPO, 'README.md'), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!.split('\n').map((l) => l.replace(/\s+# .*$/, '')))
    .find((lines) => lines.some((l) => l.includes(tarball)) && lines.some((l) => l.startsWith('npm install -g ')));
  if (!block) throw new Error(`README.md shows no \`npm install -g\` of ${tarball}`);
  const first = block.findIndex((l) => l.includes(tarball));
  const last = block.findIndex((l) => l.startsWith('npm install -g '));
  return block.slice(first, last + 1);
}

/**
 * The README's install of `pkg` (readmeInstall), run with bash in the folder that holds `tgz` (as after `npm run
 * pack:…`), into an empty prefix (npm_config_prefix) and from a user's environment.
 */
export async function installGlobally(tgz: string, pkg: 'docsearch' | 'docsearch-cli'): Promise<Installed> {
  const prefix = mkdtempSync(join(tmpdir(), 'docsearch-prefix-'));
  const lines = readmeInstall(pkg);
  const t0 = performance.now();
  const { stderr } = await execFileAsync('bash', ['-euc', lines.join('\n')], { cwd: dirname(tgz), env: { ...userEnv(), npm_config_prefix: prefix }, encoding: 'utf8', timeout: 900_000, maxBuffer: 64 << 20 });
  return { prefix, bin: join(prefix, 'bin', 'docsearch'), seconds: (performance.now() - t0) / 1000, npmStderr: stderr };
}

/** The packages npm says have install scripts nobody allowed (`npm warn install-scripts`), by name. */
export const unallowedScripts = (npmStderr: string): string[] =>
  [...npmStderr.matchAll(/^npm warn install-scripts\s+(@?[^@\s]+)@\S+ \(/gm)].map((m) => m[1]!).sort();

/** Bytes of every file under `dir` (links counted as links): the installed size. */
export function installedBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() || e.isSymbolicLink()) total += lstatSync(join(e.parentPath, e.name)).size;
  }
  return total;
}
