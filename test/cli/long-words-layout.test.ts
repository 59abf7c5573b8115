/**
 * The CLI's layout of one long word (src/cli/output/): a table cell cut, a search field and a passage broken over
 * lines. Work is counted as the characters handed to the grapheme segmenter (V8's takes time proportional to the
 * whole string for each grapheme, so segmenting a whole word of 200,000 letters took minutes): cutting reads only
 * what it keeps. test/cli/long-words.test.ts runs the same through the built CLI against a server.
 */
import { PassThrough } from 'node:stream';
import stringWidth from 'string-width';
import { afterEach, describe, expect, it } from 'vitest';
import { applyHighlights } from '../../src/cli/commands/search.js';
import { fitColumns, loadColumns } from '../../src/cli/output/columns.js';
import { printTable } from '../../src/cli/output/table.js';
import { wrap, wrapFields } from '../../src/cli/output/wrap.js';
import type { IO } from '../../src/terminal/io.js';

await loadColumns();

/** Characters handed to Intl.Segmenter (string-width's and wrap-ansi's segmenters included) while `run` runs. */
function segmented(run: () => void): number {
  const segment = Intl.Segmenter.prototype.segment;
  let n = 0;
  Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, text: string) {
    n += text.length;
    return segment.call(this, text);
  };
  try {
    run();
  } finally {
    Intl.Segmenter.prototype.segment = segment;
  }
  return n;
}

// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('one long word', () => {
  const WORD = '字'.repeat(1_000_000);
  let out = '';
  afterEach(() => (out = ''));
  const io = (): IO => {
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
    stdout.on('data', (b: Buffer) => (out += b.toString()));
    return { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: {} };
  };

  it('a table cell of a million CJK characters is cut to the terminal, reading about what it shows', async () => {
    const work = segmented(() => printTable(io(), { headers: ['ID', 'NAME'], rows: [['doc_1', WORD]], now: 0 }));
    await new Promise((r) => setImmediate(r));
    const lines = out.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/^doc_1 {2}字+…$/);
    // 80 columns are 40 of these characters; a wide margin, and a thousandth of the word.
    expect(work).toBeLessThan(1_000);
  });

  it('cut from its end (a file name kept by its end), it reads about what it keeps', () => {
    let kept = '';
    const work = segmented(() => (kept = fitColumns(WORD, 30, true)));
    expect(kept).toBe('字'.repeat(15));
    expect(work).toBeLessThan(1_000);
  });

  it('a search field of a letter with 100 spacing marks (one grapheme, 101 columns) is broken, not looped on', () => {
    const word = `क${'ा'.repeat(100)}`;
    const lines = wrapFields([{ text: word }, { text: '[project]' }], 24, '  ');
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(24);
    expect(lines.join('').replace(/\s+/g, '')).toBe(`${word}[project]`);
  });

  it('a passage word wider than the line, a match inside it, is broken over lines of the width with the match kept', () => {
    const word = 'नमस्ते'.repeat(60);
    const marked = applyHighlights(`The ${word} moor`, [[4 + 30, 4 + 90]], (s) => `\x1b[1m${s}\x1b[22m`);
    const lines = wrap(marked, 40, '   ');
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(40);
    expect(plain(lines.join('')).replace(/\s+/g, '')).toBe(`The${word}moor`);
    expect(lines.join('\n')).toContain('\x1b[1m');
    // Each line that opens the emphasis closes it: none runs on to the next.
    for (const line of lines) if (line.includes('\x1b[1m')) expect(line.lastIndexOf('\x1b[22m')).toBeGreaterThan(line.lastIndexOf('\x1b[1m'));
  });

  it('a word of 200,000 zero-width characters in a passage is cut, not measured whole by wrap-ansi', () => {
    let lines: string[] = [];
    const work = segmented(() => (lines = wrap(`see a${'\u200b'.repeat(200_000)} here`, 80, '   ')));
    for (const line of lines) expect(line.length).toBeLessThan(2_000);
    expect(plain(lines.join(' '))).toMatch(/^ {3}see a\u200b+… here$/);
    expect(work).toBeLessThan(10_000);
  });
});
