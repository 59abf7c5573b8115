import { beforeAll, describe, expect, it, vi } from 'vitest';
import { chunkDocument } from '../../src/ingest/chunk.js';
import { fromText } from '../../src/ingest/parsers/txt.js';
import { splitSentences } from '../../src/ingest/sentences.js';
import type { Block, ParsedDocument, TokenCounter } from '../../src/ingest/types.js';
import { rng } from '../helpers/rng.js';
import { loadMiniLmTokenizer } from './minilm-tokenizer.js';

let tokenizer: TokenCounter;
beforeAll(() => {
  tokenizer = loadMiniLmTokenizer();
});

const sentence = (i: number): string => `Sentence number ${i} explains one more detail about hybrid search engines.`;
const paragraph = (from: number, n: number): string => Array.from({ length: n }, (_, i) => sentence(from + i)).join(' ');

function doc(blocks: Block[]): ParsedDocument {
  return { blocks, warnings: [] };
}

describe('chunkDocument', () => {
  it('fits every chunk, header and special tokens included, into maxTokens', () => {
    const d = doc([{ text: paragraph(0, 80), headings: ['Guide', 'Search'], kind: 'paragraph', page: 3 }]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 128, overlapTokens: 20, title: 'Manual' });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(tokenizer.count(c.embedText) + 2).toBeLessThanOrEqual(128);
      expect(c.tokenCount).toBe(tokenizer.count(c.embedText));
      expect(c.embedText).toBe(`Manual\nGuide > Search\n\n${c.text}`);
      expect(c.pageStart).toBe(3);
      expect(c.pageEnd).toBe(3);
      expect(c.headings).toEqual(['Guide', 'Search']);
    }
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  });

  it('splits at sentence boundaries and overlaps consecutive chunks', () => {
    const d = doc([{ text: paragraph(0, 40), headings: [], kind: 'paragraph' }]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 100, overlapTokens: 20, title: '' });
    for (const c of chunks) {
      expect(c.text).toMatch(/^Sentence number \d+/);
      expect(c.text).toMatch(/engines\.$/);
    }
    for (let i = 1; i < chunks.length; i++) {
      const lastOfPrevious = chunks[i - 1]!.text.split(/(?<=\.) /).pop()!;
      expect(chunks[i]!.text.startsWith(lastOfPrevious)).toBe(true);
    }
    const all = new Set(chunks.flatMap((c) => c.text.match(/number \d+/g)!));
    expect(all.size).toBe(40);
  });

  it('never puts two sections in one chunk and keeps page spans', () => {
    const d = doc([
      { text: 'Alpha', headings: ['Alpha'], kind: 'heading', page: 1 },
      { text: 'Alpha body on page one.', headings: ['Alpha'], kind: 'paragraph', page: 1 },
      { text: 'Alpha body on page two.', headings: ['Alpha'], kind: 'paragraph', page: 2 },
      { text: 'Beta', headings: ['Beta'], kind: 'heading', page: 2 },
      { text: 'Beta body.', headings: ['Beta'], kind: 'paragraph', page: 2 },
    ]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 256, overlapTokens: 32, title: 'Doc' });
    expect(chunks.map((c) => [c.text, c.headings, c.pageStart, c.pageEnd])).toEqual([
      ['Alpha\n\nAlpha body on page one.\n\nAlpha body on page two.', ['Alpha'], 1, 2],
      ['Beta\n\nBeta body.', ['Beta'], 2, 2],
    ]);
    // The chunk opens with its heading, so the header stops at the parent (here: just the title).
    expect(chunks[0]!.embedText).toBe('Doc\n\nAlpha\n\nAlpha body on page one.\n\nAlpha body on page two.');
  });

  it('starts a new chunk, carrying nothing over, at a line that reads as a heading the parser did not mark', () => {
    const body = (topic: string) => `${topic} is covered by the policy in full, and staff should read this part before they claim anything from the office.`;
    const text = [
      'Annual staff report',
      `${body('Leave')} ${body('Sick leave')}`,
      '3.2 Travel and commuting',
      `${body('Commuting')} Staff who cycle to the office receive 35 euros a month towards their bicycle.`,
      'ANNEX',
      body('The annex'),
      'a short line without a capital',
      body('Parking'),
    ].join('\n\n');
    const d = fromText(text);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 256, overlapTokens: 32, title: 'report.txt' });
    expect(chunks.map((c) => c.text.split('\n\n')[0])).toEqual(['Annual staff report', '3.2 Travel and commuting', 'ANNEX']);
    expect(chunks[1]!.text).toContain('35 euros');
    expect(chunks[2]!.text).toContain('a short line without a capital');
    // Lines that are not headings break nothing: a sentence, a line ending in a colon, one over a short line.
    for (const line of ['The office is open on Monday.', 'The following applies:', 'Totals']) {
      const blocks = fromText(`Intro ${body('x')}\n\n${line}\n\n${line === 'Totals' ? '42' : body('y')}`).blocks;
      expect(chunkDocument({ blocks, warnings: [] }, { tokenizer, maxTokens: 256, overlapTokens: 32, title: 't' })).toHaveLength(1);
    }
  });

  it('repeats the full heading path on continuation chunks', () => {
    const d = doc([
      { text: 'Search', headings: ['Guide', 'Search'], kind: 'heading' },
      { text: paragraph(0, 30), headings: ['Guide', 'Search'], kind: 'paragraph' },
    ]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 96, overlapTokens: 0, title: 'Manual' });
    expect(chunks[0]!.embedText.startsWith('Manual\nGuide\n\nSearch\n\nSentence number 0')).toBe(true);
    for (const c of chunks.slice(1)) expect(c.embedText.startsWith('Manual\nGuide > Search\n\nSentence number')).toBe(true);
  });

  it('puts a heading with nothing under it at the start of the next section, not in a title-only chunk (#61 Low 24)', () => {
    const d = doc([
      { text: 'Intro', headings: ['Intro'], kind: 'heading' },
      { text: 'Opening words.', headings: ['Intro'], kind: 'paragraph' },
      { text: 'Appendix', headings: ['Appendix'], kind: 'heading' },
      { text: 'Appendix A', headings: ['Appendix', 'Appendix A'], kind: 'heading' },
      { text: 'Details.', headings: ['Appendix', 'Appendix A'], kind: 'paragraph' },
      { text: 'Appendix B', headings: ['Appendix', 'Appendix B'], kind: 'heading' },
      { text: 'B1', headings: ['Appendix', 'Appendix B', 'B1'], kind: 'heading' },
      { text: paragraph(0, 12), headings: ['Appendix', 'Appendix B', 'B1'], kind: 'paragraph' },
      { text: 'The end', headings: ['The end'], kind: 'heading' },
    ]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 64, overlapTokens: 8, title: 'T' });
    expect(chunks.slice(0, 3).map((c) => [c.embedText, c.headings])).toEqual([
      ['T\n\nIntro\n\nOpening words.', ['Intro']],
      ['T\n\nAppendix\n\nAppendix A\n\nDetails.', ['Appendix', 'Appendix A']],
      [expect.stringMatching(/^T\nAppendix\n\nAppendix B\n\nB1\n\nSentence number 0 /), ['Appendix', 'Appendix B', 'B1']],
    ]);
    // Its continuations carry the whole path; a heading with nothing after it at all (the document's end) stays.
    for (const c of chunks.slice(3, -1)) expect(c.embedText.startsWith('T\nAppendix > Appendix B > B1\n\nSentence number')).toBe(true);
    expect(chunks.at(-1)!.text).toBe('The end');
    expect(chunks.filter((c) => !c.text.includes('\n\n') && c.text !== 'The end' && !c.text.startsWith('Sentence'))).toEqual([]);
  });

  it('keeps a title alone on its page or chapter (a cover) apart from the next one, so a passage cites one chapter', () => {
    const d = doc([
      { text: 'Tales of the Coast', headings: ['Tales of the Coast'], kind: 'heading', page: 1 },
      { text: 'The Wreck', headings: ['The Wreck'], kind: 'heading', page: 2 },
      { text: 'The schooner ran aground.', headings: ['The Wreck'], kind: 'paragraph', page: 2 },
    ]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 64, overlapTokens: 8, title: 'T' });
    expect(chunks.map((c) => [c.text, c.pageStart, c.pageEnd])).toEqual([
      ['Tales of the Coast', 1, 1],
      ['The Wreck\n\nThe schooner ran aground.', 2, 2],
    ]);
  });

  it('cuts a 144k-character line without spaces into fitting chunks that cover it all, each tokenizer call reading a window of it', () => {
    const line = Array.from({ length: 9000 }, (_, i) => `.c${i}{color:#${(i * 2654435761 % 0xffffff).toString(16)}}`).join('');
    const d = doc([{ text: line, headings: [], kind: 'paragraph' }]);
    // The tokenizer's work is counted, not timed (tokenising costs ~8 µs a character): the line is read a window of
    // 8 characters per token of budget at a time, a few times over. Split whole, or cut prefix by prefix, it was read
    // in one call or hundreds of times over: minutes of the daemon's main thread.
    const read = { calls: 0, chars: 0, longest: 0 };
    const counting: TokenCounter = {
      count: (text) => (note(text), tokenizer.count(text)),
      encode: (text) => (note(text), tokenizer.encode(text)),
    };
    const note = (text: string) => {
      read.calls++;
      read.chars += text.length;
      read.longest = Math.max(read.longest, text.length);
    };
    const chunks = chunkDocument(d, { tokenizer: counting, maxTokens: 256, overlapTokens: 0, title: 'style.css' });
    expect(read.longest, 'the longest text one call read').toBeLessThanOrEqual(256 * 8);
    expect(read.chars / line.length, `${read.chars} characters read in ${read.calls} calls`).toBeLessThan(8);
    for (const c of chunks) expect(c.tokenCount + 2).toBeLessThanOrEqual(256);
    expect(chunks.map((c) => c.text).join('')).toBe(line);
  });

  it('shortens an overlong header instead of starving the text', () => {
    const title = 'A very long title '.repeat(40);
    const d = doc([{ text: paragraph(0, 10), headings: [], kind: 'paragraph' }]);
    const chunks = chunkDocument(d, { tokenizer, maxTokens: 96, overlapTokens: 0, title });
    for (const c of chunks) {
      expect(c.tokenCount + 2).toBeLessThanOrEqual(96);
      expect(tokenizer.count(c.text)).toBeGreaterThan(30);
    }
  });

  it('returns no chunks for a document without text', () => {
    expect(chunkDocument(doc([]), { tokenizer, maxTokens: 256, overlapTokens: 32, title: 'x' })).toEqual([]);
  });

  it('records where each chunk lies, so the text rebuilds exactly even where sentences repeat across chunk boundaries', () => {
    const rand = rng(49);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    let overlaps = 0;
    const lines = ['Total due: 120.00 EUR.', 'ERROR disk full on /var.', 'The lessee shall pay the rent monthly.', 'See clause 4.', sentence(1), 'x'];
    for (let round = 0; round < 40; round++) {
      const blocks: Block[] = [];
      let headings: string[] = [];
      for (let b = 0; b < 2 + Math.floor(rand() * 10); b++) {
        if (rand() < 0.15) {
          headings = [pick(['Terms', 'Log', 'Invoice'])];
          blocks.push({ text: headings[0]!, headings, kind: 'heading', page: 1 + Math.floor(b / 3) });
          continue;
        }
        // Lines that repeat one after another (three times, at random), joined by the whitespace a parser leaves.
        const body: string[] = [];
        for (let l = 0; l < 1 + Math.floor(rand() * 30); l++) {
          const line = pick(lines);
          for (let r = rand() < 0.4 ? 3 : 1; r > 0; r--) body.push(line, pick([' ', '\n', '  ', ' \n']));
        }
        blocks.push({ text: ` ${body.join('')}`, headings, kind: 'paragraph', page: 1 + Math.floor(b / 3) });
      }
      const expected = blocks.map((b) => b.text.trim()).join('\n\n');
      // Where each page starts in that text: at its first block.
      const expectedPages: [number, number][] = [];
      blocks.reduce((at, b) => {
        if (b.page !== expectedPages.at(-1)?.[1]) expectedPages.push([at, b.page!]);
        return at + b.text.trim().length + 2;
      }, 0);
      for (const [maxTokens, overlapTokens] of [[40, 20], [64, 32], [128, 8]] as const) {
        const chunks = chunkDocument(doc(blocks), { tokenizer, maxTokens, overlapTokens, title: 'T' });
        let rebuilt = '';
        const pages: [number, number][] = [];
        for (const { text, placement } of chunks) {
          rebuilt += placement.separator;
          for (const [at, page] of placement.page_starts) {
            if (at >= placement.overlap && page !== pages.at(-1)?.[1]) pages.push([rebuilt.length + at - placement.overlap, page]);
          }
          rebuilt += text.slice(placement.overlap);
        }
        expect(rebuilt).toBe(expected);
        expect(pages).toEqual(expectedPages);
        overlaps += chunks.filter((c) => c.placement.overlap > 0).length;
      }
    }
    expect(overlaps).toBeGreaterThan(100);
  });

  it('rejects nonsensical sizes', () => {
    expect(() => chunkDocument(doc([]), { tokenizer, maxTokens: 4, overlapTokens: 0, title: '' })).toThrow(/maxTokens/);
    expect(() => chunkDocument(doc([]), { tokenizer, maxTokens: 64, overlapTokens: -1, title: '' })).toThrow(/overlapTokens/);
  });
});

describe('splitSentences', () => {
  it('returns trimmed sentence ranges', () => {
    const text = 'First one. Second one?  Third!\nFourth';
    expect(splitSentences(text).map(([s, e]) => text.slice(s, e))).toEqual(['First one.', 'Second one?', 'Third!', 'Fourth']);
  });

  it('hands ICU long text a window at a time and covers all of it', () => {
    // V8's segmenter slows down sharply on long strings (src/ingest/sentences.ts): what it is given is recorded, not
    // timed.
    const text = paragraph(0, 3000);
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    let ranges: [number, number][];
    let given: number[];
    try {
      ranges = splitSentences(text);
      given = segment.mock.calls.map(([piece]) => piece.length);
    } finally {
      segment.mockRestore();
    }
    expect(given.length).toBeGreaterThan(1);
    expect(Math.max(...given)).toBeLessThanOrEqual(4096);
    expect(given.reduce((a, b) => a + b, 0)).toBe(text.length);
    expect(ranges.length).toBe(3000);
  });
});
