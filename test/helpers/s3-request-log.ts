/**
 * An HTTP relay in front of a test's S3 endpoint that notes every request (method and path) before passing it on
 * unchanged, so a test can count what a component asks of the object store; or, for the requests `refuse` picks,
 * answers itself as an overloaded S3 does (503 SlowDown, AWS's documented error body), without passing them on. The Host header travels as the client
 * sent it: SigV4 signs it, and the gateway checks the signature against the header it receives.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';

export interface S3Request {
  method: string;
  /** The path without the query string. */
  path: string;
  query: string;
  /** The Range header, when the request had one (a ranged GET). */
  range?: string;
  /** The relay answered it with a 503 itself (`refuse`). */
  refused?: true;
}

export interface S3RequestLog {
  /** http://127.0.0.1:PORT, to use in place of the store's endpoint. */
  endpoint: string;
  /** Every request since the start or the last `reset()`. */
  requests(): S3Request[];
  reset(): void;
  /** From now on, answers the requests `pick` returns true for with 503 SlowDown; undefined passes all on again. */
  refuse(pick: ((r: S3Request) => boolean) | undefined): void;
  close(): Promise<void>;
}

export async function logS3Requests(target: string): Promise<S3RequestLog> {
  const upstream = new URL(target);
  let seen: S3Request[] = [];
  let refusing: ((r: S3Request) => boolean) | undefined;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    const noted: S3Request = { method: req.method ?? 'GET', path: url.pathname, query: url.search, ...(req.headers.range ? { range: req.headers.range } : {}) };
    seen.push(noted);
    if (refusing?.(noted)) {
      noted.refused = true;
      req.resume();
      const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';
      res.writeHead(503, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests: () => [...seen],
    reset: () => (seen = []),
    refuse: (pick) => (refusing = pick),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
