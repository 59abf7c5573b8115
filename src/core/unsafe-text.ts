/**
 * Characters refused in names people read (file names, upload paths, project, key and client names): C0 and C1
 * controls, the invisible bidirectional marks, embeddings, overrides and isolates (with them
 * "report\u202Etxt.exe" displays as "reportexe.txt"), and lone surrogates (not text: they cannot be encoded as
 * UTF-8). One definition, so every way in refuses the same set with the same words.
 */

// eslint-disable-next-line no-control-regex, no-misleading-character-class
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udfff]/u;

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

const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** `value` with each refused character as U+FFFD: for printing text stored before it was refused, or from elsewhere. */
export const printable = (value: string): string => value.replace(UNSAFE_ALL, '\ufffd');
