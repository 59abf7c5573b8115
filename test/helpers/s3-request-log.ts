/**
 * An HTTP relay in front of a test's S3 endpoint that notes every request (method and path) before passing it on
 * unchanged, so a test can count what a component asks of the object store. The Host header travels as the client
 * sent it: SigV4 signs it, and the gateway checks the signature against the header it receives.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';

export interface S3Request {
  method: string;
  /** The path without the query string. */
  path: string;
  query: string;
}

export interface S3RequestLog {
  /** http://127.0.0.1:PORT, to use in place of the store's endpoint. */
  endpoint: string;
  /** Every request since the start or the last `reset()`. */
  requests(): S3Request[];
  reset(): void;
  close(): Promise<void>;
}

export async function logS3Requests(target: string): Promise<S3RequestLog> {
  const upstream = new URL(target);
  let seen: S3Request[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    seen.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search });
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
