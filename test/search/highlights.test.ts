import { describe, expect, it } from 'vitest';
import { answerUnits, MAX_UNIT_CHARS } from '../../src/ingest/answer-units.js';
import { chooseAnswer, NEAR_TIE, scoresFromWindows } from '../../src/search/answer.js';
import { highlights, mergeRanges, termRanges } from '../../src/search/highlights.js';
import { sentenceWindows } from '../../src/ingest/sentence-windows.js';
import { keywordQuery, queryTerms } from '../../src/search/terms.js';

const mark = (text: string, ranges: [number, number][]) => ranges.map(([s, e]) => text.slice(s, e));

describe('query terms', () => {
  it('drops stop words, duplicates and punctuation, and lowercases', () => {
    expect(queryTerms('What is the role of T-cells in the Immune response? Cells!').map((t) => t.text)).toEqual([
      'role',
      't',
      'cells',
      'immune',
      'response',
    ].filter((t) => t !== 't'));
  });

  it('never passes query syntax through to keyword search', () => {
    expect(keywordQuery('title:"drop table" OR (a AND b)* ~2 ^3 \\ --')).toBe('title drop table 2 3');
    expect(keywordQuery('the of and')).toBe('');
    expect(keywordQuery('🧬🔬')).toBe('');
  });

  it('keeps CJK runs and numbers', () => {
    expect(queryTerms('蛋白质 折叠 42').map((t) => t.text)).toEqual(['蛋白质', '折叠', '42']);
  });
});

describe('sentence windows', () => {
  it('joins fragments shorter than five words to the next sentence', () => {
    const text = 'Results. The drug reduced mortality by half in adults. It was safe. No adverse events were reported in children.';
    expect(mark(text, sentenceWindows(text).map((w) => [w.start, w.end]))).toEqual([
      'Results. The drug reduced mortality by half in adults.',
      'It was safe. No adverse events were reported in children.',
    ]);
  });

  it('returns nothing for empty text', () => {
    expect(sentenceWindows('')).toEqual([]);
  });
});

describe('highlights', () => {
  const text = 'Aspirin lowers fever within an hour. Statins reduce cholesterol in most adults. Regular exercise helps the heart too.';
  const windows = sentenceWindows(text);

  it('marks query terms, matching simple inflections', () => {
    expect(mark(text, termRanges(text, queryTerms('statin reducing cholesterol')))).toEqual(['Statins', 'reduce', 'cholesterol']);
  });

  it('marks a term of an unspaced script inside a longer run, and a Latin term only as a whole word', () => {
    const cjk = '私は東京都に住む。東京は大きい。';
    expect(termRanges(cjk, queryTerms('東京'))).toEqual([[2, 4], [9, 11]]);
    expect(mark('statinsX statin', termRanges('statinsX statin', queryTerms('statin')))).toEqual(['statin']);
  });

  it('picks the unit with the most query terms without meaning scores, and by meaning plus terms with them', () => {
    const a = chooseAnswer(text, windows, queryTerms('statin cholesterol'));
    expect(text.slice(a!.unit.start, a!.unit.end)).toBe('Statins reduce cholesterol in most adults.');
    const m = chooseAnswer(text, windows, queryTerms('statin cholesterol'), windows.map((_, i) => (i === 0 ? 0.9 : 0.1)));
    expect(text.slice(m!.unit.start, m!.unit.end)).toBe('Aspirin lowers fever within an hour.');
    // Terms still count: a close second in meaning that holds the query's words wins.
    const both = chooseAnswer(text, windows, queryTerms('statin cholesterol'), windows.map((_, i) => (i === 0 ? 0.5 : 0.45)));
    expect(both!.index).toBe(1);
  });

  it('tells by how much the chosen unit won: its score less the next best unit\'s', () => {
    const scores = windows.map((_, i) => [0.42, 0.3, 0.4][i] ?? 0);
    expect(chooseAnswer(text, windows, [], scores)!.margin).toBeCloseTo(0.02, 10);
    // Terms count in the score: the unit holding the query's words wins by its cosine plus TERM_WEIGHT.
    const won = chooseAnswer(text, windows, queryTerms('statin cholesterol'), scores);
    expect(won!.index).toBe(1);
    expect(won!.margin).toBeCloseTo(0.3 + 0.5 - 0.42, 10);
    expect(chooseAnswer(text, windows.slice(0, 1), [], [0.1])!.margin).toBe(Infinity);
  });

  it('shows a neighbour scored within NEAR_TIE with the chosen unit (a choice the model\'s drift between CPUs could turn), never a heading or a unit further off', () => {
    const span = (c: ReturnType<typeof chooseAnswer>) => text.slice(c!.unit.start, c!.unit.end);
    // The second unit wins by 0.004 over the first: both are the answer, in the text's order.
    expect(span(chooseAnswer(text, windows, [], [0.5, 0.504, 0.1]))).toBe('Aspirin lowers fever within an hour. Statins reduce cholesterol in most adults.');
    // Of two close neighbours the closer one; the index stays the chosen unit's, the margin its lead over the next.
    const both = chooseAnswer(text, windows, [], [0.5, 0.504, 0.502]);
    expect(span(both)).toBe('Statins reduce cholesterol in most adults. Regular exercise helps the heart too.');
    expect(both!.index).toBe(1);
    expect(both!.margin).toBeCloseTo(0.002, 10);
    // Past NEAR_TIE, or close but not next to it: the chosen unit alone.
    expect(span(chooseAnswer(text, windows, [], [0.5, 0.5 + NEAR_TIE + 0.001, 0.1]))).toBe('Statins reduce cholesterol in most adults.');
    expect(span(chooseAnswer(text, windows, [], [0.5, 0.1, 0.504]))).toBe('Regular exercise helps the heart too.');
    // A heading is never part of the answer, however close.
    const headed = windows.map((w, i) => (i === 0 ? { ...w, kind: 'heading' as const } : w));
    expect(span(chooseAnswer(text, headed, [], [0.6, 0.504, 0.1]))).toBe('Statins reduce cholesterol in most adults.');
    // By terms alone (no meaning) there is no drift to allow for: one unit.
    expect(span(chooseAnswer(text, windows, queryTerms('statin cholesterol')))).toBe('Statins reduce cholesterol in most adults.');
  });

  it('takes the builtin reranker\'s window scores for the units inside each window', () => {
    expect(scoresFromWindows(windows, windows.map((w, i) => ({ ...w, score: i })))).toEqual([0, 1, 2]);
    expect(scoresFromWindows(windows, [{ start: 0, end: 5, score: 1 }])).toBeUndefined();
  });

  it('cuts a unit without sentence punctuation (a list) at lines, then words, so no answer is the whole chunk', () => {
    const list = Array.from({ length: 40 }, (_, i) => `item ${i} costs ${i * 3} euros`).join('\n');
    const units = answerUnits(list);
    expect(units.length).toBeGreaterThan(1);
    for (const u of units) expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
    const line = 'word '.repeat(300).trim();
    const pieces = answerUnits(line);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((u) => line.slice(u.start, u.end)).join(' ')).toBe(line);
    // A few words, then a run without spaces: the run is cut too, between characters.
    const run = `${'w '.repeat(200)}${'x'.repeat(1000)}${'😀'.repeat(500)}`;
    const cut = answerUnits(run);
    for (const u of cut) {
      expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
      expect(() => encodeURIComponent(run.slice(u.start, u.end))).not.toThrow();
    }
    expect(cut.map((u) => run.slice(u.start, u.end)).join('').replaceAll(' ', '')).toBe(run.replaceAll(' ', ''));
    const a = chooseAnswer(list, units, queryTerms('item 17'));
    expect(list.slice(a!.unit.start, a!.unit.end)).toContain('item 17 costs 51 euros');
  });

  it('joins an answer unit under five words to the next, in Chinese and Japanese under five characters', () => {
    const units = (text: string) => mark(text, answerUnits(text).map((u) => [u.start, u.end]));
    expect(units('Results. The drug reduced mortality by half in adults. No adverse events were reported in children.')).toEqual([
      'Results. The drug reduced mortality by half in adults.',
      'No adverse events were reported in children.',
    ]);
    expect(units('结果。我们明天早上去城市公园散步。好的。你要和我们一起去吗？')).toEqual(['结果。我们明天早上去城市公园散步。', '好的。你要和我们一起去吗？']);
    expect(units('はい。図書館で本を借りる期間は十四日間です。')).toEqual(['はい。図書館で本を借りる期間は十四日間です。']);
    // Five characters (its full stop one of them) are a unit of their own.
    expect(units('我去散步。你要和我们一起去吗？')).toEqual(['我去散步。', '你要和我们一起去吗？']);
  });

  it('merges the answer and term ranges into sorted, non-overlapping ranges', () => {
    const ranges = highlights(text, windows[1], queryTerms('cholesterol exercise'));
    expect(mark(text, ranges)).toEqual(['Statins reduce cholesterol in most adults.', 'exercise']);
    expect(mergeRanges([[5, 8], [0, 2], [1, 3], [8, 9], [10, 10]])).toEqual([[0, 3], [5, 9]]);
  });

  it('keeps the answer\'s range whole, one of the highlights, where a term touches it or runs across its edge', () => {
    // Unbroken Japanese: the next sentence opens with the query's term, right after the answer's 。
    const ja = '東京は日本の首都で、とても大きな都市です。東京タワーは高い。';
    const answer = { start: 0, end: 21 };
    expect(highlights(ja, answer, queryTerms('東京'))).toEqual([[0, 21], [21, 23]]);
    // A term crossing the answer's end is marked outside it only.
    expect(highlights('abc 私は東京都に住む', { start: 0, end: 7 }, queryTerms('東京都'))).toEqual([[0, 7], [7, 9]]);
  });

  it('marks a term of a spaced script (Cyrillic, Greek, Arabic) as a whole word only, never inside a longer one', () => {
    const ru = 'Телефон зазвонил на стадионе во время матча. Он сказал правду.';
    expect(mark(ru, termRanges(ru, queryTerms('он сказал')))).toEqual(['Он', 'сказал']);
    const el = 'Ο φίλος του είπε την αλήθεια. Του το είπε.';
    expect(mark(el, termRanges(el, queryTerms('το')))).toEqual(['το']);
    // Korean particles join the word: a term is still found inside it, as in Chinese and Japanese.
    expect(mark('도서관에서 책을 빌렸다', termRanges('도서관에서 책을 빌렸다', queryTerms('도서관')))).toEqual(['도서관']);
  });

  it('marks a term inside a word at its own offsets where a letter before it lengthens when lower-cased (İ)', () => {
    const text = 'The guide mentions İstanbul東京 once.';
    expect(mark(text, termRanges(text, queryTerms('東京')))).toEqual(['東京']);
  });

  it('returns no ranges when nothing matches', () => {
    expect(highlights(text, undefined, queryTerms('🧬'))).toEqual([]);
  });
});
