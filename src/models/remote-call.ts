/**
 * How every remote provider talks to its service: a per-request timeout, bounded retries with
 * exponential backoff for transient failures (connection refused/reset, timeout, 429, 5xx), and
 * failures turned into ModelError with a message an operator can act on and a `transient` flag the
 * ingest queue uses to decide whether to retry the job later.
 */
import { ModelError } from './errors.js';

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
    const detail = err.body ? `: ${err.body.slice(0, 300)}` : '';
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
  if (isConnectionError(err)) {
    return new ModelError(provider, `${service} not reachable at ${location}`, { transient: true, cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ModelError(provider, `${service} at ${location} failed: ${message}`, { transient: false, cause: err });
}

/** undici reports refused/reset/DNS failures as `TypeError: fetch failed` with the socket error as cause. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code;
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
  if (!res.ok) throw new HttpStatusError(res.status, errorMessage(text));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`answer is not JSON (HTTP ${res.status})`);
  }
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
