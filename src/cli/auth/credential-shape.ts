/**
 * The shapes of the credentials a docsearch server issues, checked before one is put in a header: a key copied in its
 * masked form (`dsk_rRIh…l5Pk`, as Settings lists it) or with a typographic quote would otherwise fail inside fetch
 * ("Cannot convert argument to a ByteString") and read as a network failure. Duplicated from src/auth/api-keys.ts
 * and src/core/secrets.ts on purpose: cli/ talks HTTP only.
 */
const API_KEY = /^dsk_[0-9A-Za-z]{43}$/;
/** OAuth access and refresh tokens: 32 random bytes as lowercase hex. */
const OAUTH_TOKEN = /^[0-9a-f]{64}$/;

/** One character as a person can recognise it: itself when visible, else its code point. */
function describeChar(ch: string): string {
  if (ch === ' ') return 'a space';
  const cp = ch.codePointAt(0)!;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return /[\p{L}\p{N}\p{P}\p{S}]/u.test(ch) ? `'${ch}'` : hex;
}

/**
 * Why `token` cannot be a docsearch credential, in words ("it contains '…'"), or null when its shape is right.
 * Only the shape: whether the server knows it is the server's to say.
 */
export function credentialShapeProblem(token: string): string | null {
  if (API_KEY.test(token) || OAUTH_TOKEN.test(token)) return null;
  const bad = [...token].find((ch) => !/[0-9A-Za-z_]/.test(ch));
  if (bad !== undefined) return `it contains ${describeChar(bad)}`;
  if (token.startsWith('dsk_')) return `an API key is dsk_ and 43 letters and digits; this one has ${token.length - 4} after dsk_`;
  return 'an API key starts with dsk_, an access token is 64 hexadecimal digits';
}

/** What to do about a key that is not whole: the one place it is shown in full is when it is made. */
export const PASTE_HINT = 'paste the whole key, as shown once when it was created (dsk_ and 43 letters and digits); the Settings page lists only its first and last characters';
