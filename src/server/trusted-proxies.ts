import type { Middleware } from 'koa';
import ipaddr from 'ipaddr.js';

/**
 * `--trust-proxy`: true trusts the X-Forwarded-* headers of whoever connects; a list of addresses (and CIDR ranges)
 * trusts them only from those peers — and only those peers may send the trusted sign-in headers
 * (web/trusted-header.ts). The peer is the socket's own address, never a forwarded one.
 */
export type TrustProxy = boolean | string;

const entries = (list: string): string[] => list.split(',').map((e) => e.trim()).filter(Boolean);

/** What is wrong with a list of proxy addresses, or null. */
export function proxyListProblem(list: string): string | null {
  if (entries(list).length === 0) return 'lists no address';
  for (const entry of entries(list)) {
    if (!ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry)) return `${JSON.stringify(entry)} is not an IP address or a CIDR range such as 10.0.0.0/24`;
  }
  return null;
}

/** Whether a socket's peer address is one of the listed proxies (an IPv4-mapped IPv6 address counts as its IPv4). */
export function peerMatcher(list: string): (address: string | undefined) => boolean {
  const ranges = entries(list).map((e): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
    if (e.includes('/')) return ipaddr.parseCIDR(e);
    const ip = ipaddr.process(e);
    return [ip, ip.kind() === 'ipv4' ? 32 : 128];
  });
  return (address) => {
    const bare = address?.replace(/%.*$/, '');
    if (!bare || !ipaddr.isValid(bare)) return false;
    const ip = ipaddr.process(bare);
    return ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits));
  };
}

/** The headers Koa reads when it trusts a proxy (client address, protocol, host). */
const FORWARDED = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

/**
 * With a list: a request from any other peer loses its X-Forwarded-* headers before Koa reads them, so its
 * client address, protocol and host are the connection's own. True or false need nothing here (Koa's `proxy`).
 */
export function forwardedOnlyFromProxies(trust: TrustProxy): Middleware | null {
  if (typeof trust !== 'string') return null;
  const trusted = peerMatcher(trust);
  return (ctx, next) => {
    if (!trusted(ctx.req.socket.remoteAddress)) for (const h of FORWARDED) delete ctx.req.headers[h];
    return next();
  };
}
