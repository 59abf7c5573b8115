/**
 * The language of a text, offline: the script decides where it can (kana is Japanese, Hangul Korean, Thai Thai,
 * Han without kana Chinese), and tinyld, a small n-gram detector (64 languages, ~50 MB in memory once loaded, loaded
 * at first use), decides among the alphabetic languages. Chosen on the project's evaluation set
 * (docs/search.md#languages): as right as eld on documents and questions at a third of its memory, and far better
 * than franc on questions and on short chunks.
 */
import { createRequire } from 'node:module';
import { functionWordsFrom } from './function-words.js';
import { HAN, HANGUL, ICU_SEGMENTED, KANA } from './scripts.js';
import { wordRules } from './stemmers.js';

const require = createRequire(import.meta.url);
type TinyLd = { detectAll(text: string, opts?: { only?: string[] }): { lang: string; accuracy: number }[] };
let tinyld: TinyLd | undefined;
const detector = (): TinyLd => (tinyld ??= require('tinyld') as TinyLd);
let loading = false;
/**
 * The detector if loaded; else undefined, and it loads once the current work is done: a search does not wait for
 * it to load (its query is read as any of the library's languages meanwhile).
 */
function loadedDetector(): TinyLd | undefined {
  if (!tinyld && !loading) {
    loading = true;
    setImmediate(() => detector());
  }
  return tinyld;
}

/** Characters read to decide a chunk's language: more add cost, not certainty. */
const SAMPLE_CHARS = 600;

/** A detection at or above this accuracy is taken as the text's language (tinyld's scores are not probabilities). */
const RELIABLE = 0.5;

const LATIN = /\p{Script=Latin}/u;
/** Text whose letters are at least this share Latin is Latin-script text (a few Greek symbols, αvβ8, do not change it). */
const LATIN_TEXT = 0.9;

/**
 * The text as tinyld should read it: table separators as spaces. Its n-grams take the middle dot that joins a
 * spreadsheet row's cells here ("vessel: Aurora · berth: north", sheet-rows.ts) for Greek, and a Markdown table's
 * pipe for Devanagari's danda: a CSV of ship names was told Greek, a table Hindi, both at full accuracy. (Stripping
 * all punctuation changes the verdict on 24 of the evaluation set's 152 Debian pages, most for the worse.)
 */
function wordsOnly(text: string): string {
  return text.replace(/[·|]+/g, ' ');
}

/** Counts of Latin letters and of the script classes that name a language by themselves, over letters only. */
interface ScriptShares {
  letters: number;
  latin: number;
  han: number;
  kana: number;
  hangul: number;
  thai: number;
  icu: number;
}

function scriptShares(text: string): ScriptShares {
  const s = { letters: 0, latin: 0, han: 0, kana: 0, hangul: 0, thai: 0, icu: 0 };
  for (const ch of text) {
    if (!/\p{L}/u.test(ch)) continue;
    s.letters++;
    if (LATIN.test(ch)) s.latin++;
    else if (KANA.test(ch)) s.kana++;
    else if (HAN.test(ch)) s.han++;
    else if (HANGUL.test(ch)) s.hangul++;
    else if (ICU_SEGMENTED.test(ch)) {
      s.icu++;
      if (/\p{Script=Thai}/u.test(ch)) s.thai++;
    }
  }
  return s;
}

/** ISO 639-1 language of a text by its script alone, or undefined when the script says nothing (Latin, Cyrillic, ...). */
function byScript(text: string, s: ScriptShares): string | undefined {
  if (s.letters === 0) return undefined;
  const cjk = s.han + s.kana;
  // Japanese mixes kana into nearly every sentence; Chinese never does.
  if (cjk / s.letters > 0.3 || (cjk >= 20 && cjk / s.letters > 0.15)) return s.kana > 0 && s.kana / cjk > 0.05 ? 'ja' : 'zh';
  if (s.hangul / s.letters > 0.3) return 'ko';
  if (s.icu / s.letters > 0.3) {
    if (s.thai * 2 > s.icu) return 'th';
    if (/\p{Script=Lao}/u.test(text)) return 'lo';
    if (/\p{Script=Khmer}/u.test(text)) return 'km';
    return 'my';
  }
  return undefined;
}

/**
 * `DOCSEARCH_ANALYSIS=english`: every chunk and query is analysed as English, without detection — a benchmark's
 * baseline (bench:languages `--english`: what the per-language analysis costs a search), not a setting to run with.
 */
const ENGLISH_ONLY = process.env.DOCSEARCH_ANALYSIS === 'english';

/** The language of a chunk's text (ISO 639-1), or null when it cannot be told (no letters, or no detection). */
export function detectLanguage(text: string): string | null {
  if (ENGLISH_ONLY) return 'en';
  // From the middle: a text's start is where headings, names and commands in another language are.
  const from = Math.max(0, Math.floor((text.length - SAMPLE_CHARS) / 2));
  const sample = text.length > SAMPLE_CHARS ? text.slice(from, from + SAMPLE_CHARS) : text;
  const shares = scriptShares(sample);
  const script = byScript(sample, shares);
  if (script) return script;
  const [best] = detector().detectAll(wordsOnly(sample));
  if (!best) return null;
  const words = functionWords(sample, best.lang, shares);
  if (!words) return best.lang;
  // A verdict tinyld is not sure of (a table row of names, a one-line note) stands only with the told language's
  // function words behind it: without any, the text's language is not told rather than guessed (Greek for a CSV of
  // ship names).
  if (best.accuracy < RELIABLE) return words.theirs > words.en ? words.language : words.en > 0 ? 'en' : null;
  return words.en > words.theirs ? 'en' : words.language;
}

/**
 * The language of a query when it can be told with confidence: by script, or a detection tinyld is sure of on a
 * query of at least `minWords` words, unless its function words say otherwise (`functionWords`: more English ones
 * make it English, as many leave it untold, as do as many Slovene ones as Serbian). Null for a short or ambiguous
 * query ("Buecher", "mot de passe").
 */
export function reliableLanguage(query: string, minWords = 3): string | null {
  const shares = scriptShares(query);
  const script = byScript(query, shares);
  // Han alone is Chinese or Japanese kanji (図書館, 領収書): the library's languages decide.
  if (script === 'zh') return null;
  if (script) return script;
  if ((query.match(/[\p{L}\p{N}]+/gu) ?? []).length < minWords) return null;
  // Mostly Latin letters with a word of another alphabet ("photosynthesis chlorophyll التمثيل"): tinyld's n-grams
  // read the whole query as the other alphabet's language, and its Latin words lost their stems. Read it in the
  // library's languages instead.
  if (shares.latin < LATIN_TEXT * shares.letters && shares.latin * 2 >= shares.letters) return null;
  const [best] = loadedDetector()?.detectAll(wordsOnly(query)) ?? [];
  if (!best || best.accuracy < RELIABLE) return null;
  const words = functionWords(query, best.lang, shares);
  if (!words) return best.lang;
  if (words.tied) return null;
  if (words.en < words.theirs || words.en === 0) return words.language;
  return words.en > words.theirs ? 'en' : null;
}

/**
 * The evidence tinyld's n-grams lack, for Latin-script text it tells as a language other than English: how many of
 * its words are English function words, and how many the told language's (`functionWordsOf`). English dense in
 * names and jargon reads to the n-grams as anything: "TNFAIP3 is a tumor suppressor in glioblastoma." as Berber,
 * "Autophagy declines in aged organisms." as Hungarian (32 of SciFact's 300 test claims, tinyld sure of each; 514
 * of its 5,183 abstracts). A chunk is then analysed without English stems, and a query searched with the
 * keyword-leaning fusion of a language the model does not read (search/retrieve.ts). More English function words
 * than the told language's make the text English; fewer leave the verdict ("Wie lange darf ich ein Buch …
 * behalten?" has none). `language` is the told language, or Slovene where its function words outnumber the told
 * language's and Croatian's: tinyld has no model of Slovene, and tells it as Serbian, Slovak, Czech or Lithuanian.
 * `tied`: text told Serbian with as many of Slovene's function words as of Serbian's (and Croatian's), which a
 * query's few words often are ("Kako spremenim geslo za dostop do sistema?"): a query's language is then not told.
 * Undefined for text told English and for other scripts, which keep their verdict.
 */
function functionWords(text: string, told: string, shares: ScriptShares): { language: string; en: number; theirs: number; tied: boolean } | undefined {
  if (told === 'en') return undefined;
  if (shares.latin < LATIN_TEXT * shares.letters) return undefined;
  const english = functionWordsOf('en');
  const own = functionWordsOf(told);
  const slovene = functionWordsOf('sl');
  const croatian = functionWordsOf('hr');
  const counts = { en: 0, theirs: 0, sl: 0, hr: 0 };
  for (const w of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const word = w.normalize('NFKC').toLowerCase();
    if (english.has(word)) counts.en++;
    if (own.has(word)) counts.theirs++;
    if (slovene.has(word)) counts.sl++;
    if (croatian.has(word)) counts.hr++;
  }
  // Only against a list: a told language without one (Icelandic, Berber) would be Slovene at its first "in". Croatian
  // shares most of Slovene's function words, and tinyld tells it as Serbian, Esperanto or Dutch too.
  if (own.size > 0 && counts.sl > counts.theirs && counts.sl > counts.hr) return { language: 'sl', en: counts.en, theirs: counts.sl, tied: false };
  return { language: told, en: counts.en, theirs: counts.theirs, tied: told === 'sr' && counts.sl > 0 && counts.sl >= counts.theirs };
}

const functionWordSets = new Map<string, ReadonlySet<string>>();

/** A language's function words: its stop words (stemmers.ts) and function-words.ts's; none for a language with neither. */
function functionWordsOf(language: string): ReadonlySet<string> {
  let words = functionWordSets.get(language);
  if (!words) functionWordSets.set(language, (words = new Set([...wordRules(language).stopWords, ...functionWordsFrom(language)])));
  return words;
}

/** At most this many of the library's languages are tried on an ambiguous query (those of the most documents). */
const MAX_QUERY_LANGUAGES = 16;

/**
 * The languages a query is analysed in (`languages`): its own when it can be told (`own`, see `reliableLanguage`),
 * else the languages the searched library's documents are in (`library`, most documents first; asked only then),
 * else English.
 */
export async function queryLanguages(query: string, library: () => Promise<readonly string[]>): Promise<{ languages: string[]; own: string | null }> {
  if (ENGLISH_ONLY) return { languages: ['en'], own: null };
  const own = reliableLanguage(query);
  if (own) return { languages: [own], own };
  const held = (await library()).slice(0, MAX_QUERY_LANGUAGES);
  return { languages: held.length > 0 ? [...held] : ['en'], own: null };
}

/** The language most of a text's parts (a document's chunks) are in, by count; parts whose language was not told count for none. */
export function mostCommonLanguage(counts: ReadonlyMap<string | null, number> | undefined): string | null {
  let best: string | null = null;
  for (const [language, n] of counts ?? []) if (language !== null && (best === null || n > counts!.get(best)!)) best = language;
  return best;
}
