/**
 * What `docsearch migrate` refuses of its target, as docs/migrate.md promises ("Rules it enforces"): a target holding
 * another library, or storage that already holds an index or originals, "is refused and left as is" — read back here
 * file by file (each file's sha256, and no file added), not taken from the refusal's word ("nothing was changed").
 * The libraries are made by the operator's `users add --init`: no daemon is needed to be refused.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { FIXTURES, RELEASES } from '../helpers/release-fixture.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/**
 * Every file under `dir` by path, with its sha256; but the empty `daemon.lock` a command locking a library makes if
 * missing (as a refused `serve` may: docs/operations.md, "Upgrading").
 */
function digestDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || (entry.name === 'daemon.lock' && entry.parentPath === dir)) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

describe('docsearch migrate refuses a target that is not empty, and leaves it as it was', () => {
  const dirs = tempDirs('docsearch-migrate-refusals');
  let source: string;
  let other: string;
  const migrate = (from: string, to: string) => runCli(['migrate', '--from', from, '--to', to], { timeoutMs: 120_000 });
  const library = async (email: string) => {
    const dir = join(dirs.make('library'), 'data');
    const made = await runCli(['users', 'add', email, '--data-dir', dir, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
    return dir;
  };

  beforeAll(async () => {
    source = await library('ann@example.com');
    other = await library('ben@example.com');
  }, 120_000);

  it('a data directory holding another library', async () => {
    const before = digestDir(other);
    expect(Object.keys(before)).toContain('docsearch.db');
    const res = await migrate(source, other);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: the target database ${other} already holds a library (1 account(s), 0 document(s), 0 application(s))`);
    expect(res.stderr).toContain('nothing was changed');
    expect(digestDir(other)).toEqual(before);
    // Its account is still the only one, and still signs in there.
    const users = await runCli(['users', 'list', '--json', '--data-dir', other]);
    expect(JSON.parse(users.stdout).users.map((u: { email: string }) => u.email)).toEqual(['ben@example.com']);
  });

  it('a data directory holding the finished copy of another library', async () => {
    const copy = join(dirs.make('copy'), 'data');
    const first = await migrate(source, copy);
    expect(first.code, first.stderr).toBe(0);
    const before = digestDir(copy);
    const res = await migrate(other, copy);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: the target ${copy} holds a migration of another library (${source}, made `);
    expect(digestDir(copy)).toEqual(before);
    const users = await runCli(['users', 'list', '--json', '--data-dir', copy]);
    expect(JSON.parse(users.stdout).users.map((u: { email: string }) => u.email)).toEqual(['ann@example.com']);
  });

  it.each(RELEASES)("a data directory holding a library of release %s: refused before its schema is brought up to this version's", async (release) => {
    const old = join(dirs.make(`release-${release}`), 'data');
    cpSync(join(FIXTURES, release, 'embedded', 'data'), old, { recursive: true });
    const before = digestDir(old);
    const res = await migrate(source, old);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`error: the target database ${old} already holds a library \\(\\d+ account\\(s\\)`));
    expect(res.stderr).toContain('nothing was changed');
    // Its schema too: the release that made it still opens it (a migrated database is refused by older releases).
    expect(digestDir(old)).toEqual(before);
  });

  it('a data directory whose storage holds originals (its database gone): no database or lock is made in it', async () => {
    const leftover = join(dirs.make('leftover'), 'data');
    const sha = createHash('sha256').update('an original of a library whose database was lost\n').digest('hex');
    mkdirSync(join(leftover, 'files', sha.slice(0, 2)), { recursive: true });
    writeFileSync(join(leftover, 'files', sha.slice(0, 2), sha), 'an original of a library whose database was lost\n');
    const before = digestDir(leftover);
    const res = await migrate(source, leftover);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: the target storage ${leftover} already holds an index or originals (files/${sha.slice(0, 2)}/${sha})`);
    expect(res.stderr).toContain('nothing was changed');
    expect(digestDir(leftover)).toEqual(before);
    expect(readdirSync(leftover), 'no database (nor lock) was made beside the originals').toEqual(['files']);
    // So it is still no library: an operator command is refused there as before, rather than finding an empty one.
    const list = await runCli(['users', 'list', '--data-dir', leftover]);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(`no library at ${leftover}`);
  });
});
