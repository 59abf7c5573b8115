/**
 * Keyword analysis per language, the same for a chunk at ingest and a query at search time: the text is cut into
 * words by script (jieba for Chinese, ICU for Japanese, Thai, Lao, Khmer and Burmese, spaces and punctuation for the
 * rest), normalised (NFKC, lower case), and each word becomes its forms for the language: stop words dropped, the
 * Snowball stem, the stem without diacritics as an added form, German umlaut spellings and compound parts, Korean
 * words without their particle. Runs of Chinese and Japanese characters add their character bigrams, which meet
 * where a segmentation of the query and of the document disagree; Korean words add their syllable bigrams.
 *
 * The keyword index holds these forms (the chunks' `keyword_text`), so LanceDB's own tokenizer only splits at
 * spaces; the text shown is never changed (docs/search.md#languages).
 */
import { chineseWords } from './chinese.js';
import { compoundParts, germanUmlauts } from './german.js';
import { withoutParticle } from './korean.js';
import { type ScriptClass, scriptSegments, WORD_RUN } from './scripts.js';
import { wordRules } from './stemmers.js';

/**
 * The analysis chunks' `keyword_text` was written with. A library whose rows were written with an older one is
 * re-analysed in the background (language-backfill.ts); raise it whenever a change here changes any form.
 */
export const ANALYSIS_VERSION = 1;

/** Longest form kept: the index's tokenizer drops longer tokens (chunk-schema.ts), and so must a query. */
export const MAX_FORM_CHARS = 64;

/** A word of a text, where it lies (UTF-16 offsets into the text as given), and its forms. */
export interface AnalysedWord {
  start: number;
  end: number;
  forms: string[];
}

const segmenters = new Map<string, Intl.Segmenter>();
function icuWords(text: string, locale: string): { segment: string; index: number }[] {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  return [...s.segment(text)].filter((x) => x.isWordLike);
}

const FOLDED_SCRIPTS = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}\p{N}]+$/u;
const LIGATURES: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ł: 'l', þ: 'th', ı: 'i' };

/** A form without diacritics (Latin, Greek and Cyrillic letters only: elsewhere marks are letters' vowels). */
export function fold(form: string): string {
  if (!FOLDED_SCRIPTS.test(form)) return form;
  return form
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[ßæœøđłþı]/g, (c) => LIGATURES[c]!);
}

/** The forms of one word of a spaced script in `language`; none for a stop word. */
function spacedForms(word: string, language: string | null): string[] {
  if (/^\p{N}+$/u.test(word)) return [word];
  if (word.length < 2) return [];
  const rules = wordRules(language);
  if (rules.stopWords.has(word)) return [];
  const out = new Set<string>();
  const add = (w: string) => {
    const stem = rules.stem(w);
    out.add(stem);
    out.add(fold(stem));
  };
  if (language === 'de') {
    const spelled = germanUmlauts(word);
    add(spelled);
    for (const part of compoundParts(spelled)) add(part);
  } else add(word);
  return [...out];
}

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

/**
 * Cuts `text` into words with their forms in each of `languages` (a word's forms are the union over them), and calls
 * `extra` with the forms that belong to no one word (bigrams across a run's words).
 */
function analyse(text: string, languages: readonly (string | null)[], onWord: (w: AnalysedWord) => void, extra: (form: string) => void): void {
  for (const m of text.matchAll(WORD_RUN)) {
    const raw = m[0];
    const norm = raw.normalize('NFKC').toLowerCase();
    // Offsets inside the run hold only when normalising kept its length; otherwise a word stands for the whole run.
    const aligned = norm.length === raw.length;
    const at = (start: number, end: number) => (aligned ? { start: m.index + start, end: m.index + end } : { start: m.index, end: m.index + raw.length });
    for (const seg of scriptSegments(norm)) {
      const words = new Map<string, { start: number; end: number; forms: Set<string> }>();
      const word = (start: number, end: number, forms: Iterable<string>) => {
        const key = `${start}:${end}`;
        const w = words.get(key) ?? { ...at(seg.offset + start, seg.offset + end), forms: new Set<string>() };
        words.set(key, w);
        for (const f of forms) w.forms.add(f);
      };
      const script: ScriptClass = seg.script;
      if (script === 'spaced') {
        for (const language of languages) word(0, seg.text.length, spacedForms(seg.text, language));
      } else if (script === 'cj') {
        const runForms = new Set<string>();
        bigrams(seg.text, runForms);
        for (const language of cjLanguages(languages, seg.text)) {
          for (const w of cjWords(seg.text, language)) {
            // A lone kana is a particle or an ending (は, を, た): it says nothing on its own.
            if (w.segment.length === 1 && !/\p{Script=Han}/u.test(w.segment)) continue;
            word(w.index, w.index + w.segment.length, [w.segment]);
          }
        }
        for (const f of runForms) extra(f);
      } else if (script === 'hangul') {
        const stripped = withoutParticle(seg.text);
        const forms = new Set([seg.text, stripped]);
        if (stripped.length > 2) bigrams(stripped, forms);
        word(0, seg.text.length, forms);
      } else {
        const locale = languages.find((l) => l === 'th' || l === 'lo' || l === 'km' || l === 'my') ?? 'th';
        for (const w of icuWords(seg.text, locale)) word(w.index, w.index + w.segment.length, [w.segment]);
      }
      for (const w of words.values()) {
        const forms = [...w.forms].filter((f) => f.length > 0 && f.length <= MAX_FORM_CHARS);
        if (forms.length > 0) onWord({ start: w.start, end: w.end, forms });
      }
    }
  }
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

/** The words of `text` in `language` with their forms and offsets (highlights). */
export function analysedWords(text: string, language: string | null): AnalysedWord[] {
  const out: AnalysedWord[] = [];
  analyse(text, [language], (w) => out.push(w), () => {});
  return out;
}

/** What the keyword index holds for a chunk: its forms in its language, space-separated, in text order. */
export function analyseText(text: string, language: string | null): string {
  const out: string[] = [];
  analyse(
    text,
    [language],
    (w) => out.push(...w.forms),
    (f) => out.push(f),
  );
  return out.join(' ');
}

/**
 * A query's distinct forms in each of `languages` (the union: a short query is read as any language the library
 * holds), at most `maxForms`, in first-seen order.
 */
export function queryForms(query: string, languages: readonly (string | null)[], maxForms = 128): string[] {
  const out = new Set<string>();
  const add = (f: string) => {
    if (out.size < maxForms) out.add(f);
  };
  analyse(
    query,
    languages.length > 0 ? languages : [null],
    (w) => w.forms.forEach(add),
    add,
  );
  return [...out];
}
