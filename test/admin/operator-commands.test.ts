/**
 * Operator commands as docs/operations.md describes them, beside a daemon published at a public URL: where the link
 * `users invite` prints points (its own --public-url, else the running daemon's, else DOCSEARCH_PUBLIC_URL), that
 * the last active admin cannot be deleted, and what a backup key is (a file of at least 32 characters, made where
 * --key-file names it when missing), what a backup says it copied, and the library's secrets key carried from where
 * the daemon reads it into the restored data directory.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';

const PUBLIC_URL = 'https://docs.example.com';
const LINK = (base: string) => new RegExp(`^${base.replaceAll('.', '\\.')}/invite\\?token=[\\w-]{43}\\n$`);

describe('operator commands beside a daemon published at a public URL', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-operator-'));
    dirs.push(dir);
    return dir;
  };
  beforeAll(async () => {
    d = await startDaemon({ args: ['--public-url', PUBLIC_URL] });
    alice = await addUser(d); // the first account: the only admin
    bob = await addUser(d);
  });
  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    dirs.forEach(removeDir);
  });
  const op = (args: string[], env: Record<string, string> = {}) => runCli([...args, '--data-dir', d.dataDir], { env: { ...d.env, ...env } });

  it('users delete refuses the last active admin, with or without an heir, and deletes nothing', async () => {
    for (const extra of [[], ['--transfer-to', bob.email]]) {
      const refused = await op(['users', 'delete', alice.email, '--yes', ...extra]);
      expect(refused.code, extra.join(' ')).toBe(1);
      expect(refused.stderr).toBe('error: this is the only active admin: make another account an admin first\n');
    }
    expect((await api(d, '/api/v1/me', { token: alice.apiKey })).body).toMatchObject({ email: alice.email, admin: true });
  });

  it("users invite: its own --public-url first, else the running daemon's, even with DOCSEARCH_PUBLIC_URL set", async () => {
    const flagged = await op(['users', 'invite', 'flag@example.com', '--public-url', 'https://flag.example.com/']);
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(flagged.stdout).toMatch(LINK('https://flag.example.com'));
    const running = await op(['users', 'invite', 'running@example.com'], { DOCSEARCH_PUBLIC_URL: 'https://env.example.com' });
    expect(running.code, running.stderr).toBe(0);
    expect(running.stdout).toMatch(LINK(PUBLIC_URL));
    expect(running.stderr).not.toContain('warning');
  });

  it('a backup key is a file of at least 32 characters; --key-file names one, made when missing', async () => {
    const dir = tempDir();
    const short = join(dir, 'short.key');
    writeFileSync(short, 'x'.repeat(31), { mode: 0o600 });
    const refused = await op(['backup', '--to', join(dir, 'repo-short'), '--key-file', short]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error: the backup key ${short} holds 31 characters; a key has at least 32`);
    expect(existsSync(join(dir, 'repo-short')), 'nothing written').toBe(false);

    const named = join(dir, 'named.key');
    const made = await op(['backup', '--to', join(dir, 'repo'), '--key-file', named, '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain(`made the backup key ${named}`);
    expect(statSync(named).mode & 0o777).toBe(0o600);
    expect(existsSync(join(d.dataDir, 'backup.key')), 'the default key was not made instead').toBe(false);
    const first = JSON.parse(made.stdout).id as string;
    // The first backup of a repository has nothing to be unchanged since; the next names the one it builds on.
    expect(made.stderr).toMatch(new RegExp(`^backup ${first} complete: \\d+ file\\(s\\) copied \\([\\d.]+ MB\\)$`, 'm'));
    const next = await op(['backup', '--to', join(dir, 'repo'), '--key-file', named, '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(new RegExp(`^backup ${JSON.parse(next.stdout).id} complete: \\d+ file\\(s\\) copied \\([\\d.]+ MB\\), \\d+ unchanged since ${first} \\([\\d.]+ MB\\)$`, 'm'));
    const listed = await runCli(['restore', '--from', join(dir, 'repo'), '--list', '--json', '--key-file', named], { env: d.env });
    expect(JSON.parse(listed.stdout).map((b: { id: string; status: string }) => [b.id, b.status])).toEqual([
      [first, 'complete'],
      [JSON.parse(next.stdout).id, 'complete'],
    ]);
  });

  it("backup reads the secrets key where the daemon does (DOCSEARCH_SECRETS_KEY_FILE, DOCSEARCH_SECRETS_KEY), and restore puts it in place as secrets.key", async () => {
    const dir = tempDir();
    const library = join(dir, 'library');
    expect((await runCli(['users', 'add', 'k@example.com', '--data-dir', library, '--init'], { input: 'correct horse battery staple\n' })).code).toBe(0);
    const secrets = randomBytes(32);
    writeFileSync(join(dir, 'secrets.hex'), `${secrets.toString('hex')}\n`, { mode: 0o600 });
    const backup = async (repo: string, env: Record<string, string>) => {
      const res = await runCli(['backup', '--data-dir', library, '--to', join(dir, repo), '--json'], { env });
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout).secrets_key_id as string | null;
    };
    // A library whose daemon is given its key in the environment keeps none in its data directory.
    expect(await backup('bare', { DOCSEARCH_SECRETS_KEY_FILE: '', DOCSEARCH_SECRETS_KEY: '' })).toBeNull();
    const fromFile = await backup('from-file', { DOCSEARCH_SECRETS_KEY_FILE: join(dir, 'secrets.hex'), DOCSEARCH_SECRETS_KEY: '' });
    expect(fromFile).toMatch(/^\S+$/);
    expect(await backup('from-value', { DOCSEARCH_SECRETS_KEY: secrets.toString('hex'), DOCSEARCH_SECRETS_KEY_FILE: '' })).toBe(fromFile);

    const target = join(dir, 'restored');
    const restored = await runCli(['restore', '--from', join(dir, 'from-file'), '--to', target, '--key-file', join(library, 'backup.key'), '--json']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout).secrets_key_id).toBe(fromFile);
    expect(Buffer.from(readFileSync(join(target, 'secrets.key'), 'utf8').trim(), 'base64url').equals(secrets)).toBe(true);
    expect(statSync(join(target, 'secrets.key')).mode & 0o777).toBe(0o600);
  });

  it('users invite once no daemon runs: DOCSEARCH_PUBLIC_URL, with no warning', async () => {
    expect(await d.stop()).toBe(0);
    const res = await op(['users', 'invite', 'later@example.com'], { DOCSEARCH_PUBLIC_URL: 'https://env.example.com' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(LINK('https://env.example.com'));
    expect(res.stderr).not.toContain('warning');
  });
});
