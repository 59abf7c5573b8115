import { credentialShapeProblem, PASTE_HINT } from './auth/credential-shape.js';
import { ApiError, AuthRequiredError, CliError, LOGIN_HINT } from '../terminal/errors.js';
import { refusalText } from '../core/refusal-text.js';
import { Contact, type RetryPolicy } from './request-retry.js';
import { cutOff, networkError, UnreachableError } from './unreachable.js';
import { asShaped, notDocsearch, type WireShape } from './wire-shape.js';
import { boundedText, TooLongAnswer } from './bounded-answer.js';

export { isTransient, networkError, UnreachableError } from './unreachable.js';

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (multipart upload stream) with its own headers. */
  body?: RequestInit['body'] | AsyncIterable<Uint8Array>;
  headers?: Record<string, string>;
  /** Send without the bearer credential (health). */
  anonymous?: boolean;
  signal?: AbortSignal;
  /**
   * Whether the request may be sent again after a failure in flight (with a client that retries): by default
   * GET, HEAD, PUT and DELETE without a streamed body; a POST that changes nothing (a search) says so; a caller
   * with its own way of asking again says not.
   */
  retry?: boolean;
}

/** A request whose answer is read: `shape` says what of it the caller relies on, and types it. */
export type Shaped<T> = RequestOptions & { shape: WireShape<T> };
/** A request whose answer may be read (the implementation side of the overloads). */
type Read = RequestOptions & { shape?: WireShape<unknown> };

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Where the client tells of contact lost (a warning) and regained (a notice). */
export type Notify = (event: 'lost' | 'back', line: string) => void;

export interface ApiClientOptions {
  baseUrl: string;
  /** Resolves the bearer credential lazily (refreshing an OAuth token first when it is about to expire). */
  token?: () => Promise<string>;
  fetch?: typeof fetch;
  userAgent: string;
  /** The hint when the server cannot be reached (default: check --server or DOCSEARCH_URL). */
  unreachableHint?: string;
  /** Ask again what may be asked again when contact is lost (request-retry.ts), telling `notify`; absent: never. */
  retry?: { policy: RetryPolicy; notify: Notify };
  /**
   * How long a request waits for the server's whole answer before it counts as unanswered (DOCSEARCH_TIMEOUT); absent
   * or 0: as long as the HTTP stack does (five minutes to the first byte). Uploads' streamed requests are not limited:
   * sending their files may rightly take longer.
   */
  answerWithinMs?: number;
}

interface ErrorBody {
  error?: { code?: string; message?: string; request_id?: string } | string;
  error_description?: string;
}

/**
 * The one HTTP client of the CLI: base URL, bearer credential, JSON in and out, and API errors
 * turned into CliErrors carrying the server's message and request id. 401 → exit 4 with the login hint.
 */
export class ApiClient {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly contact: Contact | undefined;
  private notify: Notify | undefined;

  constructor(private readonly opts: ApiClientOptions) {
    this.baseUrl = opts.baseUrl;
    this.fetchImpl = opts.fetch ?? fetch;
    this.notify = opts.retry?.notify;
    this.contact = opts.retry && new Contact(opts.baseUrl, opts.retry.policy, (event, line) => this.notify?.(event, line));
  }

  /** The same client without a retry policy: for a caller that rides through lost contact its own way (`--watch`). */
  withoutRetry(): ApiClient {
    return new ApiClient({ ...this.opts, retry: undefined });
  }

  /** Tells of contact lost and regained through `notify` until the returned function is called (a progress board's own lines). */
  routeNotices(notify: Notify): () => void {
    const before = this.notify;
    this.notify = notify;
    return () => {
      this.notify = before;
    };
  }

  /**
   * Runs `attempt` — requests whose bodies it makes afresh each time (an upload's stream), their answers read — again
   * after a failure in flight, as the client's requests that may be asked again are; once without a retry policy.
   */
  retrying<T>(attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.contact ? this.contact.retrying(attempt, signal) : attempt();
  }

  /** Whether `answer` asks again by itself. */
  private replayable(method: string, opts: RequestOptions): boolean {
    const streamed = opts.body !== undefined && typeof opts.body === 'object' && opts.body !== null && Symbol.asyncIterator in opts.body;
    return !streamed && (opts.retry ?? IDEMPOTENT.has(method));
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /**
   * The request's deadline (answerWithinMs) joined to the caller's signal; `expired` tells a deadline passed from the
   * caller's own abort (Ctrl-C), which stays an AbortError; `done` clears both (no timer or listener outlives the
   * request, so a long `--watch` gathers none on its signal).
   */
  private deadline(opts: RequestOptions): { opts: RequestOptions; expired: () => boolean; done: () => void } {
    const ms = this.opts.answerWithinMs;
    const streamed = opts.body !== undefined && typeof opts.body === 'object' && opts.body !== null && Symbol.asyncIterator in opts.body;
    if (!ms || streamed) return { opts, expired: () => false, done: () => {} };
    const ac = new AbortController();
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      ac.abort(new DOMException('no answer in time', 'TimeoutError'));
    }, ms);
    const relay = () => ac.abort(opts.signal!.reason);
    if (opts.signal?.aborted) relay();
    else opts.signal?.addEventListener('abort', relay, { once: true });
    return {
      opts: { ...opts, signal: ac.signal },
      expired: () => late && !opts.signal?.aborted,
      done: () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', relay);
      },
    };
  }

  /** A server that took the connection and did not answer in time (hung, overloaded, a proxy holding the request). */
  private noAnswer(method: string, path: string): UnreachableError {
    const s = Math.round(this.opts.answerWithinMs! / 1000);
    return new UnreachableError(
      `${this.baseUrl} did not answer ${method} ${path} within ${s} s`,
      `no answer within ${s} s`,
      'the server may be hung or overloaded; DOCSEARCH_TIMEOUT sets how many seconds to wait (0: no limit)',
    );
  }

  private async sendWithin(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.opts.userAgent, ...opts.headers };
    if (!opts.anonymous) {
      if (!this.opts.token) throw new AuthRequiredError();
      const token = await this.opts.token();
      // The last guard for every caller: a character fetch cannot put in a header would read as a network failure.
      const problem = credentialShapeProblem(token);
      if (problem) throw new AuthRequiredError(`that is not a valid key (${problem})`, PASTE_HINT);
      headers.authorization = `Bearer ${token}`;
    }
    let body: RequestInit['body'];
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.body !== undefined) body = opts.body as RequestInit['body'];
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path, opts.query), {
        method,
        headers,
        body,
        signal: opts.signal,
        // Streaming request bodies need half-duplex in Node's fetch.
        ...(body && typeof body === 'object' && Symbol.asyncIterator in body ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw networkError(this.baseUrl, err, this.opts.unreachableHint);
    }
    // The server answered: an address that never answered is not asked again, one that did is (request-retry.ts).
    // Contact counts as regained only once a whole answer has come (answerOnce): a server that sends the head of
    // each answer and then drops the connection is still lost, said once.
    if (![502, 503, 504].includes(res.status)) this.contact?.heard();
    if (res.ok) return res;
    const error = res.status === 404 && (await this.isNoRoute(res.clone())) ? this.wrongServerUrl(path) : await apiErrorFrom(res, `${method} ${path}`);
    if (![502, 503, 504].includes(res.status)) this.contact?.answeredNow();
    throw error;
  }

  /**
   * A 404 that no API route gave: docsearch's "no route for …", or a page that is not a docsearch error at all (a
   * proxy, another site). Either way the base URL is wrong, not the id asked for.
   */
  private async isNoRoute(res: Response): Promise<boolean> {
    const text = await boundedText(res).catch(() => '');
    try {
      const body = JSON.parse(text) as ErrorBody;
      const message = typeof body.error === 'object' ? body.error.message : undefined;
      return typeof body.error !== 'object' || /^no route for /.test(message ?? '');
    } catch {
      return true;
    }
  }

  private wrongServerUrl(path: string): CliError {
    const u = new URL(this.baseUrl);
    const root = u.pathname !== '/' && u.pathname !== '' ? ` (did you mean ${u.origin}?)` : '';
    return new CliError(
      `the server URL ${this.baseUrl} looks wrong: it answered 404 for the API path ${path}`,
      undefined,
      `give the server's root address${root}: fix --server, DOCSEARCH_URL, or log in again at the right address with \`docsearch login --server URL\``,
    );
  }

  /**
   * The request's JSON answer as `opts.shape` says (what the caller reads of it: a server that answers otherwise is
   * said not to answer like docsearch); without a shape, `unknown`, for a caller that does not read it. One that may
   * be asked again is, until its answer has come whole.
   */
  json<T>(method: string, path: string, opts: Shaped<T>): Promise<T>;
  json(method: string, path: string, opts?: RequestOptions): Promise<unknown>;
  async json(method: string, path: string, opts: Read = {}): Promise<unknown> {
    return (await this.answer(method, path, opts)).body;
  }

  /** As `json`, with the answer's status (201: made; 200: changed). */
  answer<T>(method: string, path: string, opts: Shaped<T>): Promise<{ status: number; body: T }>;
  answer(method: string, path: string, opts?: RequestOptions): Promise<{ status: number; body: unknown }>;
  answer(method: string, path: string, opts: Read = {}): Promise<{ status: number; body: unknown }> {
    if (!this.replayable(method, opts)) return this.answerOnce(method, path, opts);
    let attempts = 0;
    return this.retrying(async () => {
      try {
        return await this.answerOnce(method, path, opts);
      } catch (err) {
        // A DELETE asked again after a failure in flight finds the thing gone: the first one deleted it (what it
        // answered is lost: one whose answer is read says the thing is gone rather than make one up).
        if (++attempts > 1 && method === 'DELETE' && !opts.shape && err instanceof ApiError && err.status === 404) return { status: 204, body: undefined };
        throw err;
      }
    }, opts.signal);
  }

  private async answerOnce(method: string, path: string, opts: Read): Promise<{ status: number; body: unknown }> {
    // One deadline for the answer's head and its body: a server may stall midway as well as before it.
    const d = this.deadline(opts);
    let res: Response | undefined;
    let text: string;
    try {
      res = await this.sendWithin(method, path, d.opts);
      text = res.status === 204 ? '' : await boundedText(res);
    } catch (err) {
      if (d.expired()) throw this.noAnswer(method, path);
      if (err instanceof TooLongAnswer) throw notDocsearch(`${method} ${path}`, this.baseUrl, err.message);
      if (err instanceof CliError || (err as Error).name === 'AbortError') throw err;
      // The connection went while the answer came (a replica killed mid-response).
      if (res) throw cutOff(this.baseUrl, `${method} ${path}`, err);
      throw networkError(this.baseUrl, err, this.opts.unreachableHint);
    } finally {
      d.done();
    }
    if (![502, 503, 504].includes(res.status)) this.contact?.answeredNow();
    const request = `${method} ${path}`;
    if (!text) {
      if (opts.shape) throw notDocsearch(request, this.baseUrl, 'an empty answer');
      return { status: res.status, body: undefined };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw notDocsearch(request, this.baseUrl, 'the answer is not JSON');
    }
    return { status: res.status, body: opts.shape ? asShaped(body, opts.shape, request, this.baseUrl) : body };
  }

  get<T>(path: string, opts: Shaped<T>): Promise<T>;
  get(path: string, opts?: RequestOptions): Promise<unknown>;
  get(path: string, opts?: Read) {
    return this.json('GET', path, opts);
  }
  post<T>(path: string, json: unknown, opts: Shaped<T>): Promise<T>;
  post(path: string, json?: unknown, opts?: RequestOptions): Promise<unknown>;
  post(path: string, json?: unknown, opts?: Read) {
    return this.json('POST', path, { ...opts, json });
  }
  patch<T>(path: string, json: unknown, opts: Shaped<T>): Promise<T>;
  patch(path: string, json?: unknown, opts?: RequestOptions): Promise<unknown>;
  patch(path: string, json?: unknown, opts?: Read) {
    return this.json('PATCH', path, { ...opts, json });
  }
  delete<T>(path: string, opts: Shaped<T>): Promise<T>;
  delete(path: string, opts?: RequestOptions): Promise<unknown>;
  delete(path: string, opts?: Read) {
    return this.json('DELETE', path, opts);
  }
}

/** Builds the CliError for a non-2xx response from its `{error:{code,message,request_id}}` body. */
export async function apiErrorFrom(res: Response, what: string): Promise<CliError> {
  const text = await boundedText(res).catch(() => '');
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    /* not JSON: a proxy's page, reported by status below */
  }
  const e = typeof body.error === 'object' ? body.error : { code: body.error, message: body.error_description };
  const message = e?.message || `${res.status} ${res.statusText}`.trim();
  const requestId = e?.request_id ?? res.headers.get('x-request-id') ?? undefined;
  const suffix = requestId ? ` (request ${requestId})` : '';
  if (res.status === 401) return new AuthRequiredError(`${what}: ${message}`, LOGIN_HINT);
  if (res.status < 500 && res.status !== 429) {
    // A refusal of what the person asked for: the server's words, without the request line or `body.` field
    // prefixes (`name: must not be empty`); the request id only helps with server failures.
    const plain = refusalText(message);
    // A `forbidden` 403 is the person's role on a project or an admin-only action, which no other credential changes.
    const hint403 = res.status === 403 && e?.code !== 'forbidden' ? 'this credential lacks a scope: log in again, or create an API key with the scopes you need' : undefined;
    return new ApiError(plain, res.status, e?.code ?? `http_${res.status}`, requestId, hint403);
  }
  const hint =
    res.status === 403 ? 'this credential lacks a scope: log in again, or create an API key with the scopes you need'
    : res.status === 429 ? `slow down and retry${res.headers.get('retry-after') ? ` in ${res.headers.get('retry-after')} s` : ''}`
    // A proxy's own page carries no request id: pointing to one that is not there would send the person looking for it.
    : res.status >= 500 ? (requestId ? 'the server failed; its log has details under the request id' : 'the server failed without saying why (no docsearch error, no request id): a proxy in front of it, or its log, may say more')
    : undefined;
  return new ApiError(`${what}: ${message}${suffix}`, res.status, e?.code ?? `http_${res.status}`, requestId, hint);
}
