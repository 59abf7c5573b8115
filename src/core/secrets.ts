import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string from the CSPRNG (randomInt avoids modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** 32 random bytes as 64 lowercase hex chars: the spec's access/refresh token format. */
export function randomHex(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

export function randomUrlToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Every bearer secret we issue carries ≥ 192 bits of entropy, so an unsalted SHA-256 is the right
 * at-rest form: lookups stay indexable and a leaked database reveals nothing usable.
 */
export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time string comparison; unequal lengths compare a digest so timing reveals nothing. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
