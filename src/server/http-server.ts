import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../core/logger.js';
import { MAX_QUERY_CHARS } from '../core/search-limits.js';

export interface HttpServer {
  server: Server;
  /**
   * Graceful stop: no new connection and no new request is served from now on (idle keep-alive sockets
   * close at once, a request that arrives on a busy one closes it unanswered), responses in flight carry
   * `Connection: close`, and the requests in flight may finish for up to `graceMs`; after that their
   * sockets are cut. Resolves once every request handler has returned, so nothing still uses the stores.
   */
  drain(graceMs: number, log: Logger): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** A handler still running this long after its socket was cut is logged and no longer waited for. */
const HANDLER_WAIT_MS = 60_000;

/**
 * The request line and headers at most: Node's default 16 KiB, plus room for the web's search address, which carries
 * a query the API takes percent-encoded (12 bytes a character at most: the four UTF-8 bytes of an emoji as %XX each).
 */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024 + MAX_QUERY_CHARS * 12;

/**
 * How long an idle keep-alive connection stays open. HTTP/1.1 gives a client no way to know that a connection it
 * reuses is being closed at that moment: a request sent just then is lost unanswered, and a POST is not retried. So
 * the daemon waits longer than the proxies and clients in front of it keep a connection idle (nginx's upstream
 * `keepalive_timeout` and cloud load balancers: 60 s; undici: 4 s), and they always close first. Node's 5 s
 * default lost requests behind a proxy and from clients whose event loop ran a second late.
 */
export const KEEP_ALIVE_MS = 65_000;

/** How long a connection whose request body was left unread stays open once answered, if nothing more arrives. */
const UNREAD_BODY_LINGER_MS = 5000;

const declaredLength = (req: IncomingMessage): number => Number(req.headers['content-length'] ?? NaN);

/**
 * The daemon's HTTP server around the Koa handler: timeouts, `Expect: 100-continue` and the shutdown drain.
 * `maxBodyBytes` is the largest body any route accepts: a client that asks before sending a larger one is
 * not told to continue, so it never sends it (the route answers 413 from the declared length).
 */
export function serveHttp(handle: Handler, opts: { maxBodyBytes: number }): HttpServer {
  const handlers = new Set<Promise<void>>();
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  const onRequest = (req: IncomingMessage, res: ServerResponse, continueFirst = false) => {
    if (draining) {
      req.socket.destroy();
      return;
    }
    if (continueFirst && !(declaredLength(req) > opts.maxBodyBytes)) res.writeContinue();
    inFlight.add(res);
    // A body left unread (a refusal answered on the headers, or part way): Node discards what still comes, and the
    // connection ends after UNREAD_BODY_LINGER_MS of silence rather than the keep-alive's minute. Not at once: closing a
    // socket with unread bytes resets it, which can lose the answer on its way.
    const socket = req.socket; // req's goes once a route destroys the request
    res.once('finish', () => {
      if (!req.complete && !socket.destroyed) socket.setTimeout(UNREAD_BODY_LINGER_MS);
    });
    res.once('close', () => {
      inFlight.delete(res);
      // The socket of a finished keep-alive response is idle now: close it while draining.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    const running = handle(req, res).finally(() => handlers.delete(running));
    handlers.add(running);
  };
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, (req, res) => onRequest(req, res));
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, true));
  server.on('checkExpectation', refuseExpectation);
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = 60_000;
  server.requestTimeout = 15 * 60_000; // uploads of large files over slow links

  return {
    server,
    async drain(graceMs, log) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), graceMs)));
      if ((await Promise.race([closed.then(() => 'closed' as const), graceOver])) === 'grace') {
        log.warn({ requests: inFlight.size }, 'shutdown grace ran out: closing the connections of requests still in flight');
        server.closeAllConnections();
      }
      clearTimeout(timer);
      const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), HANDLER_WAIT_MS)));
      if ((await Promise.race([Promise.allSettled([...handlers]).then(() => 'done' as const), waited])) === 'late') {
        log.error({ handlers: handlers.size }, 'request handlers still running after the shutdown grace; stopping anyway');
      }
      clearTimeout(timer);
    },
  };
}

/**
 * A request Node's parser refused before any handler saw it (a request line and headers over MAX_REQUEST_HEAD_BYTES, a
 * malformed request, headers too slow): answered in the API's error shape (docs/api.md#errors) instead of Node's
 * bare status line, so that a client learns why. Node's own choice of status is kept.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request_header_fields_too_large', `the request line and headers are over ${MAX_REQUEST_HEAD_BYTES.toLocaleString('en')} bytes together: a URL or a cookie too long?`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request line and headers did not arrive in time']
        : [400, 'invalid_request', 'the request is not well-formed HTTP/1.1'];
  const body = JSON.stringify({ error: { code, message, request_id: randomUUID() } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * An `Expect` other than 100-continue, the one expectation HTTP/1.1 defines (RFC 9110 §10.1.1): refused with a 417 in
 * the API's error shape, where Node answers a bare status line. Before any handler: its body is never read.
 */
function refuseExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code: 'expectation_failed', message: 'the only Expect this server meets is 100-continue: send that or none', request_id: requestId } });
  res.writeHead(417, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    'X-Request-Id': requestId,
    Connection: 'close',
  });
  res.end(body);
}
