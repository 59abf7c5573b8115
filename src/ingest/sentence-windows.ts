/**
 * The units the builtin reranker scores a chunk by: its sentences, with fragments too short to mean
 * anything alone ("Results.", "(n = 17).") merged into the next sentence. Computed from a chunk's text
 * at ingest (their vectors are stored beside the chunk, see store/lancedb/chunk-windows.ts) and again
 * at query time for highlights, so both sides agree on the spans.
 */
import { splitSentences } from './sentences.js';

export interface SentenceWindow {
  /** [start, end) UTF-16 offsets into the chunk text. */
  start: number;
  end: number;
}

/** Fewer words than this and a sentence is joined to its neighbour. */
const MIN_WORDS = 5;
/** Windows stop growing past this many characters (the model sees ~256 tokens anyway). */
const MAX_CHARS = 1200;

const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;

export function sentenceWindows(text: string): SentenceWindow[] {
  const out: SentenceWindow[] = [];
  let open: SentenceWindow | undefined;
  for (const [start, end] of splitSentences(text)) {
    if (open) {
      open.end = end;
    } else {
      open = { start, end };
    }
    const w = text.slice(open.start, open.end);
    if (words(w) >= MIN_WORDS || open.end - open.start >= MAX_CHARS) {
      out.push(open);
      open = undefined;
    }
  }
  if (open) {
    // A short tail joins the previous window rather than standing alone.
    const last = out.at(-1);
    if (last && open.end - last.start <= MAX_CHARS) last.end = open.end;
    else out.push(open);
  }
  return out;
}

export const windowTexts = (text: string): string[] => sentenceWindows(text).map((w) => text.slice(w.start, w.end));
