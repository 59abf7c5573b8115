/**
 * How long the names and descriptions people type may be, in characters as the API counts them (code points): one
 * number for the API's schema and the web field's `maxlength` (code-points.ts maxlengthFor), so the two cannot drift.
 */

/** A project's, group's, API key's, application's or saved search's name, after trimming. */
export const MAX_NAME_CHARS = 100;
/** A project's or group's description. */
export const MAX_DESCRIPTION_CHARS = 2000;
/** A document's name (its file name), after trimming. */
export const MAX_FILENAME_CHARS = 255;
