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
    // Entra ID's optional claim counts from Entra ID's issuers only: elsewhere anyone able to set a profile attribute
    // the provider maps to claims could name their own address verified (issue 61, Low 16).
    expect(verified({ xms_edov: true })).toBe(false);
    expect(verified({ xms_edov: 'true' })).toBe(false);
    const entra = (issuer: string, claims: Record<string, unknown>) => identityFromClaims(issuer, { sub: 's', email: 'p@example.org', ...claims }, 'groups').emailVerified;
    const tenant = 'https://login.microsoftonline.com/3f2b0c1d-0000-4000-8000-000000000000/v2.0';
    expect(entra(tenant, { xms_edov: true })).toBe(true);
    expect(entra(tenant, { xms_edov: 'true' })).toBe(true);
    expect(entra(tenant, { xms_edov: false })).toBe(false);
    expect(entra('https://login.microsoftonline.us/3f2b0c1d-0000-4000-8000-000000000000/v2.0', { xms_edov: true })).toBe(true);
    expect(entra('https://sts.windows.net/3f2b0c1d-0000-4000-8000-000000000000/', { xms_edov: true })).toBe(true);
    // Look-alikes are not Entra ID.
    expect(entra('https://login.microsoftonline.com.example.org/t/v2.0', { xms_edov: true })).toBe(false);
    expect(entra('https://evil.example/login.microsoftonline.com/v2.0', { xms_edov: true })).toBe(false);
    expect(entra('http://login.microsoftonline.com/t/v2.0', { xms_edov: true })).toBe(false);
    expect(verified({})).toBe(false);
    expect(verified({ email_verified: false })).toBe(false);
    expect(verified({ email_verified: 'yes' })).toBe(false);
    expect(identityFromClaims('https://idp.example', { sub: 's', email: '  ', email_verified: true }, 'groups')).toMatchObject({ email: null, emailVerified: false });
  });
});
