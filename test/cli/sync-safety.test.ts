import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv, cliSuite } from './cli-env.js';
import { missingFile } from '../helpers/requirement.js';

/** A folder with `n` small distinct text files (a1.txt …). */
function folder(n: number, tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), `docsearch-${tag}-`));
  for (let i = 1; i <= n; i++) writeFileSync(join(dir, `a${i}.txt`), `Note ${i} of ${tag}: the ${tag} folder keeps its own paragraph number ${i}.\n`);
  return dir;
}

describe('upload --sync --prune cannot delete what it should not (issue 21, defect 1)', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s));

  const paths = async (project: string) => {
    const res = await runCli(['documents', 'list', '--project', project, '--json', 'path'], { env });
    expect(res.code, res.stderr).toBe(0);
    return (JSON.parse(res.stdout).documents as Array<{ path: string | null }>).map((x) => x.path).sort();
  };
  const sync = (dir: string, project: string, ...extra: string[]) => runCli(['upload', dir, '--sync', '--prune', '--project', project, '--create-project', '--wait', ...extra], { env, timeoutMs: 240_000 });

  it('a file given to --sync is a usage error and deletes nothing; two folders too', { timeout: 300_000 }, async () => {
    const dir = folder(5, 'file');
    expect((await sync(dir, 'one-file')).code).toBe(0);
    const res = await sync(join(dir, 'a1.txt'), 'one-file');
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`error: --sync mirrors a folder, and ${join(dir, 'a1.txt')} is a file\nhint: upload single files without --sync, or sync the folder that holds them\n`);
    expect(await paths('one-file')).toEqual(['a1.txt', 'a2.txt', 'a3.txt', 'a4.txt', 'a5.txt']);
    const two = await runCli(['upload', dir, dir, '--sync', '--project', 'one-file'], { env });
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('error: --sync mirrors one folder: give exactly one (got 2)');
    const typo = await sync(`${dir}-typo`, 'one-file');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`error: cannot read ${dir}-typo: no such folder`);
    for (const [flags, msg] of [[['--prune'], '--prune only works with --sync'], [['--force'], '--force only works with --sync --prune'], [['--prefix', 'x'], '--prefix only works with --sync']] as const) {
      const r = await runCli(['upload', dir, ...flags, '--project', 'one-file'], { env });
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toContain(`error: ${msg}`);
    }
  });

  it('an empty folder (a missing mount) deletes nothing without --force', { timeout: 300_000 }, async () => {
    const dir = folder(3, 'empty');
    expect((await sync(dir, 'emptied')).code).toBe(0);
    for (const f of ['a1.txt', 'a2.txt', 'a3.txt']) rmSync(join(dir, f));
    const res = await sync(dir, 'emptied');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`error: ${dir} has no files to sync, so --prune would delete all 3 synced documents of project emptied: stopped, nothing was changed\n`);
    expect(res.stderr).toContain('hint: check the folder (is a mount or checkout missing?');
    expect(await paths('emptied')).toEqual(['a1.txt', 'a2.txt', 'a3.txt']);
    const forced = await sync(dir, 'emptied', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(await paths('emptied')).toEqual([]);
  });

  it('more deletions than --max-delete stop (default: half); --dry-run shows the plan and changes nothing', { timeout: 300_000 }, async () => {
    const dir = folder(5, 'mass');
    expect((await sync(dir, 'mass')).code).toBe(0);
    for (const f of ['a2.txt', 'a3.txt', 'a4.txt']) rmSync(join(dir, f));
    writeFileSync(join(dir, 'b1.txt'), 'A new note about the harbour crane.\n');

    const dry = await sync(dir, 'mass', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout.split('\n').filter(Boolean).map((l) => l.split('\t').slice(0, 2).join(' '))).toEqual(['new b1.txt', 'delete a2.txt', 'delete a3.txt', 'delete a4.txt']);
    expect(dry.stderr).toContain('warning: --prune would delete 3 of the 5 synced documents of project mass, more than --max-delete 2: a real run would stop here');
    expect(dry.stderr).toContain('dry run: would upload 1 file to project mass and delete 3 documents; nothing was changed');
    const dryJson = await sync(dir, 'mass', '--dry-run', '--json');
    expect(JSON.parse(dryJson.stdout).sync.counts).toEqual({ new: 1, changed: 0, unchanged: 2, deleted: 3, failed: 0, ignored: 0 });

    const res = await sync(dir, 'mass');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: --prune would delete 3 of the 5 synced documents of project mass, more than --max-delete 2: stopped, nothing was changed');
    expect(await paths('mass')).toEqual(['a1.txt', 'a2.txt', 'a3.txt', 'a4.txt', 'a5.txt']); // b1 not sent either

    const raised = await sync(dir, 'mass', '--max-delete', '3', '--json');
    expect(raised.code, raised.stderr).toBe(0);
    expect(JSON.parse(raised.stdout).sync.counts).toEqual({ new: 1, changed: 0, unchanged: 2, deleted: 3, failed: 0, ignored: 0 });
    expect(await paths('mass')).toEqual(['a1.txt', 'a5.txt', 'b1.txt']);
  });

  // `script` (util-linux) gives the CLI a pseudo-terminal: a person there is asked, and "no" changes nothing.
  it.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('on a terminal the guard asks before a mass delete; no keeps everything', { timeout: 300_000 }, async () => {
    const dir = folder(4, 'tty');
    expect((await sync(dir, 'asked')).code).toBe(0);
    for (const f of ['a1.txt', 'a2.txt', 'a3.txt']) rmSync(join(dir, f));
    const cmd = `${process.execPath} ${BIN} upload ${dir} --sync --prune --project asked`;
    const proc = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, ...env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await expect.poll(() => out, { timeout: 60_000 }).toContain('Delete 3 of the 4 synced documents of project asked?');
    proc.stdin.write('n\r');
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    expect(code).toBe(1);
    expect(out).toContain('error: cancelled');
    expect(await paths('asked')).toEqual(['a1.txt', 'a2.txt', 'a3.txt', 'a4.txt']);
  });

  it('two folders synced into one project with --prefix never prune each other', { timeout: 300_000 }, async () => {
    const a = folder(2, 'left');
    const b = folder(3, 'right');
    expect((await sync(a, 'shared', '--prefix', 'left')).code).toBe(0);
    expect((await sync(b, 'shared', '--prefix', 'right/')).code).toBe(0);
    rmSync(join(b, 'a3.txt'));
    const again = await sync(a, 'shared', '--prefix', 'left', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).sync.counts).toMatchObject({ unchanged: 2, deleted: 0 });
    expect((await sync(b, 'shared', '--prefix', 'right')).code).toBe(0);
    expect(await paths('shared')).toEqual(['left/a1.txt', 'left/a2.txt', 'right/a1.txt', 'right/a2.txt']);
    // Without the prefix, the other folder's documents would all go: the guard stops that.
    const wrong = await sync(b, 'shared');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('two folders in one project need --prefix');
  });

  it('.docsearchignore (gitignore syntax), dotfiles and node_modules/ are left out and counted; ignoring a file prunes it', { timeout: 300_000 }, async () => {
    const dir = folder(2, 'ignore');
    mkdirSync(join(dir, 'drafts'));
    mkdirSync(join(dir, 'node_modules/pkg'), { recursive: true });
    writeFileSync(join(dir, 'drafts/wip.txt'), 'Work in progress about sails.\n');
    writeFileSync(join(dir, 'node_modules/pkg/readme.txt'), 'A dependency readme.\n');
    writeFileSync(join(dir, '.hidden.txt'), 'Hidden notes.\n');
    writeFileSync(join(dir, 'keep.log'), 'A log line about ropes.\n');
    writeFileSync(join(dir, '.docsearchignore'), '# drafts stay private\ndrafts/\n*.log\n');
    const first = await sync(dir, 'ignoring', '--json');
    expect(first.code, first.stderr).toBe(0);
    const s = JSON.parse(first.stdout).sync;
    expect(s.added.sort()).toEqual(['a1.txt', 'a2.txt']);
    expect(s.ignored.sort()).toEqual(['.docsearchignore', '.hidden.txt', 'drafts/', 'keep.log', 'node_modules/']);
    expect(s.counts).toEqual({ new: 2, changed: 0, unchanged: 0, deleted: 0, failed: 0, ignored: 5 });
    writeFileSync(join(dir, '.docsearchignore'), 'drafts/\n*.log\na2.txt\n');
    const second = await sync(dir, 'ignoring');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('sync: 0 new, 0 changed, 1 unchanged, 1 to delete, 6 ignored');
    expect(await paths('ignoring')).toEqual(['a1.txt']);
  });

  it('a broken link is named as one; a file named twice is uploaded and reported once', { timeout: 300_000 }, async () => {
    const dir = folder(1, 'links');
    symlinkSync('missing.txt', join(dir, 'dangling.txt'));
    const res = await runCli(['upload', dir, '--project', 'links', '--create-project'], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${join(dir, 'dangling.txt')}: cannot read the file (a broken symbolic link to missing.txt)`);
    expect(res.stderr).not.toContain('disappeared');
    const twice = await runCli(['upload', join(dir, 'a1.txt'), `${dir}/./a1.txt`, '--project', 'links', '--json'], { env });
    expect(twice.code, twice.stderr).toBe(0);
    expect(JSON.parse(twice.stdout).documents).toHaveLength(1);
  });
});
