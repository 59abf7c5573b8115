import { describe, expect, it } from 'vitest';
import { passage } from '../../src/cli/commands/search.js';
import { bestPassage, EXCERPT_CHARS, excerpt, excerptRange, type TextRange } from '../../src/core/excerpt.js';
import { snippet } from '../../src/web/snippet.js';

const text = `${'Lead-in words about nothing much. '.repeat(12)}The marmot colonies hibernate under the scree. ${'Trailing filler text here. '.repeat(12)}`;
const sentence: TextRange = [text.indexOf('The marmot'), text.indexOf('scree.') + 6];
const word = (w: string): TextRange => [text.indexOf(w), text.indexOf(w) + w.length];

describe('the excerpt of a search result', () => {
  it('centres a window of at most max characters on the passage and cuts at word boundaries', () => {
    const [s, e] = excerptRange(text, sentence, 160);
    expect(e - s).toBeLessThanOrEqual(160);
    expect(s).toBeLessThanOrEqual(sentence[0]);
    expect(e).toBeGreaterThanOrEqual(sentence[1]);
    expect(text[s - 1]).toMatch(/\s/);
    expect(text[e]).toMatch(/\s/);
    // Centred: the text left of the passage and right of it differ by no more than the word snapping moved them.
    expect(Math.abs(sentence[0] - s - (e - sentence[1]))).toBeLessThanOrEqual(60);
  });

  it('is centred on the widest highlight (the best sentence), not the first word', () => {
    const highlights: TextRange[] = [word('Lead-in'), sentence, word('Trailing')];
    expect(bestPassage(highlights)).toEqual(sentence);
    const { start, end, passage } = excerpt(text, highlights, 160);
    expect(passage).toEqual(sentence);
    expect([start, end]).toEqual(excerptRange(text, sentence, 160));
  });

  it('keeps a short text whole, starts at the beginning without highlights, and cuts a passage longer than max', () => {
    expect(excerpt('short text', [[0, 5]])).toEqual({ start: 0, end: 10, passage: [0, 5] });
    const none = excerpt(text, [], 100);
    expect(none.start).toBe(0);
    expect(none.end).toBeLessThanOrEqual(100);
    expect(text[none.end]).toMatch(/\s/);
    const long: TextRange = [0, text.length];
    const [s, e] = excerptRange(text, long, EXCERPT_CHARS);
    expect(s).toBe(0);
    expect(e).toBeLessThanOrEqual(EXCERPT_CHARS);
  });

  it('is the same window in the CLI and on the web page', () => {
    const highlights: TextRange[] = [word('Lead-in'), sentence];
    const { start, end } = excerpt(text, highlights, 160);
    const window = text.slice(start, end);
    const cli = passage(text, highlights, 160).text;
    expect(cli).toBe(`… ${window} …`);
    const web = snippet(text, highlights, 'marmots', 160).value.replace(/<[^>]+>/g, '');
    expect(web).toBe(`… ${window} …`);
  });
});
