/**
 * A password check costs the same whatever the account: an account without a password of its own (made by the
 * identity provider, stored as '!') must not answer faster than an unknown e-mail or a wrong password, or the time of
 * a failed sign-in tells which e-mails have one (security.md: unknown e-mails cost the same time as known ones).
 * Timed in-process on the function every sign-in calls, medians of several checks taken in turns; the two cost the
 * same Argon2id pass, and the bound leaves room for a loaded machine (before, '!' was refused in ~3 ms against ~39).
 */
import { describe, expect, it } from 'vitest';
import { hashPassword, unknownUserHash, verifyPassword } from '../../../src/auth/password.js';

/**
 * The median time of each check, measured in rounds that take every check once, in turn: a load that comes and goes
 * (the suite's other worker) weighs on each alike, as it did not when each check's rounds ran one after the other
 * (a clean-clone run measured '!' at 8.7 ms against 20.1 on a passing build).
 */
async function mediansMs(checks: Record<string, () => Promise<boolean>>, rounds = 9): Promise<Record<string, number>> {
  const took: Record<string, number[]> = Object.fromEntries(Object.keys(checks).map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [name, check] of Object.entries(checks)) {
      const started = performance.now();
      expect(await check()).toBe(false);
      took[name]!.push(performance.now() - started);
    }
  }
  return Object.fromEntries(Object.entries(took).map(([k, t]) => [k, t.sort((a, b) => a - b)[Math.floor(rounds / 2)]!]));
}

describe('password checks take the same time for every kind of account', () => {
  it('an account with no password of its own costs what a wrong password and an unknown e-mail cost', async () => {
    const real = await hashPassword('correct horse battery staple');
    await verifyPassword(real, 'warm-up');
    const { wrong, unknown, noPassword } = await mediansMs({
      wrong: () => verifyPassword(real, 'not the password'),
      unknown: async () => verifyPassword(await unknownUserHash(), 'not the password'),
      noPassword: () => verifyPassword('!', 'not the password'),
    });
    expect(noPassword, `no password ${noPassword!.toFixed(1)} ms, wrong ${wrong!.toFixed(1)}, unknown ${unknown!.toFixed(1)}`).toBeGreaterThan(0.5 * Math.min(wrong!, unknown!));
    // And it never matches, whatever is typed.
    expect(await verifyPassword('!', '!')).toBe(false);
    expect(await verifyPassword('!', 'not-a-real-password-only-for-timing')).toBe(false);
  });
});
