/**
 * Where sources may connect: the SSRF rules of client metadata fetches (auth/oauth/client-metadata-fetch.ts), for
 * every connection a source's client library opens, redirects included. Loopback, private and CGNAT addresses are
 * refused unless the operator allows them (`--sources-allow-private`: intranet sources are a main use); link-local
 * (cloud metadata at 169.254.169.254), unspecified, multicast and reserved addresses always. A host name is resolved
 * once per connection and every address it has is checked; the connection goes to the address checked (rebinding
 * between the check and the connect cannot happen). The agents do it for libraries that speak HTTP through Node's
 * agents (WebDAV, S3, the web crawler), so a redirect to another host is checked when it connects; the others
 * (IMAP, git) connect to the address `resolve` returns.
 *
 * Nor may a source read the daemon itself (`ownServer`): its port on a loopback address, on the address it is bound to
 * (every address of the machine when bound to all of them), and its public URL (by name, and by every address that
 * name has, at its port: a proxy there relays to the daemon) are refused whatever the operator allows. Otherwise a
 * source could index what the daemon serves to its own machine without credentials (`/metrics`) or any page of it.
 *
 * Every connection is also bounded in time (`--source-timeout`): a server that accepts it and then says nothing fails
 * the request after that many seconds of silence, never hanging the source's pass. The agents destroy a socket idle
 * that long; the kinds that open their own connections (IMAP, git) give their clients `timeoutMs`.
 */
import ipaddr from 'ipaddr.js';
import { lookup as dnsLookup } from 'node:dns';
import { type AgentOptions, type ClientRequestArgs, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import { refusedAddress } from '../auth/oauth/refused-address.js';

/** `--source-timeout`'s default: a minute of silence. */
export const DEFAULT_SOURCE_TIMEOUT_MS = 60_000;

export class ReachError extends Error {
  override name = 'ReachError';
}

type Created = (err: Error | null, stream: Duplex) => void;

export interface Address {
  address: string;
  family: number;
}

/** Where the daemon listens and is published: the one server every source is kept from. */
export interface OwnServer {
  /** The address it is bound to (`127.0.0.1`, `0.0.0.0`, `::`) and its port. */
  host: string;
  port: number;
  /** `--public-url`, or the bound URL without one. */
  publicUrl: string | null;
}

/** An IP in one spelling: IPv4-mapped IPv6 as IPv4, IPv6 compressed and lower case. */
function canonicalIp(ip: string): string {
  const bare = ip.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  return isIP(bare) ? ipaddr.process(bare).toString() : bare;
}

const isLoopback = (ip: string): boolean => ip.startsWith('127.') || ip === '::1';
const isWildcard = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';
/** Every address of this machine's interfaces (a daemon bound to all of them answers on each). */
const machineAddresses = (): Set<string> => new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => canonicalIp(i.address))));

/** The port a URL connects to: its own, or its scheme's. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  const defaults: Record<string, number> = { 'http:': 80, 'webdav:': 80, 'https:': 443, 'webdavs:': 443, 'git:': 9418, 'imap:': 143, 'imaps:': 993 };
  return defaults[url.protocol] ?? 0;
}

const lookupAll = promisify((host: string, cb: (err: NodeJS.ErrnoException | null, addresses: Address[]) => void) =>
  dnsLookup(host, { all: true, verbatim: true }, cb),
);

const canonicalIpOrName = (host: string): string => (isIP(host.replace(/^\[(.*)\]$/, '$1')) ? canonicalIp(host) : host);

export class Reach {
  readonly httpAgent: HttpAgent;
  readonly httpsAgent: HttpsAgent;

  /**
   * `timeoutMs`: how long a connection may stay silent while a request waits on it. The agents' `timeout` keeps it
   * on every socket, a reused keep-alive one too (Node sets a socket's timeout to the agent's as it hands it out).
   */
  constructor(
    readonly allowPrivate: boolean,
    readonly timeoutMs = DEFAULT_SOURCE_TIMEOUT_MS,
  ) {
    const guard = this;
    const options: AgentOptions = { keepAlive: true, maxSockets: 8, lookup: this.lookup, timeout: timeoutMs };
    // An IP literal never reaches `lookup` (Node connects to it directly), so the agents check it themselves; a name
    // is checked by a lookup that knows the port (the daemon itself is an address and a port).
    this.httpAgent = new (class extends HttpAgent {
      override createConnection(opts: ClientRequestArgs, cb?: Created) {
        return guard.connectChecked(opts, 80, cb, (checked) => super.createConnection(checked));
      }
    })(options);
    this.httpsAgent = new (class extends HttpsAgent {
      override createConnection(opts: ClientRequestArgs, cb?: Created) {
        return guard.connectChecked(opts, 443, cb, (checked) => super.createConnection(checked));
      }
    })(options);
  }

  private own: { port: number; bound: string; publicHost: string | null; publicPort: number } | null = null;

  /** Where the daemon listens and is published, once it does: from then on no source may connect there. */
  ownServer(own: OwnServer): void {
    const published = own.publicUrl && URL.canParse(own.publicUrl) ? new URL(own.publicUrl) : null;
    this.own = {
      port: own.port,
      bound: canonicalIp(own.host),
      publicHost: published ? published.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase() : null,
      publicPort: published ? portOf(published) : 0,
    };
  }

  /**
   * Why `host` (as a URL names it), reached at `addresses` on `port`, is the daemon itself, or null: its port on
   * loopback, on its bound address (or any of the machine's when bound to all), or its public URL's host and port.
   */
  async ownRefusal(host: string, addresses: readonly Address[], port: number): Promise<string | null> {
    const own = this.own;
    if (!own) return null;
    const name = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
    const refuse = (what: string) => `${what}${port ? `, port ${port},` : ''} is this server itself: sources may not read from the server they run in (its pages, its API, its /metrics)`;
    const ips = addresses.map((a) => canonicalIp(a.address));
    if (own.publicHost !== null && port === own.publicPort && canonicalIpOrName(name) === canonicalIpOrName(own.publicHost)) return refuse(`${host} (this server's public URL)`);
    if (port === own.port) {
      const machine = isWildcard(own.bound) ? machineAddresses() : null;
      const hit = ips.find((ip) => isLoopback(ip) || ip === own.bound || machine?.has(ip));
      if (hit !== undefined) return refuse(`${hit}${hit === name ? '' : ` (of ${host})`}`);
    }
    if (own.publicHost !== null && port === own.publicPort) {
      // The public URL's addresses at its port: a proxy there relays to the daemon, under whatever name reached it.
      const published = isIP(own.publicHost) ? [canonicalIp(own.publicHost)] : await lookupAll(own.publicHost).then((list) => list.map((a) => canonicalIp(a.address)), () => [] as string[]);
      const hit = ips.find((ip) => published.includes(ip));
      if (hit !== undefined) return refuse(`${hit}${hit === name ? '' : ` (of ${host})`} (the address of this server's public URL)`);
    }
    return null;
  }

  /** Why a source at `host`:`port` would read this daemon itself, or null (checked when a source is added). */
  async itself(host: string, port: number): Promise<string | null> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await lookupAll(bare).catch(() => [] as Address[]);
    return this.ownRefusal(bare, addresses, port);
  }

  /**
   * An agent's connection, checked: an IP literal here (Node connects to it without a lookup), a name by the lookup
   * given with the port. The socket goes through `cb` once checked.
   */
  private connectChecked(opts: ClientRequestArgs, defaultPort: number, cb: Created | undefined, create: (opts: ClientRequestArgs) => Duplex | null | undefined): Duplex | null | undefined {
    const port = Number(opts.port) || defaultPort;
    const host = String(opts.host ?? opts.hostname ?? '').replace(/^\[(.*)\]$/, '$1');
    if (!isIP(host)) return this.bounded(create({ ...opts, lookup: this.lookupAt(port) } as ClientRequestArgs));
    this.resolve(host, port).then(
      () => {
        let socket: Duplex | null | undefined;
        try {
          socket = this.bounded(create(opts));
        } catch (err) {
          cb?.(err as Error, undefined as never);
          return;
        }
        cb?.(null, socket as Duplex);
      },
      (err: Error) => cb?.(err, undefined as never),
    );
    return undefined;
  }

  /** What a request that timed out says: the clients put it in their own errors. */
  silence(): string {
    return `the server sent nothing for ${this.timeoutMs / 1000} s (--source-timeout)`;
  }

  /** Node only reports an idle socket ('timeout'); a request in flight on it would wait on forever: it is destroyed. */
  private bounded<T extends Duplex | null | undefined>(socket: T): T {
    // With no 'error' listener (none is expected between requests) the error would be thrown: then it goes quietly.
    socket?.on('timeout', () => socket.destroy(socket.listenerCount('error') > 0 ? new ReachError(this.silence()) : undefined));
    return socket;
  }

  /** The reason a host may not be reached, for a message. */
  private refusal(address: string, host: string): string | null {
    const why = refusedAddress(address, this.allowPrivate);
    if (!why) return null;
    const allow = this.allowPrivate ? '' : ' (the server reaches private and loopback addresses only when started with --sources-allow-private)';
    return `${address}${address === host ? '' : ` (of ${host})`} is ${why}: sources may not connect to it${allow}`;
  }

  /**
   * The address to connect to for `host` (a name or an IP literal), after checking every address it has, and, given
   * the port, that it is not the daemon itself.
   */
  async resolve(host: string, port?: number): Promise<Address> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    let addresses: Address[];
    if (isIP(bare)) addresses = [{ address: bare, family: isIP(bare) }];
    else {
      try {
        addresses = await lookupAll(bare);
      } catch (err) {
        throw new ReachError(`the host ${bare} could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    if (addresses.length === 0) throw new ReachError(`the host ${bare} has no address`);
    for (const a of addresses) {
      // Every address: a host with one public and one internal address could be made to connect to either.
      const why = this.refusal(a.address, bare);
      if (why) throw new ReachError(why);
    }
    if (port !== undefined) {
      const own = await this.ownRefusal(bare, addresses, port);
      if (own) throw new ReachError(own);
    }
    return addresses[0]!;
  }

  /** For Node's agents and sockets: `resolve`, in the callback form they call. */
  readonly lookup: LookupFunction = (host, options, callback) => this.lookupAt(undefined)(host, options, callback);

  /** `lookup` for connections to `port`. */
  lookupAt(port: number | undefined): LookupFunction {
    return (host, options, callback) => this.resolveFor(host, port, options, callback);
  }

  private resolveFor(host: string, port: number | undefined, options: Parameters<LookupFunction>[1], callback: Parameters<LookupFunction>[2]): void {
    this.resolve(host, port).then(
      (a) => {
        if ((options as { all?: boolean }).all) (callback as (e: null, a: Address[]) => void)(null, [a]);
        else callback(null, a.address, a.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/**
 * Why no source may ever connect to `host`, said when the source is added rather than at its first pass: an IP
 * literal of a range refused whatever the operator allows (link-local — cloud metadata at 169.254.169.254 —,
 * unspecified, multicast, reserved), or a name every address of which is such (metadata.google.internal). Null when
 * it may be reachable, or the name does not resolve now (the pass says so then). Loopback and private addresses
 * are the operator's choice (`--sources-allow-private`), checked at each connection.
 */
export async function neverReachable(host: string): Promise<string | null> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let addresses: Address[];
  if (isIP(bare)) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await lookupAll(bare);
    } catch {
      return null;
    }
  }
  const refused = addresses.map((a) => ({ a: a.address, why: refusedAddress(a.address, true) }));
  if (refused.length === 0 || refused.some((r) => r.why === null)) return null;
  const first = refused[0]!;
  return `${first.a}${first.a === bare ? '' : ` (of ${bare})`} is ${first.why}: sources may never connect to it`;
}
