/**
 * A hostile Git repository served by `git daemon` (git://), against a daemon: a 200 MB file (zeros: a few hundred
 * kilobytes in the pack), a symlink to /etc/passwd, a folder named `..` holding `x`, a submodule, and a folder of
 * 100,000 files. The pass ends within bounds: the large file is that item's error (--max-upload-mb) and is never
 * held in the daemon's memory (its RSS stays within 300 MiB of where it was); the symlink and the submodule are not
 * files; nothing outside the repository is read; a search keeps answering.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { rssSampler } from '../helpers/rss-sampler.js';
import { SourceClient } from '../helpers/sources.js';
import { type SpawnedServer, spawnServer } from '../helpers/spawned-server.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MANY = 100_000;

/** The hostile repository, written with git's plumbing (no work tree could hold `..`). */
function hostileRepo(bare: string): void {
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  const git = (args: string[], input?: string | Buffer) => execFileSync('git', args, { cwd: bare, input, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
  const note = git(['hash-object', '-w', '--stdin'], 'A note about gitwords.\n');
  const big = execFileSync('sh', ['-c', 'head -c 200M /dev/zero | git hash-object -w --stdin'], { cwd: bare, encoding: 'utf8' }).trim();
  const link = git(['hash-object', '-w', '--stdin'], '/etc/passwd');
  const dotdot = git(['mktree'], `100644 blob ${git(['hash-object', '-w', '--stdin'], 'An x note about dotwords.\n')}\tx\n`);
  const many = git(['mktree'], Array.from({ length: MANY }, (_, i) => `100644 blob ${note}\tf${i}.txt\n`).join(''));
  const root = git(['mktree', '--missing'], [
    `100644 blob ${note}\tnote.txt`,
    `100644 blob ${big}\tbig.bin`,
    `120000 blob ${link}\tpasswd`,
    `160000 commit ${'1'.repeat(40)}\tsub`,
    `040000 tree ${dotdot}\t..`,
    `040000 tree ${many}\tmany`,
  ].join('\n') + '\n');
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
  const commit = execFileSync('git', ['commit-tree', root, '-m', 'hostile'], { cwd: bare, env, encoding: 'utf8' }).trim();
  git(['update-ref', 'refs/heads/main', commit]);
}

describe('a hostile Git repository', () => {
  const dirs = tempDirs('docsearch-git-hostile');
  let server: SpawnedServer;
  let port: number;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    const base = dirs.make('served');
    mkdirSync(join(base, 'repos'));
    hostileRepo(join(base, 'repos', 'hostile.git'));
    port = await freePort();
    const repos = join(base, 'repos');
    server = await spawnServer('git daemon', 'git', ['daemon', '--reuseaddr', '--export-all', `--base-path=${repos}`, '--listen=127.0.0.1', `--port=${port}`, repos], { dir: join(base, 'none'), ports: [port], log: join(base, 'none') });
    d = await startDaemon({ args: ['--sources-allow-private', '--source-timeout', '20'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await server?.stop();
    dirs.removeAll();
  });

  it('the pass ends within bounds, reading only the repository', async () => {
    const project = await client.project('hostile git');
    const memory = rssSampler(d.proc.pid!);
    const started = performance.now();
    // The 100,000 files are listed (ls-tree) and left out by the glob: their listing is what is under test here.
    const source = await client.add(project, { url: `git://127.0.0.1:${port}/hostile.git`, options: { exclude: ['many/**'] } });
    const pass = await client.passAfter(project, source.id, 0, 5 * 60_000);
    const seconds = (performance.now() - started) / 1000;
    const { before, peak } = memory.stop();
    console.log(`hostile Git repository: pass ${seconds.toFixed(1)} s, daemon RSS ${before} → ${peak} MiB`);
    expect(pass.error, JSON.stringify(pass)).toBeUndefined();
    expect(pass.last_result).toMatchObject({ failed: 1 });
    expect(pass.item_errors?.items).toMatchObject([{ path: 'big.bin', error: 'larger than 50 MiB (--max-upload-mb)' }]);
    expect(peak - before).toBeLessThan(300);
    const docs = await client.settled(project, source.id, 2);
    // `../x` is a path in the repository like any other (its bytes are its blob's): nothing is read outside it.
    expect([...docs.keys()].sort()).toEqual(['../x', 'note.txt']);
    expect(await client.found(project, 'root')).toEqual([]);
    expect((await client.found(project, 'gitwords')).length).toBeGreaterThan(0);
  }, 6 * 60_000);
});
