import { type Html, html } from '../html.js';

/** A language as the library keeps a document's (ISO 639-1, or a longer BCP 47 tag), and nothing else. */
const TAG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * ` lang="de"` on what a document says, so a screen reader reads it in its own language rather than in the page's
 * English (WCAG 3.1.2); nothing when its language is not known ("und", or not told yet).
 */
export const contentLang = (code: string | null | undefined): Html | null => (code && code !== 'und' && TAG.test(code) ? html` lang="${code}"` : null);
