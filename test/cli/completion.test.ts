import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO, runCli } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';

const FILES = { bash: 'completions/docsearch.bash', zsh: 'completions/_docsearch', fish: 'completions/docsearch.fish' } as const;

/** The bash script as installed: `docsearch` on PATH is the built binary. */
function bashComplete(words: string[], env: Record<string, string> = cliEnv(null)): string {
  const bin = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
  symlinkSync(BIN, join(bin, 'docsearch'));
  const script = `source ${join(REPO, FILES.bash)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _docsearch; echo "\${COMPREPLY[*]}"`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}` } }).trim();
}

describe('docsearch completion', () => {
  it.each(Object.entries(FILES))('%s: the committed script matches `docsearch completion` (regenerate with `npm run completions`)', async (shell, file) => {
    const res = await runCli(['completion', shell], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(readFileSync(join(REPO, file), 'utf8'));
  });

  it('bash: completes commands, subcommands, per-command and global options', { timeout: 60_000 }, () => {
    expect(bashComplete(['docsearch', 'pro'])).toBe('projects');
    expect(bashComplete(['docsearch', 'projects', ''])).toBe('list create show rename settings share unshare members transfer delete');
    expect(bashComplete(['docsearch', 'upload', '--w'])).toBe('--wait --watch');
    expect(bashComplete(['docsearch', 'keys', 'revoke', '--y'])).toBe('--yes');
    expect(bashComplete(['docsearch', '--ser'])).toBe('--server');
    // Global flags complete under a subcommand too.
    expect(bashComplete(['docsearch', 'search', '--jq'])).toBe('--jq');
  });

  it('bash: enum values of a flag, not file names (search --mode <TAB>)', { timeout: 60_000 }, () => {
    expect(bashComplete(['docsearch', 'search', '--mode', ''])).toBe('hybrid vector keyword');
    expect(bashComplete(['docsearch', 'search', 'x', '--mode', 'v'])).toBe('vector');
    expect(bashComplete(['docsearch', 'documents', 'list', '--status', ''])).toBe('queued processing ready failed');
    expect(bashComplete(['docsearch', 'completion', ''])).toBe('bash zsh fish');
  });

  it('operator commands complete their own flags (loaded only for them)', async () => {
    const res = await runCli(['__complete', 'serve', '--por'], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^--port\t/);
  });

  it('project names: silent when nothing listens, and gives up by itself on a server that never answers', async () => {
    const refused = await runCli(['__complete', 'search', '--project', ''], { env: cliEnv(null, { DOCSEARCH_URL: 'http://127.0.0.1:9', DOCSEARCH_TOKEN: 'dsk_x' }) });
    expect(refused).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // A server that accepts and never answers: only the lookup's own limit (1.5 s) can end the completion, asking once.
    const held: Socket[] = [];
    const asked: string[] = [];
    const mute = createServer((s) => {
      held.push(s);
      s.once('data', (b: Buffer) => asked.push(b.toString().split('\r\n')[0]!));
    });
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(mute.address() as AddressInfo).port}`;
      const started = performance.now();
      const res = await runCli(['__complete', 'search', '--project', ''], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: `dsk_${'a'.repeat(43)}` }), timeoutMs: 50_000 });
      expect(res).toMatchObject({ code: 0, stdout: '', stderr: '' });
      // By itself: the process start and the lookup's 1.5 s, with room for a busy machine, far from the test's limit.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(asked).toEqual(['GET /api/v1/projects?limit=100 HTTP/1.1']);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => mute.close(r));
    }
  });

  it('an unknown shell is a usage error', async () => {
    const res = await runCli(['completion', 'powershell'], { env: cliEnv(null) });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n");
  });
});
