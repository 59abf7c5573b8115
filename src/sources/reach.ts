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
 * Every connection is also bounded in time (`--source-timeout`): a server that accepts it and then says nothing fails
 * the request after that many seconds of silence, never hanging the source's pass. The agents destroy a socket idle
 * that long; the kinds that open their own connections (IMAP, git) give their clients `timeoutMs`.
 */
import { lookup as dnsLookup } from 'node:dns';
import { type AgentOptions, type ClientRequestArgs, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
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

const lookupAll = promisify((host: string, cb: (err: NodeJS.ErrnoException | null, addresses: Address[]) => void) =>
  dnsLookup(host, { all: true, verbatim: true }, cb),
);

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
    // An IP literal never reaches `lookup` (Node connects to it directly), so the agents check it themselves.
    this.httpAgent = new (class extends HttpAgent {
      override createConnection(opts: ClientRequestArgs, cb?: Created) {
        return guard.literal(opts, cb) ? undefined : guard.bounded(super.createConnection(opts, cb));
      }
    })(options);
    this.httpsAgent = new (class extends HttpsAgent {
      override createConnection(opts: ClientRequestArgs, cb?: Created) {
        return guard.literal(opts, cb) ? undefined : guard.bounded(super.createConnection(opts, cb));
      }
    })(options);
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

  /** True (and the connection refused through `cb`) when `opts.host` is an IP literal that may not be reached. */
  private literal(opts: ClientRequestArgs, cb: Created | undefined): boolean {
    const host = String(opts.host ?? '').replace(/^\[(.*)\]$/, '$1');
    if (!isIP(host)) return false;
    const why = this.refusal(host, host);
    if (!why) return false;
    process.nextTick(() => cb?.(new ReachError(why), undefined as never));
    return true;
  }

  /** The address to connect to for `host` (a name or an IP literal), after checking every address it has. */
  async resolve(host: string): Promise<Address> {
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
    return addresses[0]!;
  }

  /** For Node's agents and sockets: `resolve`, in the callback form they call. */
  readonly lookup: LookupFunction = (host, options, callback) => {
    this.resolve(host).then(
      (a) => {
        if ((options as { all?: boolean }).all) (callback as (e: null, a: Address[]) => void)(null, [a]);
        else callback(null, a.address, a.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };

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
