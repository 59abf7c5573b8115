/**
 * The upload-time flags of `search` and `documents list` take what a person types at a terminal besides dates:
 * `12h`, `7d`, `2w` ago, `today`, `yesterday` (UTC days, as a written date is read; `--until yesterday` takes in the
 * whole of it). A document uploaded now is inside `--since 1h` and `--since today`, outside `--before 1h` and
 * `--until yesterday`. `search --save` refuses them: a saved search would keep the moment, not "the last 7 days".
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { type CliSuite, cliSuite } from './cli-env.js';

describe('filter flags: relative moments', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  it('a document uploaded now is inside 1h and today, outside 1h before and up to yesterday', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-moments-'));
    writeFileSync(join(dir, 'harbour.txt'), 'The harbour master opens the lock gates at high tide.\n');
    const up = await runCli(['upload', join(dir, 'harbour.txt'), '--wait'], { env: s.env, timeoutMs: 90_000 });
    expect(up.code, up.stderr).toBe(0);
    const listed = async (...flags: string[]) => {
      const res = await runCli(['documents', 'list', ...flags, '--json', 'filename'], { env: s.env });
      expect(res.code, `${flags.join(' ')}: ${res.stderr}`).toBe(0);
      return (JSON.parse(res.stdout) as { documents: { filename: string }[] }).documents.map((d) => d.filename);
    };
    for (const flags of [['--since', '1h'], ['--since', 'today'], ['--since', '2W'], ['--until', 'today'], ['--before', '0h', '--since', '1d']]) {
      expect(await listed(...flags), flags.join(' ')).toEqual(['harbour.txt']);
    }
    for (const flags of [['--before', '1h'], ['--until', 'yesterday'], ['--before', 'today']]) expect(await listed(...flags), flags.join(' ')).toEqual([]);
    const searched = async (...flags: string[]) => {
      const res = await runCli(['search', 'lock gates at high tide', ...flags, '--json', 'document'], { env: s.env });
      expect(res.code, `${flags.join(' ')}: ${res.stderr}`).toBe(0);
      return (JSON.parse(res.stdout) as { results: { document: { filename: string } }[] }).results.map((r) => r.document.filename);
    };
    expect(await searched('--since', '7d')).toEqual(['harbour.txt']);
    expect(await searched('--until', 'yesterday')).toEqual([]);
  });

  it('search --save refuses a relative moment and saves nothing', { timeout: 60_000 }, async () => {
    const res = await runCli(['search', 'harbour', '--since', '7d', '--save', 'this week'], { env: s.env });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/^error: --since "7d": a saved search keeps its moments as written, so it would not move with the days\nhint: give a date \(--since \d{4}-\d{2}-\d{2}\), or add the flag when running it: docsearch search --saved NAME --since 7d\n$/);
    expect((await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey })).body.saved_searches).toEqual([]);
  });
});
