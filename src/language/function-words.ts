/**
 * Function words of the Latin-script languages @orama/stopwords has no list for, or a short one (stemmers.ts), for
 * language detection only (detect.ts `functionWords`, with the stop words where there are some): without them, any
 * English "a", "i", "to" or "do" in a Polish, Czech, Slovak or Vietnamese text outweighed the told language's none,
 * and the text was labelled English. Slovene is here though tinyld cannot name it (it tells Slovene as Serbian,
 * Slovak or Lithuanian), and Croatian, which it tells as Serbian: where Slovene's words are frequent, Croatian's may
 * be more so. Serbian in Latin letters has Croatian's (Orama's Serbian list has 133 words, without i, u, je or se).
 *
 * From the stopwords-iso package's lists: their single words of letters only (not "o.o.", "'n", "a-lô"), NFKC and
 * lower case, without LEFT_OUT.
 */
import { createRequire } from 'node:module';

const LANGUAGES = ['af', 'cs', 'eo', 'et', 'hr', 'la', 'lv', 'pl', 'sk', 'sl', 'tl', 'vi'] as const;
/** stopwords-iso's list a language's function words are read from. */
const LIST_OF: Readonly<Record<string, string>> = { sr: 'hr' };

/**
 * Entries that are no function word of the language: Slovene's list holds every letter, month and weekday names, and
 * Roman numerals (its one-letter words are a, k, o, s, v, z); Latin's "a" and "e" are the English article and nothing.
 */
const LEFT_OUT: Readonly<Record<string, ReadonlySet<string>>> = {
  sl: new Set(
    'april avgust b c d december e f februar g h i ii iii iv ix j januar julij junij l m maj marec n nedelja november oktober p petek ponedeljek r september sobota sreda t torek u vii viii x č četrtek š ž'.split(' '),
  ),
  la: new Set(['a', 'e']),
};

let lists: Readonly<Record<string, readonly string[]>> | undefined;

/** The function words of `language` from stopwords-iso (loaded at the first call), or none. */
export function functionWordsFrom(language: string): readonly string[] {
  const list = LIST_OF[language] ?? language;
  if (!(LANGUAGES as readonly string[]).includes(list)) return [];
  lists ??= createRequire(import.meta.url)('stopwords-iso') as Record<string, string[]>;
  const left = LEFT_OUT[list];
  return [...new Set((lists[list] ?? []).map((w) => w.normalize('NFKC').toLowerCase()))].filter((w) => /^\p{L}+$/u.test(w) && !left?.has(w));
}
