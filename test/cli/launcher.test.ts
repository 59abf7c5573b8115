/**
 * bin/docsearch's first lines are for sh: they start Node with MALLOC_ARENA_MAX=2 unless the environment sets it
 * (the shebang used to set it unconditionally, overriding an operator's value). Checked on the daemon it starts:
 * its environment as the kernel recorded it at exec.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { removeDir, startDaemon } from '../helpers/daemon.js';

const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );

/** A daemon that loads no model (an unreachable Ollama): only the launcher is under test. */
async function arenaMaxOfDaemon(env: Record<string, string | undefined>): Promise<{ value: string | undefined; execPath: string }> {
  const d = await startDaemon({ env, args: ['--embedder', 'ollama:none', '--ollama-host', 'http://127.0.0.1:9', '--ocr', 'off'] });
  try {
    const pid = d.proc.pid!;
    return { value: environOf(pid).MALLOC_ARENA_MAX, execPath: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]! };
  } finally {
    await d.stop();
    removeDir(d.dataDir);
  }
}

describe.runIf(process.platform === 'linux')('bin/docsearch launcher', () => {
  it('starts Node with MALLOC_ARENA_MAX=2 when the environment does not set it', async () => {
    const { value, execPath } = await arenaMaxOfDaemon({ MALLOC_ARENA_MAX: undefined });
    expect(execPath).toBe('node'); // sh exec'd Node in its own place: the daemon's pid is the one started
    expect(value).toBe('2');
  }, 60_000);

  it("keeps the operator's MALLOC_ARENA_MAX", async () => {
    expect((await arenaMaxOfDaemon({ MALLOC_ARENA_MAX: '8' })).value).toBe('8');
  }, 60_000);
});
