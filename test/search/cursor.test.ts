/** Page cursors: sealed (nothing readable inside), bound to the user and to the search they came from. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec, fingerprint, searchDigest } from '../../src/search/cursor.js';
import type { SearchQuery } from '../../src/search/query.js';

const query: SearchQuery = { userId: 'usr_a', scope: ['prj_a'], query: 'standard deduction', limit: 10, mode: 'hybrid', rerank: true, group: 'none', passagesPerDocument: 3 };
const codec = new CursorCodec(randomBytes(32));
const digest = searchDigest(query);
const state = { asOf: 1_700_000_000_000, shown: ['doc_secretid00000000000000:7', 'doc_other:0'].map(fingerprint) };

describe('search cursors', () => {
  it('round-trips the page state for the same user and search', () => {
    const c = codec.encode('usr_a', digest, state);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode('usr_a', digest, c)).toEqual(state);
    // The first page's cursor (nothing shown yet) and a long one (1,200 results shown).
    expect(codec.decode('usr_a', digest, codec.encode('usr_a', digest, { asOf: 1, shown: [] }))).toEqual({ asOf: 1, shown: [] });
    const long = { asOf: Date.now(), shown: Array.from({ length: 1200 }, (_, i) => fingerprint(`doc_x:${i}`)) };
    const sealed = codec.encode('usr_a', digest, long);
    expect(sealed.length).toBeLessThan(10_000);
    expect(codec.decode('usr_a', digest, sealed)).toEqual(long);
  });

  it('shows nothing of what it holds', () => {
    const c = codec.encode('usr_a', digest, state);
    const bytes = Buffer.from(c, 'base64url').toString('latin1');
    const plainPrint = Buffer.alloc(4);
    plainPrint.writeUInt32BE(state.shown[0]!);
    for (const secret of ['secretid', 'standard', plainPrint.toString('latin1')]) expect(bytes).not.toContain(secret);
    // Two cursors for the same page differ (random IV), so equal pages cannot be told apart either.
    expect(codec.encode('usr_a', digest, state)).not.toBe(c);
  });

  it("does not open for another user, another search, a tampered byte or another server's key", () => {
    const c = codec.encode('usr_a', digest, state);
    expect(() => codec.decode('usr_b', digest, c)).toThrow('body.cursor: not a cursor this server issued to you');
    expect(() => codec.decode('usr_a', searchDigest({ ...query, query: 'itemized deductions' }), c)).toThrow('body.cursor: belongs to another search');
    expect(() => codec.decode('usr_a', searchDigest({ ...query, group: 'document' }), c)).toThrow('belongs to another search');
    expect(() => codec.decode('usr_a', searchDigest({ ...query, projectIds: ['prj_x'] }), c)).toThrow('belongs to another search');
    const bytes = Buffer.from(c, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    expect(() => codec.decode('usr_a', digest, bytes.toString('base64url'))).toThrow('not a cursor this server issued to you');
    expect(() => new CursorCodec(randomBytes(32)).decode('usr_a', digest, c)).toThrow('not a cursor this server issued to you');
    for (const junk of ['x', 'not base64!', '', Buffer.from('{"o":0}').toString('base64url')]) {
      expect(() => codec.decode('usr_a', digest, junk)).toThrow('not a cursor this server issued to you');
    }
  });

  it('ignores the page size and the order of filter ids', () => {
    expect(searchDigest({ ...query, limit: 50 })).toEqual(digest);
    expect(searchDigest({ ...query, projectIds: ['b', 'a'] })).toEqual(searchDigest({ ...query, projectIds: ['a', 'b'] }));
  });

  it('fingerprints ids as FNV-1a 32', () => {
    // Reference values of FNV-1a 32 (http://www.isthe.com/chongo/tech/comp/fnv/).
    expect(fingerprint('')).toBe(0x811c9dc5);
    expect(fingerprint('a')).toBe(0xe40c292c);
    expect(fingerprint('foobar')).toBe(0xbf9cf968);
  });
});
