// Packs docsearch-cli, the client-only package: `node scripts/pack-cli.mjs [OUT_DIR]` (npm run pack:cli) writes
// docsearch-cli-<version>.tgz to OUT_DIR (default: the repository) and prints its path.
//
// esbuild bundles src/client-main.ts — the client commands, which import no server code — into dist/, so the
// package installs no server dependency and nothing native is built. Two packages stay outside the bundle:
// jq-web (`--jq`) finds its WebAssembly file beside its own script, and @napi-rs/keyring (the OS keychain) is a
// native binding shipped prebuilt per platform by the registry; it is optional, and without it logins go to the
// 0600 file (src/cli/credentials.ts). The version is the repository's package.json's, like the full package's.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXTERNAL = ['jq-web'];
const OPTIONAL_EXTERNAL = ['@napi-rs/keyring'];

const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const out = resolve(process.argv[2] ?? REPO);
const staging = mkdtempSync(join(tmpdir(), 'docsearch-cli-pack-'));
try {
  const pkg = join(staging, 'package');
  const { metafile } = await build({
    entryPoints: { main: join(REPO, 'src/client-main.ts') },
    outdir: join(pkg, 'dist'),
    bundle: true,
    // Commands load their heavier modules (MCP SDK, prompts, jq) on use: split, they stay out of every start.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'linked',
    external: [...EXTERNAL, ...OPTIONAL_EXTERNAL],
    // Bundled CommonJS modules call require(); an ES module has none of its own.
    banner: { js: "import{createRequire as __docsearchRequire}from'node:module';const require=__docsearchRequire(import.meta.url);" },
    plugins: [
      {
        // src/core/version.ts reads package.json beside dist/ at run time; the bundle carries the version instead.
        name: 'version',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/]core[\\/]version\.ts$/ }, () => ({ contents: `export const VERSION = ${JSON.stringify(root.version)};`, loader: 'ts' }));
        },
      },
    ],
    metafile: true,
    logLevel: 'warning',
  });
  // The client entry may reach cli/, core/, mcp/ and terminal/ only (docs/DEVELOPING.md); anything else would drag the server in.
  const foreign = Object.keys(metafile.inputs).filter((i) => !i.includes('node_modules/') && !/^src\/(cli|core|mcp|terminal)\/|^src\/client-main\.ts$/.test(i));
  if (foreign.length > 0) throw new Error(`the client bundle reaches beyond cli/, core/, mcp/ and terminal/: ${foreign.join(', ')}`);
  mkdirSync(join(pkg, 'bin'));
  cpSync(join(REPO, 'bin/docsearch'), join(pkg, 'bin/docsearch'));
  cpSync(join(REPO, 'completions'), join(pkg, 'completions'), { recursive: true });
  cpSync(join(REPO, 'README.md'), join(pkg, 'README.md'));
  const pick = (names) => Object.fromEntries(names.map((n) => [n, root.dependencies[n]]));
  const manifest = {
    name: 'docsearch-cli',
    version: root.version,
    description: 'The docsearch client alone (login, upload, search, projects, documents, keys, mcp): talks to a docsearch server over HTTP.',
    license: root.license,
    type: 'module',
    bin: { docsearch: 'bin/docsearch' },
    files: ['bin', 'dist', 'completions', 'README.md'],
    engines: root.engines,
    dependencies: pick(EXTERNAL),
    optionalDependencies: pick(OPTIONAL_EXTERNAL),
  };
  writeFileSync(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  mkdirSync(out, { recursive: true });
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  console.log(join(out, filename));
} finally {
  rmSync(staging, { recursive: true, force: true });
}
