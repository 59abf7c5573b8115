/**
 * Words a text writes with their parts joined by a character, or in camelCase, that a person types otherwise: e-mail
 * and email, U.S.A. and USA, Ph.D. and PhD, AT&T and ATT, x86_64 and x86-64, O'Brien and OBrien, don't and dont, 1,500
 * and 1500, parse_config, parseConfig and "parse config". Analysis (analyse.ts) reads word runs joined so as one word
 * too, written together, and a camelCase run as its parts too, on both sides, so each spelling meets the others — as
 * Elasticsearch's word_delimiter_graph (catenate_words, catenate_numbers, split_on_case_change) and Lucene's
 * ClassicFilter (U.S.A.) make them meet.
 */

/** Dropped between any two runs: hyphens (ASCII, U+2010, the non-breaking U+2011) and identifiers' underscore. */
const HYPHENS = '-\u2010\u2011_';
/** Apostrophes: straight, right and left quotes, the acute accent typed for one (don´t), the modifier letter ʼ. */
const APOSTROPHES = "'\u2019\u2018\u00b4\u02bc";
/** Group a number's digits in thousands (1,500; 1.500; 1 500; 1'500), and only that. */
const DIGIT_GROUPS = ",.'\u2019\u00a0\u202f\u2009";

/**
 * Every character that may join two runs, for what a stored text may hold (language-backfill.ts): the middle dot of
 * Catalan's l·l and R&D's ampersand besides the above.
 */
export const JOINERS = `${HYPHENS}${APOSTROPHES}${DIGIT_GROUPS}\u00b7&`;

const JOINING = new Set(JOINERS);

/** English clitics after an apostrophe: "she'll" is not "shell", "we'd" not "wed"; "manager's" meets "managers" as it is. */
const CLITICS = new Set(['s', 'll', 're', 've', 'd', 'm']);

const DIGITS = /^\p{N}+$/u;
const ENDS_IN_DIGIT = /\p{N}$/u;
const LETTER = /^\p{L}$/u;
const LATIN_LETTER = /^\p{Script=Latin}$/u;
const STARTS_LOWER = /^\p{Ll}/u;
const SHORT = /^\p{L}{1,2}$/u;

/**
 * Whether a point between two runs of letters is an abbreviation's (U.S.A., e.g., Ph.D., M.Sc.): both are of two
 * letters or fewer, and one is a single letter. Two longer words about a point are a file name, a domain, Node.js or
 * a missed space ("end.Next"): not joined, or "tides.txt" would be a word "tidestxt" in every chunk its name heads.
 */
function abbreviated(before: string, after: string): boolean {
  return SHORT.test(before) && SHORT.test(after) && (LETTER.test(before) || LETTER.test(after));
}

/**
 * How two word runs written with `sep` between them (`before` and `after` as written: case tells a name) read as one
 * word: '' when its parts are written together, `sep` when it is kept (a decimal point or comma, a hyphen between
 * numbers — 3.14, 2024-05-12, 1,5 are not 314 — and an ampersand, R&D), undefined when they are two words.
 */
export function joint(before: string, sep: string, after: string): string | undefined {
  if (!JOINING.has(sep)) return undefined;
  if (ENDS_IN_DIGIT.test(before) && DIGITS.test(after)) {
    // x86_64 is x86-64 written as an identifier: both spellings are one word, as a hyphen between numbers keeps it.
    if (sep === '_' && !DIGITS.test(before)) return '-';
    if (sep === '_' || (after.length === 3 && before.length <= 3 && DIGITS.test(before) && DIGIT_GROUPS.includes(sep))) return '';
    if (sep === '.' || sep === ',') return sep;
    return HYPHENS.includes(sep) ? '-' : undefined;
  }
  if (HYPHENS.includes(sep)) return '';
  if (sep === '.') return abbreviated(before, after) ? '' : undefined;
  if (sep === '&') return '&';
  if (sep === '\u00b7') return '';
  if (!APOSTROPHES.includes(sep) || DIGITS.test(after) || CLITICS.has(after.toLowerCase())) return undefined;
  // A Latin letter elided before a word (l'homme, d'un, n'est, s'il): "nest" and "sil" are other words. A capital
  // after it is a name (O'Brien, d'Artagnan); Ukrainian's apostrophe is inside a word (п'ять).
  return LATIN_LETTER.test(before) && STARTS_LOWER.test(after) ? undefined : '';
}

/**
 * Where a camelCase or PascalCase run's next part starts: before a capital followed by two lower-case letters, after
 * two letters or more (parseConfig, XMLParser, HttpClient; not iPhone, eBay, mRNA, URLs).
 */
const HUMP = /(?<=\p{L}\p{L})(?=\p{Lu}\p{Ll}\p{Ll})/gu;

const NONE: readonly number[] = [];

/** The offsets in `run` where its camelCase parts start after the first; none for most words. */
export function humps(run: string): readonly number[] {
  // Asked of every capitalised word ("The", "Monday"): a look at its code units first, cheaper than the regex.
  let upper = false;
  for (let i = 2; i < run.length - 2 && !upper; i++) {
    const c = run.charCodeAt(i);
    upper = (c >= 65 && c <= 90) || c > 127;
  }
  return upper ? [...run.matchAll(HUMP)].map((m) => m.index) : NONE;
}
