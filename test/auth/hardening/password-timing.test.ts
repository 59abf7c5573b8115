/**
 * A password check costs the same whatever the account: an account without a password of its own (made by the
 * identity provider, stored as '!') must not answer faster than an unknown e-mail or a wrong password, or the time of
 * a failed sign-in tells which e-mails have one (security.md: unknown e-mails cost the same time as known ones).
 * Timed in-process on the function every sign-in calls, medians of several checks; the two cost the same Argon2id
 * pass, and the bound leaves room for a loaded machine (before, '!' was refused in ~3 ms against ~39).
 */
import { describe, expect, it } from 'vitest';
import { hashPassword, unknownUserHash, verifyPassword } from '../../../src/auth/password.js';

async function medianMs(check: () => Promise<boolean>, times = 7): Promise<number> {
  const took: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    expect(await check()).toBe(false);
    took.push(performance.now() - started);
  }
  return took.sort((a, b) => a - b)[Math.floor(times / 2)]!;
}

describe('password checks take the same time for every kind of account', () => {
  it('an account with no password of its own costs what a wrong password and an unknown e-mail cost', async () => {
    const real = await hashPassword('correct horse battery staple');
    await verifyPassword(real, 'warm-up');
    const wrong = await medianMs(() => verifyPassword(real, 'not the password'));
    const unknown = await medianMs(async () => verifyPassword(await unknownUserHash(), 'not the password'));
    const noPassword = await medianMs(() => verifyPassword('!', 'not the password'));
    expect(noPassword, `no password ${noPassword.toFixed(1)} ms, wrong ${wrong.toFixed(1)}, unknown ${unknown.toFixed(1)}`).toBeGreaterThan(0.5 * Math.min(wrong, unknown));
    // And it never matches, whatever is typed.
    expect(await verifyPassword('!', '!')).toBe(false);
    expect(await verifyPassword('!', 'not-a-real-password-only-for-timing')).toBe(false);
  });
});
