/**
 * What `backup` says of a library secrets key it cannot read (docs/operations.md, "The secrets key goes along"): a
 * damaged `secrets.key` in the data directory, or a DOCSEARCH_SECRETS_KEY_FILE that holds no key. Each stops the run
 * before the backup key or the repository is made, and the hint says what to do — not `backup --help`, which has no
 * such option. The library is made by `users add --init`: no daemon is needed.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('backup refuses a secrets key it cannot read, before anything is made', () => {
  const dirs = tempDirs('docsearch-backup-secrets-key');
  let library: string;
  let repo: string;
  const backup = (env: Record<string, string> = {}) => runCli(['backup', '--data-dir', library, '--to', repo], { env: { DOCSEARCH_SECRETS_KEY: '', DOCSEARCH_SECRETS_KEY_FILE: '', ...env }, timeoutMs: 120_000 });
  const nothingMade = () => {
    expect(existsSync(repo), 'no repository was made').toBe(false);
    expect(existsSync(join(library, 'backup.key')), 'no backup key was made').toBe(false);
  };

  beforeAll(async () => {
    library = join(dirs.make('library'), 'data');
    const made = await runCli(['users', 'add', 'ann@example.com', '--data-dir', library, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
    repo = join(dirs.make('repo'), 'repo');
  }, 120_000);
  afterAll(() => dirs.removeAll());

  it('a DOCSEARCH_SECRETS_KEY_FILE that holds no key: exit 2, the hint names the variable, not --help', async () => {
    const file = join(dirs.make('env'), 'secrets.key');
    writeFileSync(file, 'not a key\n', { mode: 0o600 });
    const res = await backup({ DOCSEARCH_SECRETS_KEY_FILE: file });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(`error: option "secrets-key-file" (from DOCSEARCH_SECRETS_KEY_FILE): ${file} does not hold a secrets key`);
    expect(res.stderr).toContain("hint: backup reads the library's secrets key where its daemon does: set the variable as the daemon has it, or unset it");
    expect(res.stderr).not.toContain('--help');
    nothingMade();
  });

  it("a damaged secrets.key in the data directory: exit 1, saying to put back the daemon's key", async () => {
    writeFileSync(join(library, 'secrets.key'), 'damaged\n', { mode: 0o600 });
    const res = await backup();
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: ${library}/secrets.key does not hold a secrets key`);
    expect(res.stderr).toContain('hint: its daemon would refuse it too: put back the secrets.key the library was running with');
    expect(res.stderr).not.toContain('--debug');
    nothingMade();
  });
});
