import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

const FILES = { bash: 'completions/docsearch.bash', zsh: 'completions/_docsearch', fish: 'completions/docsearch.fish' } as const;

describe('docsearch completion', () => {
  it.each(Object.entries(FILES))('%s: the committed script matches `docsearch completion` (regenerate with `npm run completions`)', async (shell, file) => {
    const res = await runCli(['completion', shell], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(readFileSync(join(REPO, file), 'utf8'));
  });

  it('bash: completes commands, subcommands and per-command options', () => {
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `source ${join(REPO, FILES.bash)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _docsearch; echo "\${COMPREPLY[*]}"`], {
        encoding: 'utf8',
      }).trim();
    expect(complete(['docsearch', 'pro'])).toBe('projects');
    expect(complete(['docsearch', 'projects', ''])).toBe('list create show rename delete');
    expect(complete(['docsearch', 'upload', '--w'])).toBe('--wait');
    expect(complete(['docsearch', 'keys', 'revoke', '--y'])).toBe('--yes');
    expect(complete(['docsearch', '--ser'])).toBe('--server');
  });

  it('an unknown shell is a usage error', async () => {
    const res = await runCli(['completion', 'powershell'], { env: cliEnv(null) });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n");
  });
});
