import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const PAGE = (title: string, text: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title>` +
  `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto"><h1>${title}</h1><p>${text}</p></body></html>`;

export interface LoopbackReceiver {
  /** http://127.0.0.1:<port>/callback — the redirect URI registered for the CLI client (RFC 8252 §7.3). */
  redirectUri: string;
  /** Resolves with the query of the first request to /callback that carries `code` or `error`. */
  callback: Promise<URLSearchParams>;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 (never 0.0.0.0: only this machine may deliver the code) on a port the OS
 * picks, and waits for the browser's redirect. Other paths get a 404 so a stray request
 * (a favicon) cannot end the login.
 */
export async function startLoopbackReceiver(): Promise<LoopbackReceiver> {
  let deliver!: (q: URLSearchParams) => void;
  const callback = new Promise<URLSearchParams>((res) => (deliver = res));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/callback' || !(url.searchParams.has('code') || url.searchParams.has('error'))) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const failed = url.searchParams.has('error');
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
      .end(failed ? PAGE('Login failed', 'Return to your terminal for details.') : PAGE('Logged in', 'docsearch is logged in. You can close this tab and return to your terminal.'));
    deliver(url.searchParams);
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    callback,
    close: () =>
      new Promise<void>((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}
