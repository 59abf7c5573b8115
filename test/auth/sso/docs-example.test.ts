/**
 * docs/sso.md's OpenID Connect example is what people paste (Low 31): it must not admit every account the provider
 * signs in, and every flag it names must be one `serve` takes; what it says of second factors is what the gate does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { passedSecondFactor } from '../../../src/auth/web-sessions.js';
import { OPTIONS } from '../../../src/server/config.js';
import { REPO } from '../../helpers/daemon.js';

describe("docs/sso.md's OpenID Connect example", () => {
  const doc = readFileSync(join(REPO, 'docs', 'sso.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## OpenID Connect'));
  const example = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  const flags = [...example.matchAll(/(?<=\s)--([a-z0-9-]+)/g)].map((m) => m[1]!);

  it('limits who gets an account (allowed domains or a required group)', () => {
    expect(flags.some((f) => f === 'sso-allowed-domains' || f === 'sso-required-group'), example).toBe(true);
  });

  it('names only flags serve takes', () => {
    const known = new Set<string>(OPTIONS.map((o) => o.name));
    expect(flags.filter((f) => !known.has(f))).toEqual([]);
  });

  it('says what a provider sign-in counts as for second factors, as the sign-in gate decides it', () => {
    // server/web/session.ts signedIn asks passedSecondFactor of the session's method (provider-state.test.ts signs in).
    expect(passedSecondFactor('sso+mfa')).toBe(true);
    expect(passedSecondFactor('sso')).toBe(false);
    expect(passedSecondFactor('trusted-header')).toBe(true);
    expect(doc).toContain('A sign-in through the provider passed a second factor when the provider says it asked more than one');
  });
});
