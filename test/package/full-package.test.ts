import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Daemon, REPO, removeDir, startDaemon } from '../helpers/daemon.js';
import { execFileAsync, installGlobally, pack, unallowedScripts, userEnv } from './install.js';

/**
 * `npm install -g docsearch` as a user runs it: the tarball `npm run pack:server` makes, installed with the README's
 * command into an empty prefix from a folder outside the repository, with the machine's own npm configuration and
 * nothing of ours in the environment; npm names no install script docsearch needs as one nobody allowed. It must install (no download outside the registry: onnxruntime-node's and LanceDB's extras
 * are cut out by scripts/pack-server.mjs) and then serve, take an upload and answer a search. One install: minutes.
 */
describe('the full package installs from its tarball and serves', () => {
  let daemon: Daemon | undefined;
  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
  });

  it('packs, installs globally, and the installed docsearch serves, ingests and searches', { timeout: 1_500_000 }, async () => {
    const installed = await installGlobally(await pack('pack-server.mjs'), 'docsearch');
    process.stderr.write(`full package: installed in ${installed.seconds.toFixed(0)} s\n`);
    // The README's --allow-scripts covers the scripts docsearch needs; npm names only the two it leaves out.
    expect(unallowedScripts(installed.npmStderr), installed.npmStderr).toEqual(['protobufjs', 'tesseract.js']);
    const env = { ...userEnv(), DOCSEARCH_CREDENTIALS: 'file', XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'docsearch-xdg-')) };
    const run = async (args: string[], input?: string) => {
      const child = execFileAsync(installed.bin, args, { env, encoding: 'utf8', timeout: 300_000 });
      child.child.stdin!.end(input ?? '');
      return (await child).stdout;
    };

    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect((await run(['--version'])).trim()).toBe(version);

    // Its own model cache: the installed package builds the model from the weights it brought, nothing fetched.
    daemon = await startDaemon({ bin: installed.bin, args: ['--model-cache-dir', mkdtempSync(join(tmpdir(), 'docsearch-models-'))], timeoutMs: 300_000 });
    const apiKey = (await run(['users', 'add', 'pkg@example.com', '--data-dir', daemon.dataDir, '--api-key'], 'correct horse battery staple\n')).trim();
    expect(apiKey).toMatch(/^dsk_/);

    const folder = mkdtempSync(join(tmpdir(), 'docsearch-pkg-docs-'));
    writeFileSync(join(folder, 'kiln.txt'), 'Firing a wood kiln takes three days; the potters feed it pine every few minutes to keep the temperature rising.');
    writeFileSync(join(folder, 'tides.txt'), 'Spring tides happen near new and full moon, when the sun and the moon pull along the same line.');
    const client = ['--server', daemon.url, '--token', apiKey];
    const uploaded = JSON.parse(await run([...client, 'upload', join(folder, 'kiln.txt'), join(folder, 'tides.txt'), '--project', 'pkg', '--create-project', '--wait', '--json']));
    expect(JSON.stringify(uploaded)).toContain('ready');

    const found = JSON.parse(await run([...client, 'search', 'how long does a wood-fired kiln burn', '--project', 'pkg', '--json'])) as { documents?: unknown[]; results?: unknown[] };
    expect(JSON.stringify((found.documents ?? found.results)![0])).toContain('kiln.txt');
  });
});
