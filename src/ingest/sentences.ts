/**
 * Sentence boundaries via ICU (Intl.Segmenter), shared by the chunker and by search snippets.
 * Returns [start, end) UTF-16 ranges into `text`, trailing whitespace trimmed, empty segments dropped.
 */
const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

export function splitSentences(text: string): [number, number][] {
  const out: [number, number][] = [];
  for (const { index, segment } of segmenter.segment(text)) {
    let start = index;
    let end = index + segment.length;
    while (start < end && isSpace(text.charCodeAt(start))) start++;
    while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
    if (end > start) out.push([start, end]);
  }
  return out;
}

function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029;
}
