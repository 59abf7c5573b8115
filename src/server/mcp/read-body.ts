import type { IncomingMessage } from 'node:http';

export class BodyTooLarge extends Error {}

/**
 * Reads a request body of at most `limit` bytes: a declared length over it is refused before anything is read,
 * and a streamed body stops being read the moment it passes the limit, so no client can make the daemon buffer more.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge();
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) throw new BodyTooLarge();
    parts.push(part);
  }
  return Buffer.concat(parts, size);
}
