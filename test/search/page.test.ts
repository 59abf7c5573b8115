/** Cutting pages by what was shown before (page.ts), not by an offset. */
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/search/cursor.js';
import { cutPage } from '../../src/search/page.js';

const ids = (s: string) => s.split('');

describe('cutPage', () => {
  it('pages through a list to its end, each result once', () => {
    const list = ids('abcdefg');
    const one = cutPage(list, [], 3);
    expect(one).toMatchObject({ at: [0, 1, 2], start: 0, previous: null });
    const two = cutPage(list, one.next!, 3);
    expect(two).toMatchObject({ at: [3, 4, 5], start: 3, previous: [] });
    const three = cutPage(list, two.next!, 3);
    expect(three).toMatchObject({ at: [6], start: 6, next: null, previous: one.next });
    // The previous page of the third is the second again.
    expect(cutPage(list, three.previous!, 3).at).toEqual([3, 4, 5]);
  });

  it('neither repeats nor skips when the list changed between pages', () => {
    const first = cutPage(ids('abcdef'), [], 3); // shows a b c
    // d moved up above c, c moved down, b was deleted, x is new at the end.
    const next = cutPage(ids('adcefx'), first.next!, 3);
    expect(next.at.map((i) => 'adcefx'[i])).toEqual(['d', 'e', 'f']);
    expect(cutPage(ids('adcefx'), next.next!, 3).at.map((i) => 'adcefx'[i])).toEqual(['x']);
  });

  it('has no next page when the page holds the rest, and an empty page past the end', () => {
    expect(cutPage(ids('ab'), [], 2).next).toBeNull();
    const past = cutPage(ids('ab'), ['a', 'b'].map(fingerprint), 2);
    expect(past).toMatchObject({ at: [], start: 2, next: null, previous: [] });
  });
});
