/**
 * The authenticator app the two-factor tests play (totp.ts) agrees with RFC 6238 Appendix B — the SHA-1 rows, whose
 * 8-digit codes an app showing 6 digits truncates to their last six (RFC 4226 §5.3: the code is taken modulo 10^6).
 * Without this, the tests' oracle would be the product's own library checking itself.
 */
import { describe, expect, it } from 'vitest';
import { totpCode } from './totp.js';

/** The RFC's SHA-1 seed, the ASCII "12345678901234567890", in base32 as an app's QR code carries it. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('the tests’ authenticator app', () => {
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('at %i s gives the RFC 6238 code %s (its last six digits)', (seconds, rfc) => {
    expect(totpCode(RFC_SECRET, 0, seconds * 1000)).toBe(rfc.slice(-6));
  });
});
