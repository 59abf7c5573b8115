import ipaddr from 'ipaddr.js';

/**
 * Which addresses a client metadata document may not be fetched from (the SSRF guard of
 * client-metadata-fetch.ts). The ranges are ipaddr.js's special-purpose registry (IANA's IPv4 and IPv6
 * special-purpose address registries), so no range math is written here; only the verdict per range is.
 *
 * An IPv6 address that carries an IPv4 address inside it reaches that IPv4 address through a translator or a
 * tunnel (NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32, SIIT ::ffff:0:0:0/96, the
 * deprecated IPv4-compatible ::/96): where the IPv4 part sits depends on the form, so every such address is
 * refused outright rather than judged by what it embeds. Only an IPv4-mapped address (::ffff:a.b.c.d), which a
 * dual-stack socket connects to as the IPv4 address itself, is judged as that IPv4 address.
 */

type Verdict = { what: string; private: boolean };
const always = (what: string): Verdict => ({ what, private: false });
const unlessAllowed = (what: string): Verdict => ({ what, private: true });

const EMBEDS_IPV4 = always('an address that embeds an IPv4 address (NAT64, 6to4, Teredo or IPv4-compatible)');
const RESERVED = always('a reserved address');

/** ipaddr.js range names → verdict; a range not listed (`unicast`) may be fetched from. */
const IPV4: Record<string, Verdict> = {
  unspecified: always('an unspecified address'),
  broadcast: RESERVED,
  multicast: always('a multicast address'),
  linkLocal: always('a link-local address'),
  loopback: unlessAllowed('a loopback address'),
  carrierGradeNat: unlessAllowed('a shared (CGNAT) address'),
  private: unlessAllowed('a private address'),
  reserved: RESERVED,
  as112: RESERVED,
  amt: RESERVED,
};
const IPV6: Record<string, Verdict> = {
  unspecified: always('an unspecified address'),
  linkLocal: always('a link-local address'),
  multicast: always('a multicast address'),
  loopback: unlessAllowed('a loopback address'),
  uniqueLocal: unlessAllowed('a private address'),
  deprecatedSiteLocal: unlessAllowed('a private (site-local) address'),
  rfc6145: EMBEDS_IPV4,
  rfc6052: EMBEDS_IPV4,
  '6to4': EMBEDS_IPV4,
  teredo: EMBEDS_IPV4,
  discard: RESERVED,
  benchmarking: RESERVED,
  amt: RESERVED,
  as112v6: RESERVED,
  deprecatedOrchid: RESERVED,
  orchid2: RESERVED,
  droneRemoteIdProtocolEntityTags: RESERVED,
  segmentRouting: RESERVED,
  reserved: RESERVED,
};

function verdict(address: string): Verdict | null {
  if (!ipaddr.isValid(address)) return always('not an IP address');
  // ipaddr.js reads the deprecated IPv4-compatible "::a.b.c.d" as if it were mapped ("::ffff:a.b.c.d").
  if (/^::\d+\.\d+\.\d+\.\d+$/.test(address)) return EMBEDS_IPV4;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return IPV4[ip.range()] ?? null;
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return IPV4[v6.toIPv4Address().range()] ?? null;
  // ::/96 other than :: and ::1 (which have ranges of their own): IPv4-compatible (RFC 4291 §2.5.5.1), not in the registry.
  if (range === 'unicast' && v6.parts.slice(0, 6).every((p) => p === 0)) return EMBEDS_IPV4;
  return IPV6[range] ?? null;
}

/** Why an address may not be fetched from (e.g. "a loopback address"), or null when it may. */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  const v = verdict(address.replace(/%.*$/, ''));
  return v && !(v.private && allowPrivate) ? v.what : null;
}
