import { describe, expect, it } from 'vitest';
import { passage } from '../../src/cli/commands/search.js';
import { answerRange, bestPassage, EXCERPT_CHARS, excerpt, excerptRange, type TextRange } from '../../src/core/excerpt.js';
import { snippet } from '../../src/web/snippet.js';

const text = `${'Lead-in words about nothing much. '.repeat(12)}The marmot colonies hibernate under the scree. ${'Trailing filler text here. '.repeat(12)}`;
const answer = 'The marmot colonies hibernate under the scree.';
const sentence: TextRange = [text.indexOf(answer), text.indexOf(answer) + answer.length];
const word = (w: string): TextRange => [text.indexOf(w), text.indexOf(w) + w.length];

describe('the excerpt of a search result', () => {
  it('opens with the answer and fills the rest of max characters with what follows, cut at a word boundary', () => {
    const [s, e] = excerptRange(text, sentence, 160);
    expect(s).toBe(sentence[0]);
    expect(e - s).toBeLessThanOrEqual(160);
    expect(e - s).toBeGreaterThan(130);
    expect(text[e]).toMatch(/\s/);
  });

  it('finds the answer by the snippet, else by the widest highlight (a server without snippets)', () => {
    const highlights: TextRange[] = [word('Lead-in'), sentence, word('Trailing')];
    expect(bestPassage(highlights)).toEqual(sentence);
    expect(answerRange(text, answer, [word('Lead-in')])).toEqual(sentence);
    expect(answerRange(text, undefined, highlights)).toEqual(sentence);
    const { start, end, passage } = excerpt(text, answer, highlights, 160);
    expect(passage).toEqual(sentence);
    expect([start, end]).toEqual(excerptRange(text, sentence, 160));
  });

  it('keeps a short text whole, starts at the beginning without an answer, and never cuts an answer longer than max', () => {
    expect(excerpt('short text', 'short', [[0, 5]])).toEqual({ start: 0, end: 10, passage: [0, 5] });
    const none = excerpt(text, undefined, [], 100);
    expect(none.start).toBe(0);
    expect(none.end).toBeLessThanOrEqual(100);
    expect(text[none.end]).toMatch(/\s/);
    const long: TextRange = [10, text.length - 10];
    expect(excerptRange(text, long, EXCERPT_CHARS)).toEqual(long);
  });

  it('ends between characters where no space is near: never inside an emoji', () => {
    const emoji = `Intro. ${'😀'.repeat(300)}`;
    const { start, end } = excerpt(emoji, 'Intro.', [[0, 6]]);
    expect(start).toBe(0);
    // encodeURIComponent throws on a lone half of a pair.
    expect(() => encodeURIComponent(emoji.slice(start, end))).not.toThrow();
    expect(end).toBe(319);
  });

  it('is the same window in the CLI and on the web page', () => {
    const highlights: TextRange[] = [word('Lead-in'), sentence];
    const { start, end } = excerpt(text, answer, highlights, 160);
    const window = text.slice(start, end);
    const cli = passage({ text, snippet: answer, highlights }, 160).text;
    expect(cli).toBe(`… ${window} …`);
    expect(cli.startsWith(`… ${answer}`)).toBe(true);
    const web = snippet({ text, snippet: answer, highlights }, 'marmots', 160).value.replace(/<[^>]+>/g, '');
    expect(web).toBe(`… ${window} …`);
  });
});
