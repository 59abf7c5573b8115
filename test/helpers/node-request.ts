import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request through node:http with exactly the headers given, as a browser, proxy or download manager revalidating
 * its copy sends it: fetch() would add `Cache-Control: no-cache` beside If-None-Match, which rightly forbids a 304.
 * With `body`, the bytes exactly as given (a multipart body fetch's FormData could not write).
 */
export function nodeRequest(url: string, headers: Record<string, string>, method = 'GET', body?: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject).end(body);
  });
}
