import { describe, expect, it } from 'vitest';
import { cacheTtlMs } from '../../../src/auth/oauth/client-metadata-fetch.js';
import { refusedAddress } from '../../../src/auth/oauth/refused-address.js';

/** The metadata-document fetcher's address and cache rules, table by table (the fetch itself: cimd.test.ts). */
const EMBEDS = 'an address that embeds an IPv4 address (NAT64, 6to4, Teredo or IPv4-compatible)';

describe('client metadata fetch rules', () => {
  it('classifies addresses; private ones only pass when allowed, special ones never', () => {
    const cases: [string, string | null, string | null][] = [
      // address, refused by default, refused with allow-private
      ['127.0.0.1', 'a loopback address', null],
      ['127.8.9.10', 'a loopback address', null],
      ['::1', 'a loopback address', null],
      ['::ffff:127.0.0.1', 'a loopback address', null],
      ['10.1.2.3', 'a private address', null],
      ['172.16.0.1', 'a private address', null],
      ['172.31.255.255', 'a private address', null],
      ['192.168.1.1', 'a private address', null],
      ['fd12:3456::1', 'a private address', null],
      ['100.64.0.1', 'a shared (CGNAT) address', null],
      ['169.254.169.254', 'a link-local address', 'a link-local address'],
      ['::ffff:169.254.169.254', 'a link-local address', 'a link-local address'],
      ['fe80::1', 'a link-local address', 'a link-local address'],
      ['0.0.0.0', 'an unspecified address', 'an unspecified address'],
      ['::', 'an unspecified address', 'an unspecified address'],
      ['224.0.0.1', 'a multicast address', 'a multicast address'],
      ['ff02::1', 'a multicast address', 'a multicast address'],
      ['255.255.255.255', 'a reserved address', 'a reserved address'],
      ['192.0.2.7', 'a reserved address', 'a reserved address'],
      ['2001:db8::1', 'a reserved address', 'a reserved address'],
      // IPv6 forms that reach an IPv4 address (the security probe's finding 9): refused whatever they embed.
      ['::7f00:1', EMBEDS, EMBEDS],
      ['::808:808', EMBEDS, EMBEDS],
      ['::127.0.0.1', EMBEDS, EMBEDS],
      ['::ffff:0:7f00:1', EMBEDS, EMBEDS],
      ['64:ff9b::7f00:1', EMBEDS, EMBEDS],
      ['64:ff9b::808:808', EMBEDS, EMBEDS],
      ['64:ff9b:1::a00:1', EMBEDS, EMBEDS],
      ['2002:7f00:1::1', EMBEDS, EMBEDS],
      ['2002:808:808::1', EMBEDS, EMBEDS],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', EMBEDS, EMBEDS],
      ['::ffff:8.8.8.8', null, null],
      ['fec0::1', 'a private (site-local) address', null],
      ['fe80::1%eth0', 'a link-local address', 'a link-local address'],
      ['8.8.8.8', null, null],
      ['172.32.0.1', null, null],
      ['100.128.0.1', null, null],
      ['2606:4700:4700::1111', null, null],
    ];
    for (const [address, byDefault, allowingPrivate] of cases) {
      expect(refusedAddress(address, false), address).toBe(byDefault);
      expect(refusedAddress(address, true), address).toBe(allowingPrivate);
    }
  });

  it('caches for max-age within 60 s and 24 h, 5 minutes without one', () => {
    expect(cacheTtlMs(undefined)).toBe(300_000);
    expect(cacheTtlMs('public')).toBe(300_000);
    expect(cacheTtlMs('max-age=600')).toBe(600_000);
    expect(cacheTtlMs('public, max-age=5')).toBe(60_000);
    expect(cacheTtlMs('max-age=999999999')).toBe(86_400_000);
    expect(cacheTtlMs('no-store')).toBe(60_000);
  });
});
