import { createHash } from 'node:crypto';
import { safeEqual } from '../../core/secrets.js';

/** RFC 7636 §4.1 / §4.2: verifier and challenge are 43–128 unreserved characters. */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export const isPkceValue = (value: string): boolean => PKCE_VALUE.test(value);

/** BASE64URL(SHA256(ASCII(code_verifier))) — S256 only; `plain` is never accepted. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function verifyS256(verifier: string, challenge: string): boolean {
  return safeEqual(s256(verifier), challenge);
}
