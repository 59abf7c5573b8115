import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, removeDir, runCli, startDaemon } from '../helpers/daemon.js';

/** Every file and folder under `root` whose mode lets anyone but its owner in: "path 0644". */
function openToOthers(root: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const st = statSync(path);
    const mode = st.mode & 0o777;
    if (mode !== (st.isDirectory() ? 0o700 : 0o600)) found.push(`${path.slice(root.length) || '/'} 0${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

/**
 * The security probe's finding 3: a data directory first made by `docsearch users add` was 0755 and its database
 * 0644. Every operator command now makes what it creates its user's alone (0700 folders, 0600 files), whatever
 * the shell's umask, and `serve` narrows a data directory others can read. Run with the usual umask of 022.
 */
describe('files the operator commands create are private', () => {
  const work = mkdtempSync(join(tmpdir(), 'docsearch-private-'));
  let umask: number;
  beforeAll(() => {
    umask = process.umask(0o022);
  });
  afterAll(() => {
    process.umask(umask);
    removeDir(work);
  });

  it('users add and clients add make a new data directory 0700 and its files 0600', async () => {
    for (const [i, args] of [
      ['users', 'add', 'first@example.com', '--api-key', '--init'],
      ['clients', 'add', '--name', 'App', '--redirect-uri', 'https://app.example.com/cb', '--init'],
    ].entries()) {
      const dataDir = join(work, `fresh-${i}`, 'library');
      const res = await runCli([...args, '--data-dir', dataDir], { input: 'correct horse battery staple\n' });
      expect(res.code, res.stderr).toBe(0);
      expect(openToOthers(join(work, `fresh-${i}`))).toEqual([]);
    }
  });

  it('serve narrows a data directory others can read, says so, and what it and backup write stay private', async () => {
    const dataDir = join(work, 'old');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const d = await startDaemon({ dataDir });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(d.stdout()).toMatch(/"event":"data_dir\.tightened".*the data directory was readable by other users \(mode 0755\): it is now 0700/);
      const user = await addUser(d);
      const file = join(work, 'note.txt');
      writeFileSync(file, 'A private note about the quarterly numbers.\n');
      const up = await runCli(['upload', file, '--wait'], { env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }), timeoutMs: 120_000 });
      expect(up.code, up.stderr).toBe(0);
      const repo = join(work, 'backups');
      const backup = await runCli(['backup', '--data-dir', dataDir, '--to', repo], { timeoutMs: 120_000 });
      expect(backup.code, backup.stderr).toBe(0);
      expect(openToOthers(dataDir)).toEqual([]);
      expect(openToOthers(repo)).toEqual([]);
    } finally {
      await d.stop();
    }
  }, 180_000);
});
