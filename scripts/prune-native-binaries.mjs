// postinstall: removes the onnxruntime-node binaries built for other operating systems and CPUs.
//
// onnxruntime-node ships one package with its native library for every platform (bin/napi-v6/<os>/<arch>:
// 190 MB of the 240 MB are darwin and win32) and loads only `${process.platform}/${process.arch}`. npm has no
// setting to leave files of a package out, and the package has no per-platform optional dependencies to omit,
// so they are deleted here, after npm has placed them. Plain JavaScript: it runs before anything is built.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

let root;
try {
  root = dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
} catch {
  process.exit(0); // not installed (e.g. --omit of it): nothing to prune
}
const bin = join(root, 'bin', 'napi-v6');
if (!existsSync(join(bin, process.platform, process.arch))) process.exit(0); // an unknown layout: leave it as it is

let freed = 0;
const remove = (path) => {
  freed += sizeOf(path);
  rmSync(path, { recursive: true, force: true });
};
for (const os of readdirSync(bin)) {
  if (os !== process.platform) remove(join(bin, os));
}
for (const arch of readdirSync(join(bin, process.platform))) {
  if (arch !== process.arch) remove(join(bin, process.platform, arch));
}
if (freed > 0) console.log(`docsearch: removed onnxruntime-node binaries for other platforms (${(freed / 1e6).toFixed(0)} MB)`);

function sizeOf(path) {
  let total = 0;
  for (const e of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += statSync(join(e.parentPath ?? e.path, e.name)).size;
  }
  return total;
}
