/**
 * Words made of one letter and symbols, which a developer's library is full of: C++, C#, F#, J#, g++. Word runs are
 * letters and digits (scripts.ts `WORD_RUN`), and a single letter says nothing on its own, so without this rule "C++"
 * and "C#" were no word at all, and the same nothing. The letter and its symbols are one form, lower-cased (c++, c#),
 * apart from each other and from the letter alone. Not a single plus (A+, C+: grades and sums more often than names)
 * nor a letter of more than one (Notepad++ is found by "notepad").
 */

/** `++` or `#` right after a letter, not followed by more of them or by a letter (C+++, C#Script: not these names). */
const SYMBOLS = /(?:\+\+|#)(?![+#\p{L}])/uy;

/** How many characters of symbols at `at` in `text` make the one-letter word before it a word of its own; 0 if none. */
export function letterSymbols(text: string, at: number): number {
  const c = text.charCodeAt(at);
  // Asked after every one-letter run: most are followed by neither symbol.
  if (c !== 43 && c !== 35) return 0;
  SYMBOLS.lastIndex = at;
  return SYMBOLS.exec(text)?.[0].length ?? 0;
}
