/**
 * Chunk stage: turns parsed blocks into passages sized in the embedder's own tokens.
 *
 * - A chunk never spans two sections (a section is a heading and the blocks under it, up to the next heading). A
 *   heading with nothing under it (a title straight over the next heading) is no passage of its own: it opens the
 *   next section's first chunk on the same page, chapter or slide.
 *   A paragraph that reads as a heading the parser did not mark (a short title line over body text: plain text, a
 *   PDF whose headings are bold rather than larger) starts a new chunk too, with nothing carried over, unless the
 *   chunk before it would hold less than an eighth of the budget.
 * - Inside a section, blocks are packed greedily; a block too big for one chunk is split at sentence
 *   boundaries, a sentence too big at word boundaries, a word too big (minified code, base64) at token boundaries.
 * - Consecutive chunks of a section overlap by up to `overlapTokens` of whole trailing pieces.
 * - `embedText` is a short header (document title, heading path) followed by the text; the header's tokens and
 *   the model's special tokens come out of `maxTokens`, so what gets embedded is never truncated.
 * - Headings that are furniture or sentences stay out of the heading path (heading-trail.ts).
 * - Each chunk records where it lies in the document's text (`placement`): how much of its start repeats the text
 *   before, what separates it from that text, and where its pages start, so the text can be rebuilt exactly.
 */
import { cleanTrails, sentenceLike } from './heading-trail.js';
import { graphemeAfter, graphemeBefore } from '../core/code-points.js';
import { splitSentences } from './sentences.js';
import type { ChunkPlacement } from '../store/lancedb/chunk-schema.js';
import type { Block, Chunk, ParsedDocument, TokenCounter } from './types.js';

export interface ChunkOptions {
  tokenizer: TokenCounter;
  /** Most tokens the embedder sees for one chunk, header and special tokens included (e.g. 256). */
  maxTokens: number;
  /** Tokens of trailing context repeated at the start of the next chunk in the same section. */
  overlapTokens: number;
  /** Document title for the contextual header (the caller's choice: parsed title or file name). */
  title: string;
  /** Tokens the model adds around every input ([CLS], [SEP]); default 2. */
  specialTokens?: number;
}

interface Piece {
  block: number;
  start: number;
  end: number;
  /** What it takes of the budget: its tokens, or more for text the tokenizer reads as next to nothing (`weigh`). */
  tokens: number;
  page: number | undefined;
}

/**
 * Blocks up to this many characters per token of budget are counted whole before they are split: English runs
 * ~4.5 characters a token, so such a block most likely fits.
 */
const LIKELY_FITS_CHARS_PER_TOKEN = 3;

/** The header may take at most this share of the budget; longer titles and heading paths are cut. */
const MAX_HEADER_SHARE = 1 / 3;

export function chunkDocument(doc: ParsedDocument, opts: ChunkOptions): Chunk[] {
  return [...chunkStream(doc, opts)];
}

/**
 * The same chunks as chunkDocument, produced one at a time: a huge document is chunked as the pipeline pulls
 * (slice by slice, between embedding and writing), so neither its chunks nor the tokenizer's work pile up.
 * `onProgress(doneChars, totalChars)` reports how much of the blocks' text has been taken in.
 */
export function* chunkStream(
  doc: ParsedDocument,
  opts: ChunkOptions & { onProgress?: (doneChars: number, totalChars: number) => void },
): Generator<Chunk, void, undefined> {
  const { tokenizer, maxTokens, overlapTokens } = opts;
  if (!Number.isInteger(maxTokens) || maxTokens < 16) throw new TypeError('"maxTokens" must be an integer ≥ 16');
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0) throw new TypeError('"overlapTokens" must be an integer ≥ 0');
  const special = opts.specialTokens ?? 2;
  // What the counter adds to every count (0 for a counter that leaves the specials out): splitToFit sums sentences.
  const countedSpecials = tokenizer.count('');
  const next: EmitState = { index: 0, base: 0, frontier: null };
  const totalChars = doc.blocks.reduce((n, b) => n + b.text.length, 0);
  let doneChars = 0;

  for (const section of sections(cleanTrails(doc.blocks, doc.pages))) {
    // The headings that open the section (more than one where titles had nothing under them): the last one's path
    // is the section's.
    let lead = 0;
    while (lead < section.length && section[lead]!.kind === 'heading') lead++;
    const headings = section[Math.max(lead, 1) - 1]!.headings;
    // The heading's own text opens the section's first chunk (so it is stored and keyword-searchable); that
    // chunk's header then stops at the first heading's parent instead of repeating it.
    const opensWithHeading = section[0]!.kind === 'heading';
    const limit = Math.floor(maxTokens * MAX_HEADER_SHARE);
    const header = makeHeader(opts.title, headings, tokenizer, limit);
    const firstHeader = opensWithHeading ? makeHeader(opts.title, section[0]!.headings.slice(0, -1), tokenizer, limit) : header;
    const budget = maxTokens - special - tokenizer.count(header);
    const blocks = section;
    function* pieces(): Generator<Piece> {
      for (let i = 0; i < blocks.length; i++) {
        const block = blocks[i]!;
        // Reported piece by piece: one long paragraph (a text file without line breaks) still moves the progress.
        for (const [start, end, tokens] of splitBlock(block.text, budget, countedSpecials, tokenizer)) {
          yield { block: i, start, end, tokens, page: block.page };
          opts.onProgress?.(doneChars + end, totalChars);
        }
        doneChars += block.text.length;
      }
    }
    const opensUnmarkedHeading = (p: Piece) => p.start === 0 && p.block > 0 && unmarkedHeading(blocks[p.block]!, blocks[p.block + 1]);
    for (const group of pack(pieces(), budget, Math.min(overlapTokens, Math.floor(budget / 2)), opensUnmarkedHeading)) {
      const first = group[0]!.block === 0 && group[0]!.start === 0;
      yield* emit(group, blocks, first ? firstHeader : header, headings, budget, tokenizer, next);
    }
    next.base += blocks.length;
  }
}

/** What emit carries from chunk to chunk: the next index, and where the text given so far ends. */
interface EmitState {
  index: number;
  /** The document-wide number of the current section's first block. */
  base: number;
  /** The end of the text the chunks so far hold: a block (document-wide number) and an offset in its text. */
  frontier: { block: number; end: number } | null;
}

/**
 * Runs of blocks that share a heading path; lazy, so a huge document is not regrouped up front. A run that is only
 * headings so far is no section of its own: the next run on the same page joins it (a title-only passage finds
 * nothing, issue 61).
 */
function* sections(blocks: Block[]): Generator<Block[]> {
  let key = '';
  let current: Block[] | undefined;
  for (const block of blocks) {
    if (!block.text.trim()) continue;
    const k = JSON.stringify(block.headings);
    // A heading always opens a section, even when it repeats the previous heading's text.
    // A title-only run joins the next one on its own page, chapter or slide only: a cover page's title is no reason
    // to cite two chapters.
    const joins = current !== undefined && current.every((b) => b.kind === 'heading') && current.at(-1)!.page === block.page;
    if (!current || ((k !== key || block.kind === 'heading') && !joins)) {
      if (current) yield current;
      current = [block];
    } else current.push(block);
    key = k;
  }
  if (current) yield current;
}

function makeHeader(title: string, headings: string[], tokenizer: TokenCounter, limit: number): string {
  const path = headings.filter((h) => h && h !== title).join(' > ');
  const header = [title.trim(), path].filter((s) => s).join('\n');
  if (!header) return '';
  const full = `${header}\n\n`;
  if (tokenizer.count(full) <= limit) return full;
  return `${cutToTokens(header, limit - 1, tokenizer)}…\n\n`;
}

/** Words a title line has at most, and a body paragraph under it at least. */
const TITLE_WORDS = 10;
const BODY_WORDS = 12;

/**
 * A paragraph the parser did not mark as a heading but that reads as one: one short line that opens with a capital
 * or a number ("3.2 Commuting", "TRAVEL"), ends without sentence punctuation and is no sentence, over a body paragraph.
 */
export function unmarkedHeading(block: Block, next: Block | undefined): boolean {
  if (block.kind !== 'paragraph' || !next || next.kind !== 'paragraph') return false;
  const text = block.text.trim();
  const words = text.split(/\s+/).length;
  return (
    !text.includes('\n') &&
    words <= TITLE_WORDS &&
    text.length <= 90 &&
    /^[\p{Lu}\p{N}]/u.test(text) &&
    !/[.,;:!?…]$/u.test(text) &&
    !sentenceLike(text) &&
    next.text.trim().split(/\s+/).length >= BODY_WORDS
  );
}

/**
 * Greedy packing with overlap; each group is one chunk's pieces. A piece `breaksBefore` says opens an unmarked
 * heading ends the chunk early (when it holds an eighth of the budget), and no overlap is carried across it.
 */
function* pack(pieces: Iterable<Piece>, budget: number, overlap: number, breaksBefore: (p: Piece) => boolean): Generator<Piece[]> {
  let current: Piece[] = [];
  let tokens = 0;
  let fresh = 0; // pieces in `current` not carried over from the previous chunk
  for (const piece of pieces) {
    if (fresh > 0 && tokens >= budget / 8 && breaksBefore(piece)) {
      yield current;
      current = [];
      tokens = 0;
      fresh = 0;
    } else if (current.length && tokens + piece.tokens > budget) {
      if (fresh > 0) yield current;
      const carried: Piece[] = [];
      let carriedTokens = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const p = current[i]!;
        if (carriedTokens + p.tokens > overlap || carriedTokens + p.tokens + piece.tokens > budget) break;
        carried.unshift(p);
        carriedTokens += p.tokens;
      }
      current = carried;
      tokens = carriedTokens;
      fresh = 0;
    }
    current.push(piece);
    tokens += piece.tokens;
    fresh++;
  }
  if (fresh > 0) yield current;
}

function* emit(
  group: Piece[],
  blocks: Block[],
  header: string,
  headings: string[],
  budget: number,
  tokenizer: TokenCounter,
  next: EmitState,
): Generator<Chunk> {
  // Token counts of pieces add up almost exactly (splits fall on whitespace); the real count has the last word.
  const limit = budget + tokenizer.count(header);
  let pieces = group;
  const overflow: Piece[] = [];
  for (;;) {
    const { text, parts } = render(pieces, blocks);
    const embedText = header + text;
    const tokenCount = tokenizer.count(embedText);
    if (tokenCount > limit && pieces.length > 1) {
      overflow.unshift(pieces[pieces.length - 1]!);
      pieces = pieces.slice(0, -1);
      continue;
    }
    if (text.trim()) {
      const pages = pieces.map((p) => p.page).filter((p): p is number => p !== undefined);
      const chunk: Chunk = { index: next.index++, text, embedText, headings: [...headings], tokenCount, placement: place(text, parts, blocks, next) };
      if (pages.length) {
        chunk.pageStart = Math.min(...pages);
        chunk.pageEnd = Math.max(...pages);
      }
      if (pieces.some((p) => blocks[p.block]!.ocr)) chunk.ocr = true;
      yield chunk;
    }
    break;
  }
  if (overflow.length) yield* emit(overflow, blocks, header, headings, budget, tokenizer, next);
}

/** A stretch of one block in a chunk's text: [start, end) in the block's text, found at `at` in the chunk's. */
interface Part {
  block: number;
  start: number;
  end: number;
  at: number;
}

/** The original text each piece covers, contiguous pieces of one block rejoined, blocks separated by a blank line. */
function render(pieces: Piece[], blocks: Block[]): { text: string; parts: Part[] } {
  const parts: Part[] = [];
  let text = '';
  let i = 0;
  while (i < pieces.length) {
    const first = pieces[i]!;
    let last = first;
    while (i + 1 < pieces.length && pieces[i + 1]!.block === first.block && pieces[i + 1]!.start >= last.end) {
      last = pieces[++i]!;
    }
    const slice = blocks[first.block]!.text.slice(first.start, last.end);
    const trimmed = slice.trim();
    if (trimmed) {
      if (text) text += '\n\n';
      const start = first.start + slice.length - slice.trimStart().length;
      parts.push({ block: first.block, start, end: start + trimmed.length, at: text.length });
      text += trimmed;
    }
    i++;
  }
  return { text, parts };
}

/**
 * Where a chunk's text lies in the document's text (the blocks' trimmed texts, a blank line between two), from
 * the pieces it was made of, never from its words: a sentence that repeats is not mistaken for the overlap.
 * Moves `state.frontier` past the chunk.
 */
function place(text: string, parts: Part[], blocks: Block[], state: EmitState): ChunkPlacement {
  const { base, frontier } = state;
  let overlap = 0;
  for (const p of parts) {
    const block = base + p.block;
    if (!frontier || block > frontier.block || (block === frontier.block && p.start >= frontier.end)) break;
    overlap = p.at + (block < frontier.block ? p.end : Math.min(p.end, frontier.end)) - p.start;
  }
  let separator = '';
  if (overlap > 0) {
    const rest = text.slice(overlap);
    separator = rest.slice(0, rest.length - rest.trimStart().length);
    overlap += separator.length;
  } else if (frontier && parts.length) {
    const first = parts[0]!;
    separator = base + first.block === frontier.block ? blocks[first.block]!.text.slice(frontier.end, first.start) : '\n\n';
  }
  const pageStarts: [number, number][] = [];
  for (const p of parts) {
    const page = blocks[p.block]!.page;
    if (page !== undefined && page !== pageStarts.at(-1)?.[1]) pageStarts.push([p.at, page]);
  }
  const last = parts.at(-1);
  if (last && (!frontier || base + last.block > frontier.block || (base + last.block === frontier.block && last.end > frontier.end))) {
    state.frontier = { block: base + last.block, end: last.end };
  }
  return { overlap, separator, page_starts: pageStarts };
}

/**
 * What a text takes of a chunk's budget: its tokens, but at least one per `MAX_CHARS_PER_TOKEN` of its characters
 * other than whitespace. A run of letters without a space past WordPiece's 100-character word limit (or in a script
 * the vocabulary lacks) is one [UNK] token however long: sized in tokens alone, 200,000 such letters made one chunk
 * that every search showing it returned whole. Prose measures 4–6 characters a token and CJK one, so only such text
 * reaches the bound; whitespace is left out so that text spaced for layout is sized by its tokens as before.
 */
const MAX_CHARS_PER_TOKEN = 12;

function weigh(text: string, tokens: number): number {
  const whitespace = text.match(/\s/gu)?.length ?? 0;
  return Math.max(tokens, Math.ceil((text.length - whitespace) / MAX_CHARS_PER_TOKEN));
}

/**
 * A block longer than this many characters per token of budget is split window by window (`splitBlock`). No piece of
 * a chunk's budget is that long in any text the tokenizer reads (its longest tokens are ~20 characters).
 */
const WINDOW_CHARS_PER_TOKEN = 8;

/**
 * `splitToFit` for a block of any length, lazily: a long one (a text file without line breaks, a base64 blob) is
 * taken a window at a time, each ending at its last sentence end or whitespace (or, with neither, at its length), so
 * every tokenizer call reads a bounded text and the pieces come as the chunker pulls them. Split whole, an 8 MB line
 * of base64 held the daemon's main thread for minutes: tokenising it costs ~8 µs a character, several times over.
 */
function* splitBlock(text: string, budget: number, specials: number, tokenizer: TokenCounter): Generator<[number, number, number]> {
  const size = budget * WINDOW_CHARS_PER_TOKEN;
  for (let start = 0; start < text.length; ) {
    const end = windowEnd(text, start, size);
    for (const [s, e, n] of splitToFit(text.slice(start, end), budget, specials, tokenizer, end - start < text.length)) yield [start + s, start + e, n];
    start = end;
  }
}

/**
 * Where a window of at most `size` characters from `start` ends: where its last sentence starts (the one the window
 * may cut), else after its last whitespace, in its second half; with neither, at its length, between graphemes (a
 * chunk of a run never starts with a vowel sign or half an emoji).
 */
function windowEnd(text: string, start: number, size: number): number {
  if (text.length - start <= size) return text.length;
  const window = text.slice(start, start + size);
  const half = Math.floor(size / 2);
  let cut = splitSentences(window).findLast(([s]) => s >= half)?.[0] ?? -1;
  if (cut < 0) {
    const space = window.search(/\s\S*$/);
    if (space >= half) cut = space + 1;
  }
  if (cut < 0) cut = size;
  return Math.max(start + 1, graphemeBefore(text, start + cut));
}

/**
 * Splits `text` into [start, end, tokens] ranges of at most `budget` tokens each. A short block is counted whole
 * first, as it most likely fits; a longer one is counted sentence by sentence, and rejoined when they fit together
 * after all: sentences end at whitespace or punctuation, where the tokenizer splits anyway, so their counts add up
 * to the whole's and a block is tokenised once, not twice.
 */
function splitToFit(text: string, budget: number, specials: number, tokenizer: TokenCounter, windowed = false): [number, number, number][] {
  if (text.search(/\S/) < 0) return [];
  // A window of a longer block (splitBlock) is never one piece: its sentences are, as the whole block's would be.
  if (!windowed && text.length <= budget * LIKELY_FITS_CHARS_PER_TOKEN) {
    const whole = weigh(text, tokenizer.count(text));
    if (whole <= budget) return [[0, text.length, whole]];
  }
  const out: [number, number, number][] = [];
  // Every count includes what the counter adds to any text (`specials`); the whole block's has it once.
  let total = specials;
  for (const [s, e] of splitSentences(text)) {
    const sentence = text.slice(s, e);
    const n = tokenizer.count(sentence);
    total += n - specials;
    const w = weigh(sentence, n);
    if (w <= budget) out.push([s, e, w]);
    else for (const [ws, we, wn] of splitWords(sentence, budget, tokenizer)) out.push([s + ws, s + we, wn]);
  }
  if (windowed || out.length < 2) return out;
  const whole = weigh(text, total);
  return whole <= budget ? [[0, text.length, whole]] : out;
}

/**
 * Word-boundary pieces for one overlong sentence; single words beyond the budget are cut at token boundaries (a word
 * read as one [UNK] token: halved between graphemes until its weight fits).
 */
function splitWords(text: string, budget: number, tokenizer: TokenCounter): [number, number, number][] {
  const out: [number, number, number][] = [];
  let start = -1;
  let end = 0;
  let tokens = 0;
  for (const m of text.matchAll(/\S+/g)) {
    const ws = m.index;
    const we = ws + m[0].length;
    const n = weigh(m[0], tokenizer.count(m[0]));
    if (n > budget) {
      if (start >= 0) out.push([start, end, tokens]);
      start = -1;
      tokens = 0;
      for (const [cs, ce, cn] of cutWord(m[0], budget, tokenizer)) out.push([ws + cs, ws + ce, cn]);
      continue;
    }
    if (start >= 0 && tokens + n > budget) {
      out.push([start, end, tokens]);
      start = -1;
      tokens = 0;
    }
    if (start < 0) start = ws;
    end = we;
    tokens += n;
  }
  if (start >= 0) out.push([start, end, tokens]);
  return out;
}

/** Cuts one long word at token offsets; a piece the tokenizer still counts too long is halved until it fits. */
function cutWord(word: string, budget: number, tokenizer: TokenCounter): [number, number, number][] {
  const offsets = tokenizer.encode(word).offsets.filter(([s, e]) => e > s);
  const cuts: number[] = [0];
  for (let i = budget; i < offsets.length; i += budget) cuts.push(offsets[i]![0]);
  cuts.push(word.length);
  const out: [number, number, number][] = [];
  for (let i = 0; i + 1 < cuts.length; i++) fitRange(word, cuts[i]!, cuts[i + 1]!, budget, tokenizer, out);
  return out;
}

function fitRange(text: string, start: number, end: number, budget: number, tokenizer: TokenCounter, out: [number, number, number][]): void {
  if (end <= start) return;
  const piece = text.slice(start, end);
  const n = weigh(piece, tokenizer.count(piece));
  if (n <= budget || end - start <= 1) {
    out.push([start, end, n]);
    return;
  }
  const mid = graphemeAfter(text, start + Math.floor((end - start) / 2));
  if (mid >= end) {
    out.push([start, end, n]);
    return;
  }
  fitRange(text, start, mid, budget, tokenizer, out);
  fitRange(text, mid, end, budget, tokenizer, out);
}

/** The longest prefix of `text` (cut at a token boundary) that counts at most `limit` tokens. */
function cutToTokens(text: string, limit: number, tokenizer: TokenCounter): string {
  const offsets = tokenizer.encode(text).offsets.filter(([s, e]) => e > s);
  let end = offsets[Math.max(0, limit - 1)]?.[1] ?? text.length;
  while (end > 0 && tokenizer.count(text.slice(0, end)) > limit) end = offsets.findLast(([, e]) => e < end)?.[1] ?? 0;
  return text.slice(0, end).trimEnd();
}
