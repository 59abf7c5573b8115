import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { execFileAsync, type Installed, installedBytes, installGlobally, pack, unallowedScripts, userEnv } from './install.js';

/** The light client's budget (issue #43): what `npm install -g docsearch-cli` may put on a CI runner or a laptop. */
const MAX_INSTALLED_BYTES = 15e6;

/**
 * `npm install -g docsearch-cli` as a user runs it (see install.ts), then the commands a CI job runs against a
 * daemon of the checkout: log in with a key, mirror a folder, search.
 */
describe('the light client (docsearch-cli) installs small and talks to a server', () => {
  let daemon: Daemon;
  let installed: Installed;
  let env: Record<string, string>;
  /** Runs the installed client to its end: exit status and output. */
  const run = (args: string[], input = '') =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(installed.bin, args, { env, timeout: 120_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('close', (status) => resolve({ status, stdout, stderr }));
      child.stdin.end(input);
    });

  beforeAll(async () => {
    installed = await installGlobally(await pack('pack-cli.mjs'), 'docsearch-cli');
    expect(unallowedScripts(installed.npmStderr), 'nothing to run at install').toEqual([]);
    daemon = await startDaemon();
    const home = mkdtempSync(join(tmpdir(), 'docsearch-cli-home-'));
    // Logins go to a file in a temp home: never the keychain of the machine running the tests.
    env = { ...userEnv(), HOME: home, XDG_CONFIG_HOME: join(home, 'config'), DOCSEARCH_CREDENTIALS: 'file', DOCSEARCH_TOKEN: '', DOCSEARCH_URL: '', NO_COLOR: '1' };
  }, 600_000);
  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
  });

  it(`installs in at most ${MAX_INSTALLED_BYTES / 1e6} MB, with no native build, and refuses operator commands`, async () => {
    const bytes = installedBytes(installed.prefix);
    process.stderr.write(`docsearch-cli: ${(bytes / 1e6).toFixed(1)} MB installed in ${installed.seconds.toFixed(1)} s\n`);
    expect(bytes).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
    // The keychain binding is the registry's prebuilt one for this platform, and it loads.
    const keyring = join(installed.prefix, 'lib/node_modules/docsearch-cli/node_modules/@napi-rs/keyring');
    await execFileAsync(process.execPath, ['-e', `if (typeof require(${JSON.stringify(keyring)}).AsyncEntry !== 'function') process.exit(1)`], { env });

    const serve = await run(['serve']);
    expect(serve.status).toBe(2);
    expect(serve.stderr).toContain('needs the full docsearch package');
  });

  it('logs in with a key, mirrors a folder with upload --sync, and finds it with search', async () => {
    const user = await addUser(daemon);
    const login = await run(['login', '--with-token', '--server', daemon.url], `${user.apiKey}\n`);
    expect(login.status, login.stderr).toBe(0);

    const folder = mkdtempSync(join(tmpdir(), 'docsearch-cli-docs-'));
    writeFileSync(join(folder, 'kiln.txt'), 'Firing a wood kiln takes three days; the potters feed it pine every few minutes to keep the temperature rising.');
    writeFileSync(join(folder, 'tides.txt'), 'Spring tides happen near new and full moon, when the sun and the moon pull along the same line.');
    const sync = await run(['upload', folder, '--sync', '--project', 'ci-docs', '--create-project', '--wait', '--json']);
    expect(sync.status, sync.stderr).toBe(0);
    expect((JSON.parse(sync.stdout) as { sync: { counts: { new: number } } }).sync.counts.new).toBe(2);

    const search = await run(['search', 'how long does a wood-fired kiln burn', '--project', 'ci-docs', '--json']);
    expect(search.status, search.stderr).toBe(0);
    const found = JSON.parse(search.stdout) as { documents?: unknown[]; results?: unknown[] };
    expect(JSON.stringify((found.documents ?? found.results)![0])).toContain('kiln.txt');
  });
});
