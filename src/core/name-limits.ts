import { codePointCount, cutChars } from './code-points.js';

/**
 * How long the names and descriptions people type may be, in characters as the API counts them (code points): one
 * number for the API's schema and the web field's `maxlength` (code-points.ts maxlengthFor), so the two cannot drift.
 */

/** A project's, group's, API key's, application's or saved search's name, after trimming. */
export const MAX_NAME_CHARS = 100;
/** A project's or group's description. */
export const MAX_DESCRIPTION_CHARS = 2000;
/**
 * A document's name (its file name), after trimming. Characters, not UTF-8 bytes: a name from Windows or macOS
 * (255 UTF-16 units at most) would not fit 255 bytes, while every file system's name fits 255 characters whole.
 */
export const MAX_FILENAME_CHARS = 255;
/** An e-mail address: RFC 5321 (§4.5.3.1.3) leaves 254 for one in its 256-octet path, angle brackets aside. */
export const MAX_EMAIL_CHARS = 254;

/** Most addresses in one bulk invitation: the invite form's box holds as many, each on its line. */
export const MAX_INVITES = 200;

/** A short extension (`.pdf`, `.docx`), kept when a long name is cut so its type still shows. */
const EXTENSION = /\.[^.\s]{1,15}$/;

/**
 * A name that came with a file (an upload's part, a source's item, an e-mail's attachment) cut to what a rename
 * takes, whole characters only, keeping its extension: such names are not typed here, so they are fitted, never
 * refused. Composed (NFC), as a typed name is: a Mac's file names come decomposed (core/name-spellings.ts).
 */
export function fitFilename(given: string): string {
  const name = given.normalize('NFC');
  if (codePointCount(name) <= MAX_FILENAME_CHARS) return name;
  const ext = EXTENSION.exec(name)?.[0] ?? '';
  return cutChars(name.slice(0, name.length - ext.length), MAX_FILENAME_CHARS - codePointCount(ext)) + ext;
}
