/**
 * A passage's citation as people read it: "p. 3", "pp. 3–4", "slide 2", "rows 4–9 · Berths", "chapter 3". The
 * shape is the API's `citation` field (search/citation.ts); the web pages and the CLI both show it, so it lives
 * here, where either may import it.
 */
export type CitationUnit = 'page' | 'slide' | 'row' | 'chapter';

export interface CitationFields {
  unit: CitationUnit;
  start: number;
  end: number;
  sheet?: string;
}

const WORDS: Record<CitationUnit, [one: string, many: string]> = {
  page: ['p.', 'pp.'],
  slide: ['slide', 'slides'],
  row: ['row', 'rows'],
  chapter: ['chapter', 'chapters'],
};

export function citationLabel(c: CitationFields): string {
  const [one, many] = WORDS[c.unit];
  const span = c.end !== c.start ? `${many} ${c.start}–${c.end}` : `${one} ${c.start}`;
  return c.sheet ? `${span} · ${c.sheet}` : span;
}

/** `n` of the unit in words, as a document's length: "1 page", "4 slides". */
export function unitCount(unit: CitationUnit, n: number): string {
  const [one, many] = unit === 'page' ? ['page', 'pages'] : WORDS[unit];
  return `${n} ${n === 1 ? one : many}`;
}

/** The heading of a stretch of a document's text that starts at unit `n`: "Page 3", "Slide 2", "Row 4", "Chapter 1". */
export function unitHeading(unit: CitationUnit, n: number): string {
  return `${unit === 'page' ? 'Page' : WORDS[unit][0].replace(/^./, (ch) => ch.toUpperCase())} ${n}`;
}
