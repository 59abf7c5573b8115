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
    const searched = async (...flags: string[]) => {
      const res = await runCli(['search', 'lock gates at high tide', ...flags, '--json', 'document'], { env: s.env });
      expect(res.code, `${flags.join(' ')}: ${res.stderr}`).toBe(0);
      return (JSON.parse(res.stdout) as { results: { document: { filename: string } }[] }).results.map((r) => r.document.filename);
    };
    // `today` is the clock's UTC day, and a run may cross midnight after the upload: the upload is then yesterday's.
    // The answers are read again, wholly on the later day, if the day turned while they were read.
    const uploadDay = String((await api(s.d, '/api/v1/documents', { token: s.user.apiKey })).body.documents[0].created_at).slice(0, 10);
    const utcDay = () => new Date().toISOString().slice(0, 10);
    const lists = [['--since', '1h'], ['--since', 'today'], ['--since', '2W'], ['--until', 'today'], ['--before', '0h', '--since', '1d'], ['--before', '1h'], ['--until', 'yesterday'], ['--before', 'today']];
    const read = async () => {
      const day = utcDay();
      const answers: Record<string, string[]> = {};
      for (const flags of lists) answers[`list ${flags.join(' ')}`] = await listed(...flags);
      for (const flags of [['--since', '7d'], ['--until', 'yesterday']]) answers[`search ${flags.join(' ')}`] = await searched(...flags);
      return { day, answers, turned: utcDay() !== day };
    };
    let seen = await read();
    if (seen.turned) seen = await read();
    const doc = ['harbour.txt'];
    const sameDay = seen.day === uploadDay;
    expect(seen.answers).toEqual({
      'list --since 1h': doc,
      'list --since today': sameDay ? doc : [],
      'list --since 2W': doc,
      'list --until today': doc,
      'list --before 0h --since 1d': doc,
      'list --before 1h': [],
      'list --until yesterday': sameDay ? [] : doc,
      'list --before today': sameDay ? [] : doc,
      'search --since 7d': doc,
      'search --until yesterday': sameDay ? [] : doc,
    });
  });

  it('search --save refuses a relative moment and saves nothing', { timeout: 60_000 }, async () => {
    const res = await runCli(['search', 'harbour', '--since', '7d', '--save', 'this week'], { env: s.env });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(/^error: --since "7d": a saved search keeps its moments as written, so it would not move with the days\nhint: give a date \(--since \d{4}-\d{2}-\d{2}\), or add the flag when running it: docsearch search --saved NAME --since 7d\n$/);
    expect((await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey })).body.saved_searches).toEqual([]);
  });
});
