/**
 * Characters refused in names people read (file names, upload paths, project, key and client names): C0 and C1
 * controls, the invisible bidirectional marks, embeddings, overrides and isolates (with them
 * "report\u202Etxt.exe" displays as "reportexe.txt"), and lone surrogates (not text: they cannot be encoded as
 * UTF-8). One definition, so every way in refuses the same set with the same words. A document's name refuses
 * invisible characters too (`nameTextProblem`).
 */

/** The bidirectional marks (ALM, LRM, RLM), embeddings and overrides (LRE…RLO), and isolates (LRI…PDI). */
const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI}]|[\\ud800-\\udfff]`, 'u');

/**
 * What a document's name refuses besides UNSAFE: what a person cannot see, so two names that read alike are two
 * documents and "in\u00ADvoice.pdf" passes for "invoice.pdf" — format characters (U+200B zero width space, U+FEFF,
 * the soft hyphen, word joiners, tag characters…) and Unicode's other default-ignorable code points (Hangul fillers,
 * U+034F), and the line and paragraph separators U+2028 and U+2029, which break a name's line. Kept: the joiners
 * U+200C and U+200D and the variation selectors, which Persian, Indic scripts and emoji are written with
 * ("می‌خواهم", "👨‍💻", "❤️"), and the format characters that show (the Arabic, Syriac and Kaithi number signs). Other names (projects, labels, keys) and the OAuth consent page's warning on an
 * application's invisible characters (docs/oauth.md) are not changed by it.
 */
const INVISIBLE = '(?![\\p{Join_Control}\\p{Variation_Selector}\\u0600-\\u0605\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u{110bd}\\u{110cd}])[\\p{Cf}\\p{Default_Ignorable_Code_Point}\\u2028\\u2029]';
const UNREADABLE_NAME = new RegExp(`${UNSAFE.source}|${INVISIBLE}`, 'u');
const BIDI_CHAR = new RegExp(`[${BIDI}]`);

function described(m: RegExpExecArray | null): { code: string; kind: string } | undefined {
  if (!m) return undefined;
  const c = m[0].codePointAt(0)!;
  const code = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  const kind =
    c >= 0xd800 && c <= 0xdfff
      ? 'a lone surrogate'
      : c < 0xa0
        ? 'a control character'
        : BIDI_CHAR.test(m[0])
          ? 'a bidirectional formatting character'
          : c === 0x2028
            ? 'a line separator'
            : c === 0x2029
              ? 'a paragraph separator'
              : 'an invisible character';
  return { code, kind };
}

/** The first refused character of `value` as "U+XXXX", with what kind it is; undefined when there is none. */
export const unsafeChar = (value: string): { code: string; kind: string } | undefined => described(UNSAFE.exec(value));

/** Why `value` is refused ("must not contain U+202E (a bidirectional formatting character)"), or undefined. */
export function unsafeTextProblem(value: string): string | undefined {
  const bad = unsafeChar(value);
  return bad && `must not contain ${bad.code} (${bad.kind})`;
}

/**
 * Why `value` is refused as a document's name: unsafeTextProblem's characters and the invisible ones
 * ("must not contain U+200B (an invisible character)"), or undefined. A name someone sends (an upload, a rename) is
 * refused, as controls are, so the sender learns which character.
 */
export function nameTextProblem(value: string): string | undefined {
  const bad = described(UNREADABLE_NAME.exec(value));
  return bad && `must not contain ${bad.code} (${bad.kind})`;
}

const UNREADABLE_NAME_ALL = new RegExp(UNREADABLE_NAME.source, 'gu');

/**
 * A name that came with a file from elsewhere, where nobody can be told of a refusal (an e-mail's attachment, a
 * source's item), without the characters a document's name refuses.
 */
export const readableName = (value: string): string => value.replace(UNREADABLE_NAME_ALL, '');

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
