/**
 * A bad filter flag on `search` and `documents list` is a usage error (exit 2) naming the flag and the value typed,
 * through the built binary against a real daemon: checked by the CLI where core has the rule as a plain function
 * (days and times, types, labels), else the server's 400 naming the filter's field (`filters.uploaded_by`,
 * `search.filters.language` when saving, `language` in a list's query) said of the flag. Nothing is saved by a
 * refused `--save`.
 */
import { describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { type CliSuite, cliEnv, cliSuite, unusedUrl } from './cli-env.js';

const LANGUAGE = 'must be a language code (ISO 639-1: en, de, zh …; und: undetermined)';

/** Each flag as typed, and the error it must get (on both commands); the first LOCAL the CLI checks itself. */
const CASES: [string[], string][] = [
  [['--since', 'yesterday-ish'], 'error: --since "yesterday-ish": must be a date (2026-03-31) or an RFC 3339 time (2026-03-31T12:00:00Z), or a time ago (12h, 7d, 2w), today or yesterday (UTC days)\n'],
  [['--before', '2026-02-31'], 'error: --before "2026-02-31": is not a real date\n'],
  [['--type', 'pdf', '--type', 'exe'], 'error: --type: unknown type "exe"\n'],
  [['--label', 'a,b'], 'error: --label "a,b": must not contain a comma (one label per --label)\n'],
  [['--lang', 'english'], `error: --lang "english": ${LANGUAGE}\n`],
  [['--lang', 'en', '--lang', 'english'], `error: --lang "english": ${LANGUAGE}\n`],
  [['--by', 'nobody'], 'error: --by "nobody": must be an e-mail address\n'],
  [['--meta', 'team=ops', '--meta', 'year>=soon'], 'error: --meta "year>=soon": must be a number, or a date (2026-03-31) or RFC 3339 time\n'],
];
const LOCAL = 4;

describe('filter flags: errors name the flag', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  for (const [flags, said] of CASES) {
    it(`search and documents list ${flags.join(' ')}`, { timeout: 120_000 }, async () => {
      for (const args of [['search', 'harbour', ...flags], ['documents', 'list', ...flags]]) {
        const res = await runCli(args, { env: s.env });
        expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
        // The type's hint lists the types; the first line is the error.
        expect(`${res.stderr.split('\n')[0]}\n`, args.join(' ')).toBe(said);
        expect(res.stdout).toBe('');
      }
    });
  }

  it('days, types and labels are refused before anything is sent (no server needed)', { timeout: 120_000 }, async () => {
    const env = cliEnv(null, { DOCSEARCH_URL: await unusedUrl(), DOCSEARCH_TOKEN: s.user.apiKey });
    for (const [flags, said] of CASES.slice(0, LOCAL)) {
      const res = await runCli(['search', 'harbour', ...flags], { env });
      expect(res.code, res.stderr).toBe(2);
      expect(`${res.stderr.split('\n')[0]}\n`).toBe(said);
    }
  });

  it('a refused --save names the flag and saves nothing', { timeout: 120_000 }, async () => {
    const res = await runCli(['search', 'harbour', '--lang', 'english', '--save', 'harbour'], { env: s.env });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toBe(`error: --lang "english": ${LANGUAGE}\n`);
    expect((await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey })).body.saved_searches).toEqual([]);
  });
});
