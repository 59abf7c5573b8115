/**
 * Character accuracy of recognised text against the truth: 1 − CER, where CER is the Levenshtein distance
 * (over Unicode code points) divided by the truth's length. Runs of whitespace count as one space on both
 * sides, so line breaks and paragraph gaps are not scored, only the characters read.
 */
export function characterAccuracy(recognised: string, truth: string): { accuracy: number; errors: number; length: number } {
  const a = [...normalise(recognised)];
  const b = [...normalise(truth)];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  const errors = prev[b.length]!;
  return { accuracy: b.length === 0 ? (a.length === 0 ? 1 : 0) : Math.max(0, 1 - errors / b.length), errors, length: b.length };
}

const normalise = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** A truth file's pages: the text between form-feed lines. */
export function truthPages(text: string): string[] {
  return text.split(/\f\n?/).map((p) => p.trim());
}
