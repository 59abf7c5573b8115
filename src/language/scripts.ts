/**
 * Which writing system a run of text is in, as far as word analysis cares: scripts written without spaces between
 * words need a segmenter, the rest split at spaces and punctuation.
 */

/**
 * Characters that change how a word is drawn, not which word it is: the soft hyphen, ZWNJ (Persian writes می‌خواهم
 * with it, and as often without), ZWJ (Sinhala's conjuncts: ශ්‍රී) and the word joiner. Typed or left out alike.
 */
export const INVISIBLE = /[\u00ad\u200c\u200d\u2060]/;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'g');

/** `word` without its invisible characters. */
export function visible(word: string): string {
  return word.replace(INVISIBLE_ALL, '');
}

/**
 * A word-ish run: letters, combining marks (Thai vowels, Devanagari signs, Arabic harakat, Hebrew points) and digits,
 * with the invisible characters inside it: a Persian word with its ZWNJ or a Sinhala conjunct with its ZWJ is one
 * run, not two.
 */
export const WORD_RUN = new RegExp(`[\\p{L}\\p{M}\\p{N}]+(?:${INVISIBLE.source}+[\\p{L}\\p{M}\\p{N}]+)*`, 'gu');

/** Chinese characters and Japanese kana (kana marks a run as Japanese). */
export const HAN = /\p{Script=Han}/u;
export const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}ー]/u;
export const HANGUL = /\p{Script=Hangul}/u;
/** Scripts ICU segments with its dictionaries: Thai, Lao, Khmer, Burmese. */
export const ICU_SEGMENTED = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

export type ScriptClass = 'cj' | 'hangul' | 'icu' | 'spaced';

/** The class of one character (with its marks, which take the class of the letter before them). */
export function scriptClass(ch: string): ScriptClass {
  if (HAN.test(ch) || KANA.test(ch)) return 'cj';
  if (HANGUL.test(ch)) return 'hangul';
  if (ICU_SEGMENTED.test(ch)) return 'icu';
  return 'spaced';
}

/** Any character of a script written without spaces. */
/** A letter of a script written without spaces between words (or, in Korean, with particles joined to them). */
export const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** A word run cut where its script class changes ("RC0150号" → "RC0150", "号"); marks stay with their letter. */
export function scriptSegments(run: string): { text: string; script: ScriptClass; offset: number }[] {
  // Most runs are one spaced word: one test instead of one per character.
  if (!UNSPACED.test(run)) return [{ text: run, script: 'spaced', offset: 0 }];
  const out: { text: string; script: ScriptClass; offset: number }[] = [];
  let offset = 0;
  for (const ch of run) {
    const cls = /\p{M}/u.test(ch) && out.length > 0 ? out.at(-1)!.script : scriptClass(ch);
    const last = out.at(-1);
    if (last && last.script === cls) last.text += ch;
    else out.push({ text: ch, script: cls, offset });
    offset += ch.length;
  }
  return out;
}
