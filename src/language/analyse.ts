/**
 * Keyword analysis per language, the same for a chunk at ingest and a query at search time: the text is cut into
 * words by script (jieba for Chinese, ICU for Japanese, Thai, Lao, Khmer and Burmese, spaces and punctuation for the
 * rest), normalised (NFKC, lower case), and each word becomes its forms for the language: stop words dropped, the
 * Snowball stem, the stem without diacritics and the stem of the Latin word without them as added forms, German umlaut
 * spellings and compound parts, Korean words without their particle. Words joined by a hyphen, dot, apostrophe,
 * underscore or digit group are also read written together (e-mail as email, 1,500 as 1500), and camelCase words as
 * their parts too (joined-words.ts); a letter with ++ or # is a word (C++, C#: symbol-words.ts). Runs of Chinese and
 * Japanese characters add their character bigrams, which meet where a segmentation of the query and of the document
 * disagree; Korean words add their syllable bigrams.
 *
 * The keyword index holds these forms (the chunks' `keyword_text`), so LanceDB's own tokenizer only splits at
 * spaces; the text shown is never changed (docs/search.md#languages).
 */
import { boundaryBefore } from '../core/code-points.js';
import { chineseWords, simplified } from './chinese.js';
import { compoundParts, germanUmlauts } from './german.js';
import { humps, joint } from './joined-words.js';
import { letterSymbols } from './symbol-words.js';
import { withoutParticle } from './korean.js';
import { HAN, INVISIBLE, type ScriptClass, scriptSegments, UNSPACED, visible, WORD_RUN } from './scripts.js';
import { STEMMED_LANGUAGES, wordRules } from './stemmers.js';

/**
 * The analysis (here and language detection) chunks' `language` and `keyword_text` were written with, recorded in each
 * row (`keyword_analysis`). Rows written with an earlier one whose text the change may read otherwise are analysed
 * again in the background (language-backfill.ts `REANALYSED`): raise it, and say there which rows, whenever a change
 * changes any form or verdict.
 */
export const ANALYSIS_VERSION = 4;

/**
 * The languages whose words the analysis knows (a Snowball stemmer, or a segmenter for a script written without
 * spaces); any other is analysed as words cut at spaces, kept as they are.
 */
export const ANALYSED_LANGUAGES: readonly string[] = [...new Set([...STEMMED_LANGUAGES, 'zh', 'ja', 'ko', 'th', 'lo', 'km', 'my'])].sort();

/** Longest form kept: the index's tokenizer drops longer tokens (chunk-schema.ts), and so must a query. */
export const MAX_FORM_CHARS = 64;

/**
 * Longest word of a spaced script analysed: its forms would be longer than MAX_FORM_CHARS, but for a German compound's
 * parts, hence twice that. A longer run of letters (a hostile upload; base64 of letters alone) is no word, and cost
 * Snowball and compound splitting its length squared: 200,000 Arabic letters 18 s of the daemon's CPU, 340,000 German
 * ones all its heap.
 */
const LONGEST_WORD = 2 * MAX_FORM_CHARS;

/** A word of a text, where it lies (UTF-16 offsets into the text as given), and its forms. */
export interface AnalysedWord {
  start: number;
  end: number;
  forms: string[];
}

const segmenters = new Map<string, Intl.Segmenter>();

/**
 * Code units ICU segments at once. V8's Intl.Segmenter copies its whole input into each segment it yields, so one
 * run of Japanese or Thai cost its length squared: 10,000 characters 0.6 s, 50,000 20 s and gigabytes.
 */
const ICU_WINDOW = 256;

/** The words of `text` by ICU's word break for `locale`, their offsets into `text`. */
function icuWords(text: string, locale: string): { segment: string; index: number }[] {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  const out: { segment: string; index: number }[] = [];
  for (let from = 0; from < text.length; ) {
    const to = boundaryBefore(text, Math.min(text.length, from + ICU_WINDOW));
    const segments = [...s.segment(text.slice(from, to))];
    // The window's last word may go on past it: it is read again at the head of the next window (unless it is the
    // window's only one, a word longer than the window, cut there).
    const next = to < text.length && segments.length > 1 ? from + segments.pop()!.index : to;
    for (const x of segments) if (x.isWordLike) out.push({ segment: x.segment, index: from + x.index });
    from = next;
  }
  return out;
}

/** Scripts whose marks a reader may leave out: accents, and Hebrew's vowel points and cantillation (שָׁלוֹם is שלום). */
const FOLDED_SCRIPTS = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Hebrew}\p{M}\p{N}]+$/u;
const LIGATURES: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ł: 'l', þ: 'th', ı: 'i' };

/** A word of Latin letters (with their marks, and digits). */
const LATIN_WORD = /^[\p{Script=Latin}\p{M}\p{N}]+$/u;

/** A form without diacritics (Latin, Greek, Cyrillic and Hebrew letters only: elsewhere marks are letters' vowels). */
export function fold(form: string): string {
  if (/^[\x00-\x7f]*$/.test(form) || !FOLDED_SCRIPTS.test(form)) return form;
  return form
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[ßæœøđłþı]/g, (c) => LIGATURES[c]!);
}

/**
 * Words' forms by language and word: text repeats its words, and stemming, folding and compound splitting were most
 * of the analysis' time (bench:languages). Emptied when full rather than kept in order: a simple bound.
 */
const FORM_CACHE_MAX = 200_000;
type FormsOf = (word: string, language: string | null) => string[];
/**
 * By what computes the forms (a query's word has more than the index's), then language, then word: a key string made
 * of them was built for every word read, and was most of a highlight's time.
 */
const formCache = new Map<FormsOf, Map<string | null, Map<string, string[]>>>();
let formCacheSize = 0;

/** The words map last looked up, and for what: a text's words are read in one language by one `compute`. */
let last: { compute: FormsOf; language: string | null; words: Map<string, string[]> } | undefined;

function cached(language: string | null, word: string, compute: FormsOf): string[] {
  let words: Map<string, string[]>;
  if (last?.compute === compute && last.language === language) words = last.words;
  else {
    let byLanguage = formCache.get(compute);
    if (!byLanguage) formCache.set(compute, (byLanguage = new Map()));
    let found = byLanguage.get(language);
    if (!found) byLanguage.set(language, (found = new Map()));
    words = found;
    last = { compute, language, words };
  }
  let forms = words.get(word);
  if (!forms) {
    if (formCacheSize >= FORM_CACHE_MAX) {
      formCache.clear();
      formCacheSize = 0;
      formCache.set(compute, new Map([[language, (words = new Map())]]));
      last = { compute, language, words };
    }
    forms = compute(word, language);
    words.set(word, forms);
    formCacheSize++;
  }
  return forms;
}

/** A Korean word's forms: itself, without its particle, and the latter's syllable bigrams. */
function hangulForms(word: string): string[] {
  const stripped = withoutParticle(word);
  const forms = new Set([word, stripped]);
  if (stripped.length > 2) bigrams(stripped, forms);
  return [...forms];
}

type Side = 'index' | 'query';

/**
 * Compound parts are forms of their own kind, marked with a trailing `~`: a part matches a query's word as a part,
 * with the part's own (lower) weight where compounds hold it often, and never counts as the word standing alone
 * ("Bücher" would otherwise find every page on a "Handbuch" first).
 */
const PART = '~';

/** The forms of one word of a spaced script in `language`, as the index holds them; none for a stop word. */
function spacedForms(word: string, language: string | null): string[] {
  return spacedWordForms(word, language, 'index');
}

/**
 * A query word's forms: as the index's, plus each of its forms as a compound part (`Fahrrad` finds
 * `Fahrradfahrer`), and its own parts as words and as parts.
 */
function spacedQueryForms(word: string, language: string | null): string[] {
  return spacedWordForms(word, language, 'query');
}

function spacedWordForms(word: string, language: string | null, side: Side): string[] {
  if (INVISIBLE.test(word)) return visibleForms(word, language, side);
  if (/^\p{N}+$/u.test(word)) return [word];
  if (word.length < 2) return [];
  const rules = wordRules(language);
  if (rules.stopWords.has(word)) return [];
  const out = new Set<string>();
  const add = (w: string, as: 'word' | 'part' | 'both') => {
    const stem = rules.stem(w);
    // Snowball may stem a Latin word with diacritics otherwise than without them ("résumé" whole, "resume" as
    // "resum"; Portuguese "não" as "nã"): the stem of the word without them is a form too, so either spelling meets
    // the other. Not in other scripts: their stemmers read both spellings alike, and Russian "новый" is no "новыи".
    const plain = fold(w);
    const forms = plain !== w && LATIN_WORD.test(w) ? [stem, fold(stem), rules.stem(plain)] : [stem, fold(stem)];
    for (const f of new Set(forms)) {
      if (as !== 'part') out.add(f);
      if (as !== 'word') out.add(f + PART);
    }
  };
  if (language === 'de') {
    const spelled = germanUmlauts(word);
    add(spelled, side === 'query' ? 'both' : 'word');
    // The dative plural of nouns in -el ("Teebeuteln"), which Snowball leaves whole.
    if (spelled.length >= 6 && spelled.endsWith('eln')) add(spelled.slice(0, -1), 'word');
    for (const part of compoundParts(spelled)) add(part, side === 'query' ? 'both' : 'part');
  } else {
    add(word, 'word');
    // Arabic: Snowball stems a word with its article differently from the word alone (التأمين → تام, تأمين →
    // تامين); the word without the article is stemmed too (light stemming's first step).
    const bare = language === 'ar' ? ARABIC_ARTICLE.exec(word) : null;
    if (bare && word.length - bare[0].length >= 3) add(word.slice(bare[0].length), 'word');
  }
  return [...out];
}

/**
 * A word with invisible characters in it (scripts.ts `INVISIBLE`) has the forms of the word without them, so it meets
 * a query typed without them, and one typed with them, alike. A ZWNJ also parts what is written apart as often
 * (کتاب‌ها, کتاب ها): each part's forms are the word's too, as when it stood apart.
 */
function visibleForms(word: string, language: string | null, side: Side): string[] {
  const out = new Set(spacedWordForms(visible(word), language, side));
  if (word.includes('\u200c')) for (const part of word.split('\u200c')) for (const f of spacedWordForms(visible(part), language, side)) out.add(f);
  return [...out];
}

const ARABIC_ARTICLE = /^(?:وال|فال|بال|كال|لل|ال)/;

function bigrams(run: string, out: Set<string>): void {
  const chars = [...run];
  for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
}

/** The words of a Chinese or Japanese run for a language; their offsets into the run. */
function cjWords(run: string, language: string | null): { segment: string; index: number }[] {
  if (language === 'zh') {
    let index = 0;
    return chineseWords(run).map((segment) => {
      const w = { segment, index };
      index += segment.length;
      return w;
    });
  }
  return icuWords(run, 'ja');
}

/** A joined word that keeps a joiner (joined-words.ts `joint`): a number as written (3.14, 2024-05-12) or R&D. */
const KEPT_JOINER = /[.,&-]/;

/**
 * A word kept with its ampersand (AT&T) is also the word without it, typed so (ATT), where that has three letters or
 * more: R&D, P&G and Q&A without theirs would be rd, pg and qa, which are other words.
 */
function ampersandForms(joined: string): string[] {
  const bare = joined.replaceAll('&', '');
  return bare !== joined && bare.length >= 3 && /^\p{L}+$/u.test(bare) ? [joined, bare] : [joined];
}

/** Text of ASCII only: no normalisation changes it but case. */
const ASCII = /^[\x00-\x7f]*$/;

type OnWord = (start: number, end: number, forms: readonly string[]) => void;

/**
 * Cuts `text` into words with their forms in each of `languages` (a word's forms are the union over them): `onWord`
 * gets each word's offsets in `text` and forms, `extra` the forms that belong to no one word (bigrams across a run's
 * words). Words may overlap: runs joined by a hyphen, apostrophe … are a word too, written together, and a camelCase
 * run's parts are words inside it (joined-words.ts). `side`: a query's words also look for compounds they are part
 * of (see `compoundForms`).
 */
function analyse(text: string, languages: readonly (string | null)[], side: Side, onWord: OnWord, extra: (form: string) => void): void {
  const compute = side === 'query' ? spacedQueryForms : spacedForms;
  const one = languages.length === 1 ? languages[0]! : undefined;
  const formsOf = (word: string): readonly string[] => {
    if (one !== undefined) return cached(one, word, compute);
    const forms = new Set<string>();
    for (const language of languages) for (const f of cached(language, word, compute)) forms.add(f);
    return [...forms];
  };
  const spacedWord = (start: number, end: number, word: string) => {
    if (word.length > LONGEST_WORD && visible(word).length > LONGEST_WORD) return;
    const forms = formsOf(word);
    if (forms.length > 0) onWord(start, end, forms);
  };
  // Runs of a spaced script joined by one character (joined-words.ts): where the last one ended, as written, and
  // the word they make written together so far (undefined while it is one run).
  let lastEnd = -1;
  let lastRaw = '';
  let lastNorm = '';
  let joinedStart = 0;
  let joinedEnd = 0;
  let joined: string | undefined;
  const endJoined = () => {
    if (joined !== undefined && joined.length <= MAX_FORM_CHARS) {
      // A number's kept separator (3.14, R&D) makes a form as written; the rest is a word of the language.
      if (KEPT_JOINER.test(joined)) onWord(joinedStart, joinedEnd, ampersandForms(joined));
      else spacedWord(joinedStart, joinedEnd, joined);
    }
    joined = undefined;
  };
  // ʼ (U+02BC, a letter) is typed for an apostrophe as often as ’ (Ukrainian мʼясо, м’ясо): read alike; one code unit
  // for one, so offsets hold.
  const source = text.includes('\u02bc') ? text.replaceAll('\u02bc', '\u2019') : text;
  for (const m of source.matchAll(WORD_RUN)) {
    const raw = m[0];
    const ascii = ASCII.test(raw);
    const norm = ascii ? raw.toLowerCase() : raw.normalize('NFKC').toLowerCase();
    const end = m.index + raw.length;
    // The common case, one word of a spaced script: its forms straight from the cache.
    if (ascii || !UNSPACED.test(norm)) {
      // Most runs are one space apart: that is asked first.
      const sep = lastEnd === m.index - 1 && source.charCodeAt(lastEnd) !== 32 ? joint(lastRaw, source[lastEnd]!, raw) : undefined;
      if (sep === undefined) {
        if (joined !== undefined) endJoined();
        joinedStart = m.index;
      } else joined = (joined ?? lastNorm) + sep + norm;
      joinedEnd = end;
      lastEnd = end;
      lastRaw = raw;
      lastNorm = norm;
      spacedWord(m.index, end, norm);
      // A letter alone is no word, but with ++ or # after it one of its own (C++, C#).
      const symbols = raw.length === 1 ? letterSymbols(source, end) : 0;
      if (symbols > 0) onWord(m.index, end + symbols, [norm + source.slice(end, end + symbols)]);
      // A capital inside: the parts of parseConfig are words too (the run lower-cased is one: parseconfig).
      const starts = raw === norm ? undefined : humps(raw);
      if (starts?.length) {
        let from = 0;
        for (const at of [...starts, raw.length]) {
          spacedWord(m.index + from, m.index + at, raw.slice(from, at).normalize('NFKC').toLowerCase());
          from = at;
        }
      }
      continue;
    }
    endJoined();
    lastEnd = -1;
    // Offsets inside the run hold only when normalising kept its length; otherwise a word stands for the whole run.
    const alignedRun = norm.length === raw.length;
    for (const seg of scriptSegments(norm)) {
      let aligned = alignedRun;
      const words = new Map<string, { start: number; end: number; forms: Set<string> }>();
      const word = (start: number, end: number, forms: Iterable<string>) => {
        const key = `${start}:${end}`;
        let w = words.get(key);
        if (!w) {
          const from = seg.offset + start;
          const to = seg.offset + end;
          w = aligned ? { start: m.index + from, end: m.index + to, forms: new Set() } : { start: m.index, end: m.index + raw.length, forms: new Set() };
          words.set(key, w);
        }
        for (const f of forms) w.forms.add(f);
      };
      const script: ScriptClass = seg.script;
      if (script === 'spaced') {
        if (seg.text.length <= LONGEST_WORD || visible(seg.text).length <= LONGEST_WORD) for (const language of languages) word(0, seg.text.length, cached(language, seg.text, compute));
      } else if (script === 'cj') {
        const runForms = new Set<string>();
        const readAs = cjLanguages(languages, seg.text);
        // Chinese is read in Simplified characters (chinese.ts); a conversion that changed the length leaves the
        // words' offsets to the run.
        const han = readAs.includes('zh') ? simplified(seg.text) : seg.text;
        aligned &&= han.length === seg.text.length;
        bigrams(han, runForms);
        if (han !== seg.text && readAs.includes('ja')) bigrams(seg.text, runForms);
        for (const language of readAs) {
          const run = language === 'zh' ? han : seg.text;
          for (const w of cjWords(run, language)) {
            // A lone kana is a particle or an ending (は, を, た): it says nothing on its own.
            if (w.segment.length === 1 && !HAN.test(w.segment)) continue;
            word(w.index, w.index + w.segment.length, [w.segment]);
          }
        }
        for (const f of runForms) extra(f);
      } else if (script === 'hangul') {
        word(0, seg.text.length, cached('ko', seg.text, hangulForms));
      } else {
        const locale = languages.find((l) => l === 'th' || l === 'lo' || l === 'km' || l === 'my') ?? 'th';
        for (const w of icuWords(seg.text, locale)) word(w.index, w.index + w.segment.length, [w.segment]);
      }
      for (const w of words.values()) {
        const forms = [...w.forms].filter((f) => f.length > 0 && f.length <= MAX_FORM_CHARS);
        if (forms.length > 0) onWord(w.start, w.end, forms);
      }
    }
  }
  endJoined();
}

/**
 * The languages whose segmentation a Chinese/Japanese run gets: kana makes it Japanese; Han alone is segmented as
 * Chinese when Chinese is among the languages, and as Japanese when Japanese is (both when both are: a query).
 * Han in a text of another language is not segmented (its bigrams stand for it), so jieba loads only for Chinese.
 */
function cjLanguages(languages: readonly (string | null)[], run: string): (string | null)[] {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(run)) return ['ja'];
  const out = languages.filter((l) => l === 'zh' || l === 'ja');
  return out.length > 0 ? out : ['ja'];
}

/** The words of `text` in `language` with their forms and offsets. */
export function analysedWords(text: string, language: string | null): AnalysedWord[] {
  const out: AnalysedWord[] = [];
  eachAnalysedWord(text, language, (start, end, forms) => out.push({ start, end, forms: [...forms] }));
  return out;
}

/**
 * Each word of `text` in `language` with its offsets and forms, as `analysedWords` lists them but without keeping
 * them (highlights look at every word of every shown chunk: a list of them per chunk was a visible share of a search).
 * `forms` is valid only during the call.
 */
export function eachAnalysedWord(text: string, language: string | null, onWord: (start: number, end: number, forms: readonly string[]) => void): void {
  analyse(text, [language], 'index', onWord, () => {});
}

/** What the keyword index holds for a chunk: its forms in its language, space-separated, in text order. */
export function analyseText(text: string, language: string | null): string {
  const out: string[] = [];
  analyse(
    text,
    [language],
    'index',
    (_s, _e, forms) => {
      for (const f of forms) out.push(f);
    },
    (f) => out.push(f),
  );
  return out.join(' ');
}

/** A query analysed: its distinct forms (what highlights look for), and the keyword search's input. */
export interface AnalysedQuery {
  forms: string[];
  /**
   * The forms, space-separated. BM25 sums a query's terms, counting a repeated one again, so where the query has a
   * compound part (`buch~`) or a character bigram, which meet more text than the word does, each word's own form is
   * there twice ("Buecher" finds "Bücher" before a manual page that says "Handbuch" six times); else each once.
   */
  text: string;
}

/**
 * A query's forms in each of `languages` (the union: a short query is read as any language the library holds), at
 * most `maxForms` distinct, in first-seen order.
 */
export function analyseQuery(query: string, languages: readonly (string | null)[], maxForms = 128): AnalysedQuery {
  const weights = new Map<string, number>();
  const add = (f: string, weight: number) => {
    if (weights.size < maxForms || weights.has(f)) weights.set(f, Math.max(weights.get(f) ?? 0, weight));
  };
  analyse(
    query,
    languages.length > 0 ? languages : [null],
    'query',
    (_s, _e, forms) => forms.forEach((f) => add(f, f.endsWith(PART) ? 1 : 2)),
    (f) => add(f, 1),
  );
  // Only the ratio matters (fusion scales each list by its best score), and LanceDB reads a repeated term's postings
  // again: a query with no compound part or bigram gives each form once (a third less keyword CPU at 1M chunks).
  const least = Math.min(...weights.values());
  const terms: string[] = [];
  for (const [f, w] of weights) for (let i = 0; i < w / least; i++) terms.push(f);
  return { forms: [...weights.keys()], text: terms.join(' ') };
}

/** A query's distinct forms in each of `languages` (see analyseQuery). */
export function queryForms(query: string, languages: readonly (string | null)[], maxForms = 128): string[] {
  return analyseQuery(query, languages, maxForms).forms;
}
