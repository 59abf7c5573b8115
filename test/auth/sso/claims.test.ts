/** What docsearch reads from a provider's claims (src/auth/sso/identity.ts): the e-mail, whether it is verified, the groups. */
import { describe, expect, it } from 'vitest';
import { groupsFromClaim, identityFromClaims } from '../../../src/auth/sso/identity.js';

describe('claims', () => {
  it('reads the groups claim by name or by a dotted path, a name with a dot first', () => {
    expect(groupsFromClaim({ groups: ['a', 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(groupsFromClaim({ groups: 'solo' }, 'groups')).toEqual(['solo']);
    expect(groupsFromClaim({ realm_access: { roles: ['reader', 7, 'writer'] } }, 'realm_access.roles')).toEqual(['reader', 'writer']);
    expect(groupsFromClaim({ 'https://example.org/groups': ['x'], https: { 'example.org/groups': ['y'] } }, 'https://example.org/groups')).toEqual(['x']);
    expect(groupsFromClaim({ sub: '1' }, 'groups')).toBeNull();
    expect(groupsFromClaim({ groups: { a: 1 } }, 'groups')).toBeNull();
    expect(groupsFromClaim({ realm_access: ['not', 'an', 'object'] }, 'realm_access.roles')).toBeNull();
  });

  it('counts an e-mail as verified only when the provider says so', () => {
    const verified = (claims: Record<string, unknown>) => identityFromClaims('https://idp.example', { sub: 's', email: 'p@example.org', ...claims }, 'groups').emailVerified;
    expect(verified({ email_verified: true })).toBe(true);
    expect(verified({ email_verified: 'true' })).toBe(true);
    expect(verified({ xms_edov: true })).toBe(true);
    expect(verified({})).toBe(false);
    expect(verified({ email_verified: false })).toBe(false);
    expect(verified({ email_verified: 'yes' })).toBe(false);
    expect(identityFromClaims('https://idp.example', { sub: 's', email: '  ', email_verified: true }, 'groups')).toMatchObject({ email: null, emailVerified: false });
  });
});
