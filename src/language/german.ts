/**
 * German spellings and compounds, for keyword analysis.
 *
 * - Umlauts written out ("Buecher" for "Bücher"): as Snowball's german2 variant does, ae/oe/ue become ä/ö/ü (ue not
 *   after q) before stemming, in documents and queries alike, so both spellings stem the same.
 * - Compounds ("Fahrradfahrer"): split into parts that are German words, the method of Koehn & Knight (2003,
 *   "Empirical methods for compound splitting"): of the ways to cut a word into known words (with the linking
 *   elements -s-, -es-, -n-, -en-, -e-, -er- between them), the one whose parts are most frequent (geometric mean of
 *   their frequencies), if that beats the word whole. The lexicon is a frequency-ranked list of German words from
 *   Wikipedia and common usage (the MIT-licensed lists of @zxcvbn-ts/language-de), frequency taken as 1/rank (Zipf).
 *   The parts are added to the word's forms; the word itself stays.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Shortest part a compound is cut into: shorter ones ("ab", "an") are prefixes and particles more often than words. */
const MIN_PART = 4;
/** Shortest word that is tried as a compound. */
const MIN_COMPOUND = 2 * MIN_PART;
const LINKS = ['', 's', 'es', 'n', 'en', 'e', 'er'];

let ranks: Map<string, number> | undefined;

function lexicon(): Map<string, number> {
  if (ranks) return ranks;
  ranks = new Map();
  for (const list of ['@zxcvbn-ts/language-de/src/commonWords.json', '@zxcvbn-ts/language-de/src/wikipedia.json']) {
    const words = require(list) as string[];
    words.forEach((w, i) => {
      const seen = ranks!.get(w);
      if (w.length >= MIN_PART && (seen === undefined || i + 1 < seen)) ranks!.set(w, i + 1);
      longestPart = Math.max(longestPart, w.length);
    });
  }
  return ranks;
}

/** The longest word of the lexicon: no part is longer, so none is looked for (see compoundParts). */
let longestPart = 0;

/** german2's transliteration: written-out umlauts become umlauts (lower-case input). */
export function germanUmlauts(word: string): string {
  return word.replace(/(^|[^q])ue/g, '$1ü').replace(/ae/g, 'ä').replace(/oe/g, 'ö');
}

const frequency = (rank: number | undefined): number => (rank === undefined ? 0 : 1 / rank);

/**
 * The parts of a German compound (lower-case, umlauts as letters), best split first found, or [] when it is no
 * compound of known words. Parts come without their linking element ("urlaubstage" → ["urlaub", "tage"]).
 */
export function compoundParts(word: string): string[] {
  if (word.length < MIN_COMPOUND) return [];
  const known = lexicon();
  // best[i]: the best split of word.slice(i) into parts (log-frequency sum and count), computed right to left.
  const best: ({ parts: string[]; logSum: number } | null)[] = new Array(word.length + 1).fill(null);
  best[word.length] = { parts: [], logSum: 0 };
  for (let i = word.length - MIN_PART; i >= 0; i--) {
    let choice: { parts: string[]; logSum: number } | null = null;
    // Parts no longer than the lexicon's longest word: every slice up to the word's end made a long word (a
    // 2,000-character query read as German) cost seconds of the main thread, growing with the cube of its length.
    for (let j = i + MIN_PART; j <= Math.min(word.length, i + longestPart); j++) {
      const part = word.slice(i, j);
      const rank = known.get(part);
      if (rank === undefined) continue;
      for (const link of LINKS) {
        const next = j + link.length;
        // A linking element joins two parts: it never ends the word.
        if (next > word.length || (link && (next === word.length || word.slice(j, next) !== link))) continue;
        const rest = best[next];
        if (!rest) continue;
        const candidate = { parts: [part, ...rest.parts], logSum: Math.log(frequency(rank)) + rest.logSum };
        if (!choice || candidate.logSum / candidate.parts.length > choice.logSum / choice.parts.length) choice = candidate;
      }
    }
    best[i] = choice;
  }
  const split = best[0];
  if (!split || split.parts.length < 2) return [];
  const whole = frequency(known.get(word));
  return Math.exp(split.logSum / split.parts.length) > whole ? split.parts : [];
}
