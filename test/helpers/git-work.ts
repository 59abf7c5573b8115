import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A bare repository under Apache's git root (`<gitDir>/private/<name>.git`, served behind basic authentication) and a
 * work tree at `work` that pushes to it: how the Git source tests write their history. `git` runs in the work tree;
 * `commit` commits everything and pushes it.
 */
export function gitWorkTree(gitDir: string, name: string, work: string): { git: (...args: string[]) => string; commit: (message: string) => void } {
  const bare = join(gitDir, 'private', `${name}.git`);
  mkdirSync(join(gitDir, 'private'), { recursive: true });
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, encoding: 'utf8', env });
  git('init', '--quiet', '--initial-branch=main');
  git('remote', 'add', 'origin', bare);
  return {
    git,
    commit(message) {
      git('add', '-A');
      git('commit', '--quiet', '--allow-empty', '-m', message);
      git('push', '--quiet', 'origin', 'HEAD:main');
    },
  };
}
