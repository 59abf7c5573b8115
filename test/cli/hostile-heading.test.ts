/**
 * A document may call a run of 200,000 letters a heading (one word, to the heading rules): the CLI's search output
 * measured it in terminal columns (string-width: 17 s for Devanagari at that length) and cut it with a segmenter
 * that ran out of heap. Every surface shows a heading cut to MAX_SHOWN_HEADING characters, between graphemes, with
 * "…". Through the built CLI and the web search page against a real daemon.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SHOWN_HEADING } from '../../src/core/passage-heading.js';
import { runCli } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from '../web/library-client.js';
import { type CliSuite, cliSuite } from './cli-env.js';

/** 210,000 UTF-16 units of Devanagari conjuncts (क्ष: three code points, one grapheme) without a space. */
const RUN = 'क्ष'.repeat(70_000);

describe('a heading of 200,000 letters', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { setupTimeoutMs: 300_000 });

  it('is shown cut, between graphemes, by the CLI and the web page', { timeout: 300_000 }, async () => {
    const body = `# ${RUN}\n\nThe curlew nests on the open moor in early spring, and its call carries for miles.\n`;
    const res = await uploadFiles(s.d, s.user.apiKey, [{ name: 'moor.md', bytes: Buffer.from(body) }], { query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const r = await runCli(['search', 'where does the curlew nest', '--mode', 'keyword', '--limit', '1'], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('The curlew nests on the open moor');
    // The heading wraps over lines of the terminal's width: read as one.
    const shown = /((?:क्ष)+)…/u.exec(r.stdout.replace(/\n\s+/g, ''))?.[1] ?? '';
    expect(shown.length).toBeGreaterThan(100);
    expect(shown.length).toBeLessThan(MAX_SHOWN_HEADING);
    const web = await loggedIn(s.d, s.user);
    const page = await web.get(`/search?q=${encodeURIComponent('where does the curlew nest')}&mode=keyword`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(RUN.slice(0, MAX_SHOWN_HEADING + 3));
    expect(page.text).toMatch(/(क्ष)+…/u);
  });
});
