import { z } from 'zod';
import { MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS } from '../../../core/name-limits.js';
import { LANGUAGE_SETTING, OCR_LANGUAGES_SETTING } from '../../../core/language-settings.js';
import { Metadata, readableText } from '../schemas.js';

/** Composed (NFC), as a keyboard types it: one pasted from a Mac's folder name comes decomposed (core/name-spellings.ts). */
export const ProjectName = z
  .string()
  .trim()
  .normalize('NFC')
  .min(1)
  .max(MAX_NAME_CHARS)
  .superRefine(readableText);

export const ProjectDescription = z.string().max(MAX_DESCRIPTION_CHARS);

/** Metadata is a small JSON object: bounded so a project row stays a row. */
export const ProjectMetadata = Metadata.refine((m) => JSON.stringify(m).length <= 16_384, 'must be at most 16 KiB of JSON');

/** The language a project's uploads are analysed in: ISO 639-1. */
export const ProjectLanguage = z.string().regex(LANGUAGE_SETTING, 'must be an ISO 639-1 language code (such as de, zh)');

/** The OCR languages a project's uploads are read in: Tesseract codes joined by "+". */
export const ProjectOcrLanguages = z.string().regex(OCR_LANGUAGES_SETTING, 'must be Tesseract language codes joined by "+" (such as deu, deu+eng, chi_sim)');

/**
 * The language settings a project's uploads get from now on (null clears one: detected / the server's
 * --ocr-languages): the fields of PATCH /projects/{id} and of the web Settings tab's Languages form alike.
 */
export const ProjectLanguageSettings = {
  language: ProjectLanguage.nullable().optional(),
  ocr_languages: ProjectOcrLanguages.nullable().optional(),
};

/** The store's patch for those fields (an absent one is left as it is). */
export function languagePatch(body: { language?: string | null | undefined; ocr_languages?: string | null | undefined }): { language?: string | null; ocrLanguages?: string | null } {
  return { ...(body.language !== undefined ? { language: body.language } : {}), ...(body.ocr_languages !== undefined ? { ocrLanguages: body.ocr_languages } : {}) };
}
