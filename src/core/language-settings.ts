/**
 * What a language setting may be, on an upload, a project or a source, checked alike by the server and by the CLI
 * before it sends anything.
 */

/** A language setting: an ISO 639-1 code (de, zh). */
export const LANGUAGE_SETTING = /^[a-z]{2}$/;

/** A setting of OCR languages ("deu", "deu+eng"): Tesseract codes joined by "+", at most eight; a folder is the operator's alone. */
export const OCR_LANGUAGES_SETTING = /^[a-z]{3}(_[a-z]+)*(\+[a-z]{3}(_[a-z]+)*){0,7}$/;
