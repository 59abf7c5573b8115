/**
 * Answer units that know structure (#58 item 2): heading lines, list items and table rows are units of their own; a
 * line without closing punctuation that a line break follows is a heading, not the start of the next sentence; a
 * heading is never the answer but its words count for the units under it; 。！？ end units; wrapped lines do not.
 */
import { describe, expect, it } from 'vitest';
import { answerUnits, MAX_UNIT_CHARS } from '../../src/ingest/answer-units.js';
import { chooseAnswer } from '../../src/search/answer.js';
import { queryTerms } from '../../src/search/terms.js';

const shown = (text: string) => answerUnits(text).map((u) => [u.kind, text.slice(u.start, u.end)]);

describe('answer units', () => {
  it('keeps a heading line apart from the sentence under it', () => {
    const text = 'Library loans\n\nThe annual report of the marine institute describes the library. Borrowed books must be returned within nineteen days.\n\nCycling allowance\nStaff who cycle get money.';
    expect(shown(text)).toEqual([
      ['heading', 'Library loans'],
      ['sentence', 'The annual report of the marine institute describes the library.'],
      ['sentence', 'Borrowed books must be returned within nineteen days.'],
      ['heading', 'Cycling allowance'],
      ['sentence', 'Staff who cycle get money.'],
    ]);
  });

  it('makes each list item and table row a unit, the lead-in line and the row naming the columns headings', () => {
    expect(shown('Opening hours:\n- Monday to Friday 9 to 5\n- Saturday 10 to 2\n  and on holidays\n- Sunday closed')).toEqual([
      ['heading', 'Opening hours:'],
      ['item', '- Monday to Friday 9 to 5'],
      ['item', '- Saturday 10 to 2\n  and on holidays'],
      ['item', '- Sunday closed'],
    ]);
    expect(shown('Service | Hours | Price\n\nSauna | 9 to 21 | 12 euros\n\nPool | 7 to 22 | 6 euros')).toEqual([
      ['heading', 'Service | Hours | Price'],
      ['row', 'Sauna | 9 to 21 | 12 euros'],
      ['row', 'Pool | 7 to 22 | 6 euros'],
    ]);
    // A sheet's rows name their columns in each cell: the first is a row like the others.
    expect(shown('Line: 4 · To: University\n\nLine: 11 · To: Airport').map(([k]) => k)).toEqual(['row', 'row']);
    // Three or more heading-like lines in a row are a list.
    expect(shown('Apples\n\nPears\n\nPlums\n\nThat is the whole list, as the text says.').map(([k]) => k)).toEqual(['item', 'item', 'item', 'sentence']);
  });

  it('reads wrapped lines as one paragraph, and splits at 。！？', () => {
    expect(shown('The annual report of the marine institute describes\nthe expeditions of the year, which were long.')).toEqual([
      ['sentence', 'The annual report of the marine institute describes\nthe expeditions of the year, which were long.'],
    ]);
    expect(shown('我们明天早上去城市公园散步。你要和我们一起去吗？')).toEqual([
      ['sentence', '我们明天早上去城市公园散步。'],
      ['sentence', '你要和我们一起去吗？'],
    ]);
  });

  it('keeps a day written as an ordinal with its month ("31. März"), and still ends a sentence after a number', () => {
    expect(shown('Die Frist läuft bis zum 31. März des Jahres. Danach wird nichts mehr erstattet.')).toEqual([
      ['sentence', 'Die Frist läuft bis zum 31. März des Jahres.'],
      ['sentence', 'Danach wird nichts mehr erstattet.'],
    ]);
    expect(shown('Der Antrag ist am 1. Mai zu stellen, spätestens am 15. Juni. Später geht es nicht mehr.').map(([k]) => k)).toEqual(['sentence', 'sentence']);
    expect(shown('The crew counted the boats in the harbour: 12. Many more were out at sea that day.')).toEqual([
      ['sentence', 'The crew counted the boats in the harbour: 12.'],
      ['sentence', 'Many more were out at sea that day.'],
    ]);
  });

  it('cuts an overlong unit, also one without spaces', () => {
    const han = '我'.repeat(1000);
    const units = answerUnits(han);
    expect(units.length).toBeGreaterThan(2);
    for (const u of units) expect(u.end - u.start).toBeLessThanOrEqual(MAX_UNIT_CHARS);
    expect(units.map((u) => han.slice(u.start, u.end)).join('')).toBe(han);
  });

  it('never answers with a heading; its words count for the units under it', () => {
    const text = 'Library loans\n\nThe annual report of the marine institute describes the year. Borrowed books must be returned within nineteen days.\n\nExpedition costs\n\nShip loans to other labs are rare.';
    const units = answerUnits(text);
    const pick = (q: string, meaning?: number[]) => {
      const c = chooseAnswer(text, units, queryTerms(q), meaning);
      return text.slice(c!.unit.start, c!.unit.end);
    };
    // By terms: the heading's words favour its section's units over the one that says "loans" elsewhere.
    expect(pick('how long is a library loan')).not.toBe('Library loans');
    expect(pick('how long is a library loan')).toContain('annual report');
    // By meaning, the heading is passed over even when it scores best.
    expect(pick('how long is a library loan', [0.9, 0.2, 0.6, 0.9, 0.1])).toBe('Borrowed books must be returned within nineteen days.');
    // A text of headings alone still shows one.
    expect(chooseAnswer('Library loans', [{ start: 0, end: 13, kind: 'heading' }], [])?.unit).toMatchObject({ kind: 'heading' });
  });
});
