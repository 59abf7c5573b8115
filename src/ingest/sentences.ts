/**
 * Sentence boundaries via ICU (Intl.Segmenter), shared by the chunker and by search snippets.
 * Returns [start, end) UTF-16 ranges into `text`, trailing whitespace trimmed, empty segments dropped.
 */
const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/**
 * V8's segmenter slows down sharply on long strings, so long
 * text is cut into windows first: at a line break (also a sentence break for ICU), else after sentence
 * punctuation, else at a space.
 */
const WINDOW = 4096;

export function splitSentences(text: string): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  while (start < text.length) {
    const end = windowEnd(text, start);
    const piece = text.slice(start, end);
    for (const { index, segment } of segmenter.segment(piece)) {
      let s = start + index;
      let e = s + segment.length;
      while (s < e && isSpace(text.charCodeAt(s))) s++;
      while (e > s && isSpace(text.charCodeAt(e - 1))) e--;
      if (e > s) out.push([s, e]);
    }
    start = end;
  }
  return out;
}

function windowEnd(text: string, start: number): number {
  const limit = start + WINDOW;
  if (limit >= text.length) return text.length;
  const floor = start + WINDOW / 4;
  const newline = text.lastIndexOf('\n', limit - 1);
  if (newline >= floor) return newline + 1;
  for (let i = limit - 1; i > floor; i--) {
    if (isSpace(text.charCodeAt(i)) && /[.!?。！？]/.test(text.charAt(i - 1))) return i + 1;
  }
  for (let i = limit - 1; i > floor; i--) if (isSpace(text.charCodeAt(i))) return i + 1;
  // No space at all (minified code): cut anywhere but inside a surrogate pair.
  const c = text.charCodeAt(limit);
  return c >= 0xdc00 && c <= 0xdfff ? limit + 1 : limit;
}

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029;
}
