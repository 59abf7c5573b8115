/**
 * How every remote provider talks to its service: a per-request timeout, bounded retries with
 * exponential backoff for transient failures (connection refused/reset, timeout, 429, 5xx), and
 * failures turned into ModelError with a message an operator can act on and a `transient` flag the
 * ingest queue uses to decide whether to retry the job later.
 */
import { ModelError } from './errors.js';
import { cutUnits } from '../core/code-points.js';

export interface RemoteCallOptions {
  /** Names the service in messages, e.g. "Ollama", "OpenAI-compatible endpoint". */
  service: string;
  /** Provider id for ModelError.provider, e.g. "ollama". */
  provider: string;
  /** Where the service lives, for messages (never includes credentials). */
  location: string;
  timeoutMs: number;
  /** Extra attempts after the first for transient failures. */
  retries: number;
  /** First backoff delay; doubles each retry, with ±25% jitter. */
  retryBaseDelayMs: number;
  fetch: typeof fetch;
  /** Caller's cancellation (a search request that went away). Aborts stop retries at once. */
  signal?: AbortSignal;
}

/** Per-provider tuning knobs, each optional (the provider supplies its own defaults). */
export interface RemoteTuning {
  timeoutMs?: number;
  retries?: number;
  retryBaseDelayMs?: number;
  fetch?: typeof fetch;
}

/** Call options from a provider's identity, the operator's tuning and the provider's defaults. */
export function callOptions(
  where: Pick<RemoteCallOptions, 'service' | 'provider' | 'location'>,
  tuning: RemoteTuning,
  defaults: Pick<RemoteCallOptions, 'timeoutMs' | 'retries' | 'retryBaseDelayMs'>,
  signal?: AbortSignal,
): RemoteCallOptions {
  return {
    ...where,
    timeoutMs: tuning.timeoutMs ?? defaults.timeoutMs,
    retries: tuning.retries ?? defaults.retries,
    retryBaseDelayMs: tuning.retryBaseDelayMs ?? defaults.retryBaseDelayMs,
    fetch: tuning.fetch ?? fetch,
    ...(signal ? { signal } : {}),
  };
}

/** An HTTP error answer from the service, before classification. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

/** fetch with the call's timeout and cancellation attached. */
export function timedFetch(opts: RemoteCallOptions): typeof fetch {
  return (input, init) => {
    const signals = [AbortSignal.timeout(opts.timeoutMs)];
    if (opts.signal) signals.push(opts.signal);
    if (init?.signal) signals.push(init.signal);
    return opts.fetch(input, { ...init, signal: AbortSignal.any(signals) });
  };
}

/** Runs `attempt` with retries; `classify` may map service-specific errors before the generic rules. */
export async function callWithRetries<T>(
  opts: RemoteCallOptions,
  attempt: (fetchFn: typeof fetch) => Promise<T>,
  classify?: (err: unknown) => ModelError | undefined,
): Promise<T> {
  const fetchFn = timedFetch(opts);
  for (let n = 0; ; n++) {
    try {
      return await attempt(fetchFn);
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      const error = classify?.(err) ?? classifyRemoteError(opts, err);
      if (!error.transient || n >= opts.retries) throw error;
      const delay = opts.retryBaseDelayMs * 2 ** n * (0.75 + Math.random() * 0.5);
      await sleep(delay, opts.signal);
    }
  }
}

export function classifyRemoteError(opts: RemoteCallOptions, err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  const { service, provider, location } = opts;
  const name = err instanceof Error ? err.name : '';
  if (name === 'TimeoutError') {
    return new ModelError(provider, `${service} at ${location} did not answer within ${opts.timeoutMs} ms`, {
      transient: true,
      cause: err,
    });
  }
  if (err instanceof HttpStatusError) {
    const detail = err.body ? `: ${cutUnits(err.body, 300)}` : '';
    if (err.status === 401 || err.status === 403) {
      return new ModelError(provider, `${service} at ${location} rejected the credentials (HTTP ${err.status})${detail}`, {
        transient: false,
        cause: err,
      });
    }
    const transient = err.status === 429 || err.status >= 500;
    return new ModelError(provider, `${service} at ${location} answered HTTP ${err.status}${detail}`, {
      transient,
      cause: err,
    });
  }
  const tls = tlsFailure(err);
  if (tls) return new ModelError(provider, `${service} at ${location}: ${tls}`, { transient: false, cause: err });
  if (isConnectionError(err)) {
    return new ModelError(provider, `${service} not reachable at ${location}`, { transient: true, cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ModelError(provider, `${service} at ${location} failed: ${message}`, { transient: false, cause: err });
}

/** The socket or TLS error code under undici's `TypeError: fetch failed` (its cause), or on the error itself. */
function errorCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = cause?.code ?? (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * What to tell the operator when the TLS handshake failed: the server was reached, so "not reachable" would send
 * them to the network. OpenSSL's verification codes (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT,
 * SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_VERIFY_LEAF_SIGNATURE, …), Node's host name check, and OpenSSL's own
 * ERR_SSL_* (e.g. a plain-http server behind an https:// URL).
 */
function tlsFailure(err: unknown): string | undefined {
  const code = errorCode(err);
  if (!code) return undefined;
  if (/^ERR_SSL_(WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST)$/.test(code)) {
    return `the TLS handshake failed (${code}) — is it serving https on that port? If it speaks plain http, use an http:// URL`;
  }
  // OpenSSL's own ERR_SSL_* messages are long internal strings; the code says it (e.g. a client certificate required).
  if (code.startsWith('ERR_SSL_')) return `the TLS handshake failed (${code})`;
  const message = (err as { cause?: { message?: unknown } }).cause?.message;
  const detail = typeof message === 'string' ? message.trim() : '';
  const named = `${code}${detail && detail !== code ? `: ${detail}` : ''}`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `its TLS certificate is not valid now (${named}) — renew the server's certificate, or check this machine's clock`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return `its TLS certificate is not for this host name (${named}) — use a URL with a name the certificate lists`;
  }
  if (/CERT|^UNABLE_TO_|^INVALID_CA$|^PATH_LENGTH_EXCEEDED$|^INVALID_PURPOSE$/.test(code)) {
    return (
      `its TLS certificate is not trusted (${named}) — give the server a certificate from a public CA, ` +
      "or start docsearch with NODE_EXTRA_CA_CERTS set to the PEM file of the CA that signed it"
    );
  }
  return undefined;
}

/** undici reports refused/reset/DNS failures as `TypeError: fetch failed` with the socket error as cause; a TLS failure is not one. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error) || tlsFailure(err)) return false;
  const code = errorCode(err);
  if (code && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_SOCKET)$/.test(code)) {
    return true;
  }
  return err.name === 'TypeError' && err.message === 'fetch failed';
}

/** POSTs JSON and returns the parsed JSON answer; non-2xx becomes HttpStatusError. */
export async function postJson(
  fetchFn: typeof fetch,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new HttpStatusError(res.status, withoutCredential(errorMessage(text), headers));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`answer is not JSON (HTTP ${res.status})`);
  }
}

/** A service's answer without the bearer credential we sent: some servers quote the key they refuse. */
function withoutCredential(text: string, headers: Record<string, string>): string {
  const credential = /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1];
  return credential ? text.replaceAll(credential, '[redacted]') : text;
}

/** The service's own error message when it sent `{error: ...}` (OpenAI, Ollama, Cohere shapes), else the text. */
function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = parsed.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
    if (typeof parsed.message === 'string') return parsed.message;
    if (typeof parsed.detail === 'string') return parsed.detail;
    return '';
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim();
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
