/**
 * Runs of text no reader writes, at the analysis and the offsets: a run of letters over 128 without a space is no word
 * (its forms would be over the index's 64 characters; stemming and compound splitting cost it its length squared),
 * while a long German compound keeps its parts; ICU reads a long unspaced run a window at a time with the words it
 * reads whole (V8's segmenter copies its input into every word it yields); grapheme edges hold where the grapheme is
 * short, and fall back to code points where it is not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { graphemeAfter, graphemeBefore } from '../../src/core/code-points.js';
import { excerptRange } from '../../src/core/excerpt.js';
import { analysedWords, analyseText } from '../../src/language/analyse.js';
import { REPO } from '../helpers/daemon.js';

describe('long runs', () => {
  it('gives a run of over 128 letters no forms, and a long German compound its parts', () => {
    expect(analysedWords('a'.repeat(129), 'en')).toEqual([]);
    expect(analysedWords(`${'ب'.repeat(200)} كتاب`, 'ar').map((w) => w.start)).toEqual([201]);
    // Soft hyphens do not count: the word is as long as its letters.
    expect(analysedWords('in\u00adter\u00adna\u00adtio\u00adnal'.repeat(9), 'en')).toHaveLength(1);
    const compound = 'Grundstücksverkehrsgenehmigungszuständigkeitsübertragungsverordnungsänderung';
    expect(compound.length).toBeGreaterThan(64);
    expect(analyseText(compound, 'de').split(' ')).toEqual(expect.arrayContaining(['verkehr~', 'verordn~']));
  });

  it('segments a long run of Japanese as ICU does the whole run, but for a word in a thousand', () => {
    const dir = join(REPO, 'test/fixtures/languages/distractors/ja');
    const whole = new Intl.Segmenter('ja', { granularity: 'word' });
    let words = 0;
    let missed = 0;
    for (const f of readdirSync(dir)) {
      // Each page as one run: its punctuation and spaces taken out.
      const run = readFileSync(join(dir, f), 'utf8').replace(/[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]/gu, '');
      const ours = new Set(analysedWords(run, 'ja').map((w) => `${w.start}:${w.end}`));
      for (const w of whole.segment(run)) {
        // A lone kana is dropped (a particle), a Han character stays.
        if (!w.isWordLike || (w.segment.length === 1 && !/\p{Script=Han}/u.test(w.segment))) continue;
        words++;
        if (!ours.has(`${w.index}:${w.index + w.segment.length}`)) missed++;
      }
    }
    expect(words).toBeGreaterThan(3000);
    expect(missed / words).toBeLessThan(0.001);
  });

  it('finds grapheme edges near an offset, and code points inside a grapheme too long to read', () => {
    const family = '👨‍👩‍👧‍👦';
    const text = `ab${family}cd`;
    expect([graphemeBefore(text, 5), graphemeAfter(text, 5)]).toEqual([2, 2 + family.length]);
    expect([graphemeBefore(text, 2), graphemeAfter(text, 2)]).toEqual([2, 2]);
    // Flags pair their regional indicators from the run's start, however far back.
    const flags = '🇫🇷'.repeat(100);
    expect([graphemeBefore(flags, 204), graphemeAfter(flags, 204)]).toEqual([204, 204]);
    expect([graphemeBefore(flags, 206), graphemeAfter(flags, 206)]).toEqual([204, 208]);
    // A letter under 1,000 marks: cut between marks, not read whole.
    const marks = `e${'\u0301'.repeat(1000)}`;
    expect([graphemeBefore(marks, 500), graphemeAfter(marks, 500)]).toEqual([500, 500]);
    const [, end] = excerptRange(`${'x'.repeat(318)}${'क्षत्रिय'.repeat(10)}`, undefined);
    expect(end).toBe(318);
  });
});
