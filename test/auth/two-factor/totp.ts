import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import type { WebClient } from '../../server/web-client.js';

/**
 * The code an authenticator app shows for `secret`, `steps` periods of 30 s from `now` (the server accepts ±1).
 * Checked against RFC 6238's own test vectors in totp-oracle.test.ts, so it is no echo of the product's library.
 */
export function totpCode(secret: string, steps = 0, now = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: now + steps * 30_000 });
}

/**
 * Sets up an authenticator app through Settings → Security as a person does: start, read the key off the page,
 * confirm with the current code. Returns the key and the recovery codes shown once.
 */
export async function enrolTotp(web: WebClient): Promise<{ secret: string; recoveryCodes: string[] }> {
  await web.get('/settings/security');
  expect((await web.post('/settings/security/totp/start', { _csrf: web.csrf })).status).toBe(303);
  const page = await web.get('/settings/security');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.text)?.[1];
  if (!secret) throw new Error(`no key on the page:\n${page.text.slice(0, 1500)}`);
  const done = await web.submit('/settings/security/totp', { _csrf: web.csrf, code: totpCode(secret) });
  expect(done.redirectedFrom?.status).toBe(303);
  const recoveryCodes = [...done.text.matchAll(/<li><code>([0-9a-z-]{19})<\/code><\/li>/g)].map((m) => m[1]!);
  expect(recoveryCodes).toHaveLength(10);
  return { secret, recoveryCodes };
}
