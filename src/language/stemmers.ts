/**
 * Stemming and stop words per language: Snowball stemmers and stop-word lists from Orama's packages
 * (@orama/stemmers, @orama/stopwords; Apache-2.0), for 28 languages. Each language's module is loaded the first
 * time a text in it is analysed.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** ISO 639-1 code → the packages' name for the language. */
const ORAMA_NAMES: Record<string, string> = {
  ar: 'arabic',
  hy: 'armenian',
  bg: 'bulgarian',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hu: 'hungarian',
  hi: 'indian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  uk: 'ukrainian',
  sa: 'sanskrit',
};

/** Languages with a stemmer (ISO 639-1). */
export const STEMMED_LANGUAGES: readonly string[] = Object.keys(ORAMA_NAMES);

export interface WordRules {
  stem: (word: string) => string;
  stopWords: ReadonlySet<string>;
}

/**
 * Lists of @orama/stopwords written in a code page and read back as Latin-1, and that code page: 147 of its 507
 * Lithuanian words ("ði" for ši, "á" for į) and 15 of its 133 Serbian ("bi\xe6e" for biće) were never met in text,
 * so never dropped, nor counted as the language's by detection.
 */
const MISREAD: Record<string, string> = { lithuanian: 'windows-1257', serbian: 'windows-1250' };

/** A stop word as its list meant it: one read as Latin-1 (every character below U+0100, some above U+007F) decoded again. */
function repaired(word: string, name: string): string {
  const encoding = MISREAD[name];
  if (!encoding || !/^[\x00-\xff]*[\x80-\xff][\x00-\xff]*$/.test(word)) return word;
  return new TextDecoder(encoding).decode(Buffer.from(word, 'latin1'));
}

const PLAIN: WordRules = { stem: (w) => w, stopWords: new Set() };
const loaded = new Map<string, WordRules>();

/** The stemmer and stop words of a language; none for a language without a stemmer here (its words are kept as they are). */
export function wordRules(language: string | null): WordRules {
  const name = language ? ORAMA_NAMES[language] : undefined;
  if (!name) return PLAIN;
  let rules = loaded.get(name);
  if (!rules) {
    const { stemmer } = require(`@orama/stemmers/${name}`) as { stemmer: (w: string) => string };
    const { stopwords } = require(`@orama/stopwords/${name}`) as { stopwords: string[] };
    rules = { stem: stemmer, stopWords: new Set(stopwords.map((w) => repaired(w, name).normalize('NFKC').toLowerCase())) };
    loaded.set(name, rules);
  }
  return rules;
}
