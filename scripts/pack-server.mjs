// Packs the full docsearch package: `node scripts/pack-server.mjs [OUT_DIR]` (npm run pack:server, after a build)
// writes docsearch-<version>.tgz to OUT_DIR (default: the repository) and prints its path.
//
// Two dependencies cannot install as npm would place them on a user's machine, where no .npmrc or `overrides` of
// ours applies (npm reads those of the project being installed, not of a package it installs):
// - onnxruntime-node's install script downloads CUDA and TensorRT libraries from outside the npm registry on
//   linux/x64, and fails the whole install where that is not reachable. docsearch loads the CPU provider only.
// - @lancedb/lancedb has @huggingface/transformers (and openai) as optional dependencies, for embedding functions
//   docsearch does not use; transformers brings an older onnxruntime-node whose script downloads the same way.
// So the package bundles both, each as the registry's own tarball of the pinned version (every platform's files,
// so it installs anywhere) with only those parts taken out. npm installs nothing for a bundled package, so what
// they still need (LanceDB's per-platform native packages, onnxruntime-common, …) becomes the package's own
// dependencies, which Node resolves from the bundled copies by walking up. Our postinstall
// (prune-native-binaries.mjs) removes onnxruntime-node's binaries for other platforms where it is installed.
// Built in a staging folder: the checkout's node_modules (pruned to this machine's platform) is never touched.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** What each bundled package loses: its install script, and the dependencies docsearch never loads. */
const BUNDLED = {
  'onnxruntime-node': { script: 'postinstall', dependencies: ['adm-zip', 'global-agent'] /* used by the script only */ },
  '@lancedb/lancedb': { optionalDependencies: ['@huggingface/transformers', 'openai'] },
};
const KINDS = ['dependencies', 'optionalDependencies'];

const out = resolve(process.argv[2] ?? REPO);
const staging = mkdtempSync(join(tmpdir(), 'docsearch-pack-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

/** `npm pack` of `spec` (a folder, or name@version from the registry) unpacked into `dest`. */
function unpack(spec, cwd, dest) {
  const [{ filename }] = JSON.parse(npm(['pack', spec, '--json', '--ignore-scripts', '--pack-destination', staging], cwd));
  mkdirSync(dest, { recursive: true });
  execFileSync('tar', ['-xzf', join(staging, filename), '-C', dest, '--strip-components=1']);
  rmSync(join(staging, filename));
}

try {
  const pkg = join(staging, 'package');
  // npm's own choice of the checkout's files (package.json "files"); dist/ must be built.
  unpack('.', REPO, pkg);
  const manifest = readJson(join(pkg, 'package.json'));
  for (const [name, cut] of Object.entries(BUNDLED)) {
    const dir = join(pkg, 'node_modules', name);
    unpack(`${name}@${manifest.dependencies[name]}`, staging, dir);
    const bundled = readJson(join(dir, 'package.json'));
    if (cut.script) delete bundled.scripts[cut.script];
    for (const kind of KINDS) {
      for (const dep of cut[kind] ?? []) delete bundled[kind][dep];
      for (const [dep, range] of Object.entries(bundled[kind] ?? {})) {
        const ours = manifest.dependencies[dep] ?? manifest.optionalDependencies?.[dep];
        if (ours !== undefined && ours !== range) throw new Error(`${name} needs ${dep}@${range}, docsearch has ${ours}`);
        manifest[kind] = { ...manifest[kind], [dep]: range };
      }
      // Moved, not copied: npm takes what a bundled package declares to come from the bundle, and would leave it empty.
      delete bundled[kind];
    }
    for (const [dep, range] of Object.entries(bundled.peerDependencies ?? {})) {
      if (!manifest.dependencies[dep]) throw new Error(`${name} needs ${dep}@${range} beside it, docsearch has none`);
    }
    delete bundled.peerDependencies;
    writeJson(join(dir, 'package.json'), bundled);
  }
  manifest.bundleDependencies = Object.keys(BUNDLED);
  // A user's install runs the postinstall only; the rest is for this repository.
  manifest.scripts = { postinstall: manifest.scripts.postinstall };
  delete manifest.devDependencies;
  delete manifest.overrides;
  writeJson(join(pkg, 'package.json'), manifest);
  mkdirSync(out, { recursive: true });
  const [{ filename }] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', out], pkg));
  console.log(join(out, filename));
} finally {
  rmSync(staging, { recursive: true, force: true });
}
