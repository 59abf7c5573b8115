/**
 * How long a source's settings may be, in characters as the API counts them (code points): one number for the kinds'
 * option schemas and the web form's `maxlength` (code-points.ts maxlengthFor), which cannot import the kinds.
 */

/** A source's URL, an S3 endpoint, a site's sitemap. */
export const MAX_SOURCE_URL_CHARS = 2000;
/** A user name for a source's server. */
export const MAX_SOURCE_USERNAME_CHARS = 500;
/** A password, token or secret key. */
export const MAX_SOURCE_SECRET_CHARS = 4000;
/** A Git branch, an IMAP folder. */
export const MAX_SOURCE_FOLDER_CHARS = 250;
/** An S3 region. */
export const MAX_S3_REGION_CHARS = 64;
/** An S3 access key ID. */
export const MAX_S3_KEY_ID_CHARS = 256;
/** One include or exclude glob, and how many of each a source takes (a line each in the form). */
export const MAX_GLOB_CHARS = 500;
export const MAX_GLOBS = 100;
/** A schedule ("1h30m"). */
export const MAX_EVERY_CHARS = 20;
