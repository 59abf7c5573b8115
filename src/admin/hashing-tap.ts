/**
 * A pass-through stream that hashes (sha256) and counts what flows through it: how backup, restore and migrate
 * check a copied file without reading it twice. `each` runs per chunk before it is passed on (progress, a rate limit,
 * a size limit: what it throws ends the stream), with the bytes seen so far, that chunk included.
 */
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';

export interface HashingTap {
  stream: Transform;
  /** Bytes seen so far. */
  size(): number;
  /** The sha256 (hex) of everything seen; call once the stream has ended. */
  sha256(): string;
}

export function hashingTap(each?: (chunk: Buffer, seen: number) => Promise<void> | void): HashingTap {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      let waited;
      try {
        waited = each?.(chunk, size);
      } catch (err) {
        return done(err as Error);
      }
      hash.update(chunk);
      if (!waited) return done(null, chunk);
      waited.then(() => done(null, chunk), done);
    },
  });
  return { stream, size: () => size, sha256: () => hash.digest('hex') };
}
