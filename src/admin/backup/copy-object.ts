/**
 * One file from one object store into another, through a local temp file, hashed on the way: what a backup
 * copies out of a library and a restore copies back. A restore places nothing whose bytes do not hash to what
 * the manifest says; a backup records the hash of what it read.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { hashingTap } from '../hashing-tap.js';
import type { RateLimit } from './rate-limit.js';

export interface Copied {
  size: number;
  sha256: string;
}

export class ChecksumMismatch extends Error {
  override name = 'ChecksumMismatch';
}

/**
 * Copies `from[fromKey]` to `to[toKey]`; null when there is no such object. With `expect`, bytes that differ from
 * it (size or sha256) are not placed: ChecksumMismatch, before a byte is read when the object's size differs, and
 * as soon as more bytes come than it says. An object already at `toKey` is kept. `signal` (Ctrl-C) stops a copy midway.
 */
export async function copyObject(
  from: ObjectStore,
  fromKey: string,
  to: ObjectStore,
  toKey: string,
  opts: { tmpDir: string; rate?: RateLimit; expect?: Copied; onBytes?: (n: number) => void; signal?: AbortSignal },
): Promise<Copied | null> {
  const src = await from.open(fromKey);
  if (!src) return null;
  const { expect } = opts;
  const mismatch = (size: string) => new ChecksumMismatch(`${from.location}/${fromKey}: ${size}, the manifest says ${expect!.size} bytes hashing to ${expect!.sha256}`);
  if (expect && src.size !== expect.size) {
    src.body.destroy();
    throw mismatch(`${src.size} bytes`);
  }
  const tmp = join(opts.tmpDir, `${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.part`);
  const tap = hashingTap((chunk, seen) => {
    // The size said is checked above; a source that goes on past it (it grew, or lied) is cut off here.
    if (expect && seen > expect.size) throw mismatch(`more than ${expect.size} bytes`);
    opts.onBytes?.(chunk.length);
    return opts.rate?.take(chunk.length);
  });
  try {
    await pipeline(src.body, tap.stream, createWriteStream(tmp, { mode: 0o600 }), ...(opts.signal ? [{ signal: opts.signal }] : []));
    const got = { size: tap.size(), sha256: tap.sha256() };
    if (expect && (got.size !== expect.size || got.sha256 !== expect.sha256)) throw mismatch(`${got.size} bytes hashing to ${got.sha256}`);
    await to.putFileIfAbsent(toKey, tmp);
    return got;
  } finally {
    await rm(tmp, { force: true });
  }
}
