/**
 * A query typed without quotes (`docsearch search how long is a loan`) is a usage error that shows the quoted form
 * to type, not commander's bare "too many arguments" (which other commands' names typed so get with a hint); under --json, a word after it that is no field of the results
 * was a query word, and the hint says so and names the fields. Nothing is sent (no server needed).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliEnv, unusedUrl } from './cli-env.js';

describe('search: a query of several unquoted words', () => {
  it('says how to quote it', { timeout: 60_000 }, async () => {
    const env = cliEnv(null, { DOCSEARCH_URL: await unusedUrl(), DOCSEARCH_TOKEN: 'dsk_unused' });
    const words = await runCli(['search', 'how', 'long', 'is', 'a', 'loan'], { env });
    expect(words.code).toBe(2);
    expect(words.stderr).toBe('error: search takes one query, and got 5 words: "how" "long" "is" "a" "loan"\nhint: quote a query of several words: docsearch search "how long is a loan"\n');
    const json = await runCli(['search', 'boiler', '--json', 'filename'], { env });
    expect(json.code).toBe(2);
    expect(json.stderr).toBe(
      'error: search takes one query, and got 2 words: "boiler" "filename"\n' +
        'hint: quote a query of several words: docsearch search "boiler filename"; after --json, only the results\' fields are fields ' +
        '(chunk_id, score, scores, text, snippet, highlights, page_start, page_end, heading, ocr, citation, document, project), other words are the query\'s\n',
    );
    // Any other command's name of several words, through commander's own message.
    const name = await runCli(['projects', 'create', 'Q3', 'reports'], { env });
    expect(name.code).toBe(2);
    expect(name.stderr).toBe('error: too many arguments for \'create\'. Expected 1 argument but got 2.\nhint: a name or query of several words goes in quotes ("Q3 reports")\n');
    expect(words.stdout + json.stdout + name.stdout).toBe('');
  });
});
