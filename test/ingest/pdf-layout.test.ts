/**
 * The page layout of src/ingest/parsers/pdf-layout.ts on pdf.js-like text runs (points, y grows downwards),
 * shaped after real pages of the corpus.
 */
import { describe, expect, it } from 'vitest';
import { joinLines } from '../../src/ingest/parsers/pdf-blocks.js';
import { layoutRuns, type TextRun } from '../../src/ingest/parsers/pdf-layout.js';

const run = (text: string, x0: number, y: number, size = 10, width = 0.5 * size * text.length): TextRun => ({ text, x0, x1: x0 + width, y, size, rtl: false });

describe('marks in the margin', () => {
  // The IRS booklets' caution icon: a 19 pt "!" and a 5.4 pt "CAUTION" left of a paragraph whose first three
  // lines are indented around it; the "!" sits between the first two baselines, "CAUTION" near the third.
  const page = [
    run('Specific rules apply to deter-', 262, 334.4, 10, 126),
    run('mine if you are a resident ali-', 262, 345.9, 10, 126),
    run('en, nonresident alien, or du-', 262, 357.4, 10, 126),
    run('al-status alien. Most nonresident aliens', 224, 368.9, 10, 164),
    run('and dual-status aliens have different rules.', 224, 380.4, 10, 164),
    run('CAUTION', 225.5, 356.3, 5.4, 27.9),
    run('!', 236.2, 349.2, 19.2, 6.4),
  ];

  it('keeps an icon beside a paragraph out of its sentences', () => {
    const paragraphs = layoutRuns(page);
    const text = paragraphs.map((p) => joinLines(p.lines)).join('\n');
    expect(text).toContain('Specific rules apply to determine if you are a resident alien, nonresident alien, or dual-status alien.');
    // The icon's text is kept, after the page's text.
    expect(text).toMatch(/CAUTION/);
    expect(text).toMatch(/!/);
  });

  it('keeps a footnote mark that touches the end of its line', () => {
    const paragraphs = layoutRuns([run('The rate is set by law.', 72, 100, 10, 100), run('12', 172, 97.5, 6, 6)]);
    expect(paragraphs.map((p) => p.lines.join(' '))).toEqual(['The rate is set by law.12']);
  });
});
