import { describe, expect, it } from 'vitest';
import { secondFactorRequired } from '../../../src/auth/two-factor-policy.js';

describe('--require-2fa', () => {
  it('asks nobody, admins, or everyone for a second factor', () => {
    const admin = { isAdmin: true };
    const member = { isAdmin: false };
    expect([secondFactorRequired('off', admin), secondFactorRequired('off', member)]).toEqual([false, false]);
    expect([secondFactorRequired('admins', admin), secondFactorRequired('admins', member)]).toEqual([true, false]);
    expect([secondFactorRequired('all', admin), secondFactorRequired('all', member)]).toEqual([true, true]);
  });
});
