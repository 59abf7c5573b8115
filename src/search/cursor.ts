/**
 * Search cursors: what the pages so far have shown, sealed with AES-256-GCM under a server key with the user id as
 * associated data. Sealed, not just signed, because a cursor would otherwise show its search's moment and which
 * results it has seen to whoever it is pasted to; bound to the user, so a cursor used by anyone else does not
 * open (400) and yields nothing of its owner's. It carries a digest of the request it belongs to (query, mode,
 * filters, grouping), so it cannot be replayed against another query.
 *
 * Inside: the moment the first page looked at (documents that became ready later stay out of the later pages,
 * see `DocumentStore.visibleAmong`), and a 32-bit fingerprint of every result shown so far, in the order shown. The
 * next page is the first results of the list not shown yet. A list is recomputed for every page, and a change to
 * the library (a new document shifts BM25's statistics, a deleted one every rank below it) can reorder near-ties; by
 * fingerprints instead of an offset, a page neither repeats a result that moved down nor skips one that moved
 * up. Four bytes a result: 4 KB after 1,000 results, the most a list holds.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { invalidRequest } from '../core/errors.js';
import type { SearchQuery } from './query.js';

export interface CursorState {
  /** The search's moment (wall-clock ms), from its first page. */
  asOf: number;
  /** Fingerprints (`fingerprint`) of the results shown so far, in the order shown. */
  shown: number[];
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DIGEST_BYTES = 16;
const HEADER_BYTES = 1 + DIGEST_BYTES + 8;

/** What a cursor must match: everything that shapes the ordered list (not `limit`, which only cuts it). */
export function searchDigest(q: SearchQuery): Buffer {
  const shape = {
    query: q.query,
    mode: q.mode,
    rerank: q.rerank,
    group: q.group,
    passages: q.group === 'document' ? q.passagesPerDocument : 0,
    projects: q.projectIds ? [...q.projectIds].sort() : null,
    documents: q.documentIds ? [...q.documentIds].sort() : null,
    // Absent rather than null, so a cursor issued before filters existed stays good for a search without them.
    ...(q.filters ? { filters: q.filters } : {}),
  };
  return createHash('sha256').update(JSON.stringify(shape)).digest().subarray(0, DIGEST_BYTES);
}

/**
 * A result's 32-bit fingerprint (FNV-1a over its id's UTF-16 units). Not a security boundary (the cursor is
 * sealed); two results of one list share one with odds of about n²/2³³ (1 in 8,600 for 1,000 results).
 */
export function fingerprint(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const refused = () => invalidRequest('body.cursor: not a cursor this server issued to you, or no longer valid; leave it out to start again from the first page');

export class CursorCodec {
  private readonly key: Buffer;

  /** `secret`: the server's stored random secret (≥ 32 bytes); the cursor key is derived from it. */
  constructor(secret: Buffer) {
    if (secret.length < 32) throw new TypeError('the cursor secret must be at least 32 bytes');
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'docsearch search cursor v1', 32));
  }

  encode(userId: string, digest: Buffer, state: CursorState): string {
    const plain = Buffer.alloc(HEADER_BYTES + 4 * state.shown.length);
    plain.writeUInt8(VERSION, 0);
    digest.copy(plain, 1, 0, DIGEST_BYTES);
    plain.writeBigUInt64BE(BigInt(state.asOf), 1 + DIGEST_BYTES);
    state.shown.forEach((h, i) => plain.writeUInt32BE(h, HEADER_BYTES + 4 * i));
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(userId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The state in `cursor`, or a 400 naming `body.cursor` when it is not one this server issued to this user for this search. */
  decode(userId: string, digest: Buffer, cursor: string): CursorState {
    const bytes = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
    if (bytes.length < IV_BYTES + TAG_BYTES + HEADER_BYTES) throw refused();
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(userId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw refused();
    }
    if (plain.readUInt8(0) !== VERSION || (plain.length - HEADER_BYTES) % 4 !== 0) throw refused();
    if (!plain.subarray(1, 1 + DIGEST_BYTES).equals(digest)) {
      throw invalidRequest('body.cursor: belongs to another search; send it with the same query, filters, mode and grouping as the page it came from');
    }
    const shown: number[] = [];
    for (let at = HEADER_BYTES; at < plain.length; at += 4) shown.push(plain.readUInt32BE(at));
    return { asOf: Number(plain.readBigUInt64BE(1 + DIGEST_BYTES)), shown };
  }
}
