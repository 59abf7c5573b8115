/**
 * The OCR stage's merge of recognised pages into a parsed document, with an engine that answers from a table
 * (the real engine is exercised in ocr-engine.test.ts and through the daemon in pipeline/ocr.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { OcrRun } from '../../../src/ingest/ocr/engine.js';
import { applyOcr, pageList, paragraphs } from '../../../src/ingest/ocr-stage.js';
import { DOCX, PDF, type Block, type ParsedDocument } from '../../../src/ingest/types.js';

const block = (text: string, page: number): Block => ({ text, page, headings: [], kind: 'paragraph' });

function engine(answer: Omit<OcrRun, 'engine'>) {
  const run: OcrRun = { ...answer, engine: 'tesseract.js' };
  const asked: number[][] = [];
  return {
    asked,
    languages: 'eng',
    languagesFor: async () => ({ missing: [] }),
    async recognize(_bytes: Uint8Array, pages: number[], opts: { onPage?: (done: number, total: number) => Promise<void> | void } = {}) {
      asked.push(pages);
      for (let i = 1; i <= pages.length; i++) await opts.onPage?.(i, pages.length);
      return run;
    },
  };
}

const page = (n: number, text: string, confidence = 90) => ({ page: n, text, confidence, renderMs: 1, recognizeMs: 1 });

describe('OCR stage', () => {
  it('puts OCR text on its pages in page order, replaces unusable text layers, and reports per page', async () => {
    const parsed: ParsedDocument = {
      pages: 5,
      blocks: [block('Typed page one.', 1), block('\uFFFD\uFFFD garbage layer', 3), block('Typed page four.', 4)],
      ocrPages: [2, 3, 5],
      warnings: ['3 of 5 pages have no usable text layer (scanned?): pages 2–3, 5'],
    };
    const e = engine({
      pages: [page(2, 'Scanned page two, first para-\ngraph.\n\nSecond paragraph.\n', 92), page(3, 'Scanned page three.', 88), page(5, ' \n ')],
      failed: [],
    });
    const shares: number[] = [];
    const out = await applyOcr(e, parsed, new Uint8Array(), PDF, async (s) => void shares.push(s));

    expect(e.asked).toEqual([[2, 3, 5]]);
    expect(shares).toEqual([1 / 3, 2 / 3, 1]);
    expect(out.blocks.map((b) => [b.page, b.text, b.ocr ?? false])).toEqual([
      [1, 'Typed page one.', false],
      [2, 'Scanned page two, first paragraph.', true],
      [2, 'Second paragraph.', true],
      [3, 'Scanned page three.', true],
      [4, 'Typed page four.', false],
    ]);
    expect(out.warnings).toEqual(['OCR: pages 2–3 (eng), mean confidence 90 %', 'OCR found no text on page 5']);
    expect(parsed.blocks).toHaveLength(3); // the input is not changed
  });

  it('keeps the text layer and the no-text-layer warning when OCR reads nothing, and names failed pages', async () => {
    const parsed: ParsedDocument = { pages: 2, blocks: [], ocrPages: [1, 2], warnings: ['no text layer (scanned?)'] };
    const out = await applyOcr(engine({ pages: [], failed: [{ page: 1, reason: 'took longer than 50 s' }, { page: 2, reason: 'out of memory' }] }), parsed, new Uint8Array(), PDF, async () => {});
    expect(out.blocks).toEqual([]);
    expect(out.warnings).toEqual(['no text layer (scanned?)', 'OCR failed on page 1: took longer than 50 s', 'OCR failed on page 2: out of memory']);
  });

  it('does nothing when OCR is off, for other types, or without pages to OCR', async () => {
    const parsed: ParsedDocument = { pages: 1, blocks: [], ocrPages: [1], warnings: ['no text layer (scanned?)'] };
    const e = engine({ pages: [page(1, 'x')], failed: [] });
    expect(await applyOcr(undefined, parsed, new Uint8Array(), PDF, async () => {})).toBe(parsed);
    expect(await applyOcr(e, parsed, new Uint8Array(), DOCX, async () => {})).toBe(parsed);
    expect(await applyOcr(e, { ...parsed, ocrPages: [] }, new Uint8Array(), PDF, async () => {})).toEqual({ ...parsed, ocrPages: [] });
    expect(e.asked).toEqual([]);
  });

  it('joins lines into paragraphs and rejoins words hyphenated at a line end', () => {
    expect(paragraphs('The millen-\nnium bug\nwas real.\n\n\nWell-\nKnown fact.\n')).toEqual(['The millennium bug was real.', 'Well-Known fact.']);
    expect(pageList([3, 1, 2, 7, 9, 8])).toBe('pages 1–3, 7–9');
    expect(pageList([4])).toBe('page 4');
  });
});
