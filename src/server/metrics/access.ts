/**
 * Who may read GET /metrics (docs/operations.md). The numbers say nothing of anyone's documents, but they do say
 * how busy the service is, what it runs and how it fails, so they are not for the whole internet:
 *
 * - `--metrics-token` set: `Authorization: Bearer <token>` is required (401 without it), on any bind;
 * - `--metrics off`: 404;
 * - `--metrics on` without a token: open to whoever reaches the port (a private network the operator vouches for);
 * - `--metrics auto` (the default) without a token: open only while nothing but this machine can reach it — the
 *   daemon is bound to a loopback address, is not told it sits behind a proxy (`--trust-proxy`) or is published
 *   at another address (`--public-url` naming a host that is not loopback); and per request: it carries no
 *   forwarding header of any common proxy (a proxy on the same machine relays the world to a loopback bind), and
 *   its Host names a loopback address (`127.0.0.1:7411`, `localhost`, `[::1]`), which a page on another site
 *   cannot send: a DNS-rebinding page reaches the port under its own host name — else 404. The absence of
 *   forwarding headers alone proves nothing (a proxy need not add them), hence the configuration checks too.
 */
import { isIP } from 'node:net';
import { AppError } from '../../core/errors.js';
import { safeEqual } from '../../core/secrets.js';

export type MetricsMode = 'auto' | 'on' | 'off';

export type MetricsAccess =
  | { kind: 'off'; why: string }
  /** `localOnly`: only requests that name a loopback host and came through no proxy (auto). */
  | { kind: 'open'; why: string; localOnly: boolean }
  | { kind: 'token'; token: string };

/** A loopback bind: 127.0.0.0/8, ::1 (also as ::ffff:127.x), or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0:){7}1$/.test(h) || /^::ffff:127\./.test(h);
  return false;
}

/** The headers proxies add (or pass on) when they relay a request: any of them means it may come from anywhere. */
export const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via', 'true-client-ip', 'cf-connecting-ip'] as const;

/** The host part of a Host header (`[::1]:7411` → `[::1]`), or null when there is none. */
function hostOf(header: string | undefined): string | null {
  const m = /^(\[[^\]]*\]|[^:]+)(?::\d+)?$/.exec(header?.trim() ?? '');
  return m ? m[1]! : null;
}

export function metricsAccess(config: { metrics: string; metricsToken?: string | undefined; host: string; trustProxy: boolean | string; publicUrl?: string | undefined }): MetricsAccess {
  const mode = config.metrics as MetricsMode;
  if (mode === 'off') return { kind: 'off', why: '--metrics off' };
  if (config.metricsToken) return { kind: 'token', token: config.metricsToken };
  if (mode === 'on') return { kind: 'open', why: '--metrics on', localOnly: false };
  if (!isLoopbackHost(config.host)) return { kind: 'off', why: `bound to ${config.host}, not a loopback address, and no --metrics-token is set` };
  if (config.trustProxy !== false) return { kind: 'off', why: '--trust-proxy says a proxy relays requests here, and no --metrics-token is set' };
  const published = config.publicUrl ? hostOf(URL.canParse(config.publicUrl) ? new URL(config.publicUrl).host : '') : null;
  if (config.publicUrl && !(published && isLoopbackHost(published))) {
    return { kind: 'off', why: `--public-url ${config.publicUrl} says it is reached from elsewhere (a proxy relays requests here), and no --metrics-token is set` };
  }
  return { kind: 'open', why: `bound to loopback address ${config.host}`, localOnly: true };
}

/** How the log's start line describes the access rule. */
export function describeAccess(access: MetricsAccess): string {
  if (access.kind === 'token') return 'served with a bearer token (--metrics-token)';
  return access.kind === 'open' ? `served without credentials (${access.why})` : `not served (${access.why})`;
}

const NOT_SERVED = (): AppError => new AppError('not_found', 'not found');

/** Throws the refusal for a request (404, or 401 with a challenge), or returns when it may read the metrics. */
export function checkMetricsRequest(access: MetricsAccess, headers: { authorization?: string | undefined; forwarded: boolean; host?: string | undefined }): void {
  if (access.kind === 'off') throw NOT_SERVED();
  if (access.kind === 'open') {
    if (!access.localOnly) return;
    const host = hostOf(headers.host);
    if (headers.forwarded || !host || !isLoopbackHost(host)) throw NOT_SERVED();
    return;
  }
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(headers.authorization ?? '');
  if (!match || !safeEqual(match[1]!, access.token)) {
    throw new AppError('unauthorized', 'the metrics need the token set with --metrics-token: send Authorization: Bearer <token>', {
      headers: { 'WWW-Authenticate': 'Bearer realm="docsearch-metrics"' },
    });
  }
}
