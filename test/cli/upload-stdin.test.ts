/**
 * `docsearch upload -`, as many tools read stdin: upload takes files and folders only. Before, it said `cannot read
 * -: no such file or folder`, which reads as a bug; now a usage error says what it takes and how to send piped input
 * or a list of paths. A file that is really named `-` is still a file (skipped here for its type, like any file
 * without an extension docsearch reads).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliEnv, unusedUrl } from './cli-env.js';

describe('upload -', () => {
  it('is a usage error saying upload does not read stdin, with what to do instead; a file named - is a file', async () => {
    const env = cliEnv(null, { DOCSEARCH_URL: await unusedUrl(), DOCSEARCH_TOKEN: 'dsk_' + 'a'.repeat(43) });
    const cwd = mkdtempSync(join(tmpdir(), 'docsearch-stdin-'));
    const res = await runCli(['upload', '-'], { env, cwd, input: 'hello from a pipe\n' });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe("error: upload does not read stdin (`-`): it takes files and folders\nhint: save the input to a file and upload that; for a list of paths, `xargs -d '\\n' docsearch upload < list.txt`\n");
    writeFileSync(join(cwd, '-'), 'a file named dash');
    const named = await runCli(['upload', '-'], { env, cwd });
    expect(named.stderr).not.toContain('stdin');
    expect(named.stderr).toContain('skipped -: unsupported file type');
  });
});
