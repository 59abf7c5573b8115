/**
 * Whether a page's text, as pdf.js decoded it, is mojibake: a font without a /ToUnicode map whose codes pdf.js could
 * only guess at. Two guesses are common: a subset font's glyph numbers (1, 2, 3… in order of first use) read as
 * character codes, which gives control codes, runs of unrelated punctuation and scrambled capitals; and a CID font's
 * glyph ids read as code points, which gives letters of a different script at nearly every character.
 * Real text in any language does neither, so the measure is the share of non-space characters that are odd:
 *  - control codes, private-use glyphs and U+FFFD;
 *  - a letter right after a letter of another script (Han, kana and Hangul count as one: Japanese mixes them);
 *  - a punctuation mark or symbol right after a different one (a dot leader repeats one; "…)." is rare).
 * Over the 80 real-world files of ../shared/eval (Chinese, Japanese, Arabic, Hebrew, Thai, Greek, formulas, forms,
 * tables of contents) no page with text passes 7 % (Thai, 6.4 %); the mojibake pages measured are at 39 and 44 %.
 */

const ODD_SHARE = 0.2;
/** Fewer characters than this say too little either way. */
const MIN_CHARS = 20;

const SCRIPTS = [
  'Latin', 'Greek', 'Cyrillic', 'Armenian', 'Hebrew', 'Arabic', 'Syriac', 'Thaana', 'Nko', 'Devanagari', 'Bengali',
  'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Thai', 'Lao', 'Tibetan',
  'Myanmar', 'Georgian', 'Ethiopic', 'Cherokee', 'Canadian_Aboriginal', 'Khmer', 'Mongolian', 'Ol_Chiki',
  'Meetei_Mayek', 'Tifinagh', 'Yi', 'Javanese', 'Coptic',
] as const;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}ー]/u;
/** One capture group per script: the index of the group that matched names it. */
const SCRIPT = new RegExp(SCRIPTS.map((s) => `(\\p{Script=${s}})`).join('|'), 'u');
const scriptCache = new Map<number, string>();

function scriptOf(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp < 0x80) return 'Latin';
  let script = scriptCache.get(cp);
  if (script === undefined) {
    const m = SCRIPT.exec(ch);
    // A letter of a script not listed is told apart by its 256-code-point block.
    script = CJK.test(ch) ? 'CJK' : m ? SCRIPTS[m.findIndex((g, i) => i > 0 && g !== undefined) - 1]! : `block ${cp >> 8}`;
    scriptCache.set(cp, script);
  }
  return script;
}

/** True when `text` (one page's strings from pdf.js, before any cleaning) reads as mojibake. */
export function isGarbled(text: string): boolean {
  let total = 0;
  let odd = 0;
  let letter: string | undefined;
  let mark: string | undefined;
  for (const ch of text) {
    if (/\s/u.test(ch)) {
      letter = mark = undefined;
      continue;
    }
    total++;
    if (/\p{M}/u.test(ch)) continue; // a combining mark belongs to the letter before it
    if (/[\p{Cc}\p{Co}\ufffd]/u.test(ch)) {
      odd++;
      letter = mark = undefined;
    } else if (/\p{L}/u.test(ch)) {
      const script = scriptOf(ch);
      if (letter !== undefined && script !== letter) odd++;
      letter = script;
      mark = undefined;
    } else if (/[\p{P}\p{S}]/u.test(ch)) {
      if (mark !== undefined && ch !== mark) odd++;
      mark = ch;
      letter = undefined;
    } else {
      letter = mark = undefined;
    }
  }
  return total >= MIN_CHARS && odd > ODD_SHARE * total;
}
