/**
 * Heading trails: furniture (a heading in effect on most pages, or repeated on most pages) and sentences parsed as
 * headings stay out of the trail a chunk stores and embeds; real section headings stay in. Checked on built blocks,
 * on a built PDF through the parser and chunker, and on the IRS booklets of ../shared/eval/docs (skipped when
 * absent) that showed the problem: "INSTRUCTIONS" on every hit of a 206-page booklet, a whole sentence inside a
 * Schedule C trail.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { cleanTrails, sentenceLike } from '../../src/ingest/heading-trail.js';
import { parse } from '../../src/ingest/parsers/pdf.js';
import type { Block, TokenCounter } from '../../src/ingest/types.js';
import { SHARED } from '../helpers/daemon.js';
import { makePdf } from './build-fixtures.js';
import { loadMiniLmTokenizer } from './minilm-tokenizer.js';
import { unmet } from '../helpers/requirement.js';

let tokenizer: TokenCounter;
beforeAll(() => {
  tokenizer = loadMiniLmTokenizer();
});

describe('sentence-like headings', () => {
  it.each([
    ['Part II. Expenses', false],
    ['1.2. Scope of the survey', false],
    ['Line 31 — Net Profit or (Loss)', false],
    ['Who Must File', false],
    ['Chapter 3: Where the Glaciers Went and Why They Never Came Back Again', false],
    ['Profit or Loss a profession you practiced as a sole proprietor. An activity qualifies as a business if', true],
    ['Enter the amount from line 7 on the form below.', true],
    ['The committee reviewed the routine items and agreed them all without any further discussion at length', true],
  ])('%j → %s', (text, expected) => {
    expect(sentenceLike(text)).toBe(expected);
  });
});

describe('cleanTrails', () => {
  const block = (page: number, headings: string[], kind: Block['kind'] = 'paragraph', text = 'Some text.'): Block => ({ page, headings, kind, text });

  it('drops a heading in effect on nearly every page, and one repeated on most pages; keeps the sections', () => {
    const blocks: Block[] = [
      block(1, ['INSTRUCTIONS'], 'heading', 'INSTRUCTIONS'),
      ...[1, 2, 3, 4, 5, 6].map((p) => block(p, ['INSTRUCTIONS', 'Filing Status'])),
      block(7, ['INSTRUCTIONS', 'Credits'], 'heading', 'Credits'),
      ...[7, 8, 9, 10].map((p) => block(p, ['INSTRUCTIONS', 'Credits'])),
    ];
    const out = cleanTrails(blocks, 10);
    expect(out.map((b) => b.headings)).toEqual([[], ...[1, 2, 3, 4, 5, 6].map(() => ['Filing Status']), ...[7, 7, 8, 9, 10].map(() => ['Credits'])]);
    // The heading's own text stays.
    expect(out[0]!.text).toBe('INSTRUCTIONS');

    const repeated = [1, 2, 3, 4, 5, 6].flatMap((p) => [block(p, ['Notes'], 'heading', 'Notes'), block(p, ['Notes']), block(p, ['Notes', `Topic ${p}`])]);
    expect(cleanTrails(repeated, 6).every((b) => !b.headings.includes('Notes'))).toBe(true);
  });

  it('keeps sections, even long ones, and leaves short documents and unpaged ones alone (but for sentences)', () => {
    const blocks = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((p) => block(p, p <= 2 ? ['Part I'] : ['Part II']));
    expect(cleanTrails(blocks, 10)).toBe(blocks);
    const short = [1, 2, 3].map((p) => block(p, ['Memo']));
    expect(cleanTrails(short, 3)).toBe(short);
    const sentence = 'Please read all of these instructions carefully before you fill in any part of the form.';
    const docx = [{ text: 'x', headings: [sentence, 'Scope'], kind: 'paragraph' as const }];
    expect(cleanTrails(docx, undefined)[0]!.headings).toEqual(['Scope']);
  });

  it('through the PDF parser and the chunker: the booklet heading leaves the trail, the section headings stay', async () => {
    const filler = (n: number) => Array.from({ length: 30 }, (_, i) => `Line ${i + 1} on page ${n} explains one more rule of the form in plain words.`);
    const pdf = makePdf(
      Array.from({ length: 6 }, (_, i) => [
        // The section headings sit mid-page: at the top of every page they would read as a running header.
        ...(i === 0 ? [{ size: 24, y: 740, lines: ['INSTRUCTIONS'] }] : []),
        { y: 700, lines: filler(i + 1).slice(0, 10) },
        { size: 16, y: 520, lines: [`${['Filing', 'Income', 'Credits', 'Payments', 'Refund', 'Signature'][i]} Rules`] },
        { y: 490, lines: filler(i + 1).slice(10) },
      ]),
    );
    const doc = await parse(pdf);
    const chunks = chunkDocument(doc, { tokenizer, maxTokens: 256, overlapTokens: 32, title: 'Form 1040 booklet' });
    const trails = new Set(chunks.map((c) => c.headings.join(' > ')));
    expect([...trails].sort()).toEqual(['', 'Credits Rules', 'Filing Rules', 'Income Rules', 'Payments Rules', 'Refund Rules', 'Signature Rules']);
    for (const c of chunks) expect(c.embedText).not.toMatch(/^Form 1040 booklet\nINSTRUCTIONS/);
  });
});

const DOCS = process.env.DOCSEARCH_EVAL_DOCS_DIR ?? join(SHARED, 'eval/docs');
const corpus = unmet(existsSync(join(DOCS, 'manifest.tsv')) ? null : '../shared/eval/docs is absent') === null;

describe.skipIf(!corpus)(`IRS booklets of the eval corpus${corpus ? '' : ' (skipped: ../shared/eval/docs is absent)'}`, () => {
  const trails = async (name: string) => {
    const doc = await parse(readFileSync(join(DOCS, 'pdf', name)));
    return new Set(chunkDocument(doc, { tokenizer, maxTokens: 256, overlapTokens: 32, title: doc.title ?? name }).map((c) => c.headings.join(' > ')));
  };

  it('Schedule C: the parts stay, no sentence and no document-wide heading', async () => {
    const got = await trails('irs-1040-schedule-c-instructions.pdf');
    expect([...got].sort()).toEqual(['', 'Part I. Income', 'Part II. Expenses', 'Part III. Cost of Goods Sold', 'Part IV. Information on Your Vehicle', 'Part V. Other Expenses']);
  });

  it('the 206-page Form 1040 booklet: "INSTRUCTIONS" is on no chunk', { timeout: 300_000 }, async () => {
    const got = await trails('irs-1040-instructions-206p.pdf');
    for (const t of got) expect(t).not.toContain('INSTRUCTIONS');
  });
});
