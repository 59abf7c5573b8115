/**
 * Characters refused in names people read (file names, upload paths, project, key and client names): C0 and C1
 * controls, the invisible bidirectional marks, embeddings, overrides and isolates (with them
 * "report\u202Etxt.exe" displays as "reportexe.txt"), and lone surrogates (not text: they cannot be encoded as
 * UTF-8). One definition, so every way in refuses the same set with the same words.
 */

/** The bidirectional marks (ALM, LRM, RLM), embeddings and overrides (LRE…RLO), and isolates (LRI…PDI). */
const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI}]|[\\ud800-\\udfff]`, 'u');

/** The first refused character of `value` as "U+XXXX", with what kind it is; undefined when there is none. */
export function unsafeChar(value: string): { code: string; kind: string } | undefined {
  const m = UNSAFE.exec(value);
  if (!m) return undefined;
  const c = m[0].charCodeAt(0);
  const code = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  const kind = c >= 0xd800 && c <= 0xdfff ? 'a lone surrogate' : c < 0xa0 ? 'a control character' : 'a bidirectional formatting character';
  return { code, kind };
}

/** Why `value` is refused ("must not contain U+202E (a bidirectional formatting character)"), or undefined. */
export function unsafeTextProblem(value: string): string | undefined {
  const bad = unsafeChar(value);
  return bad && `must not contain ${bad.code} (${bad.kind})`;
}

/** What terminalSafe escapes: UNSAFE less tab and newline (lone surrogates print as U+FFFD, harmlessly). */
const TERMINAL_UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${BIDI}]`, 'g');

/**
 * Text from documents, the server or other users, made safe to print on a terminal: every C0 and C1 control but tab
 * and newline, and every bidirectional mark, embedding, override and isolate, is shown as its escape (`\x1b`,
 * `\u202e`) instead of acting. A document could otherwise set the window title (OSC 0), write the clipboard
 * (OSC 52), disguise a link (OSC 8), move the cursor over earlier lines, or reverse a line (U+202E). Only for human
 * output: `--json` escapes controls itself and keeps the text exact.
 */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** `value` with each refused character as U+FFFD: for printing text stored before it was refused, or from elsewhere. */
export const printable = (value: string): string => value.replace(UNSAFE_ALL, '\ufffd');
