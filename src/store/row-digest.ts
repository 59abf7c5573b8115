/**
 * A checksum of a set of rows that does not depend on their order: each row is hashed (SHA-256 of a canonical
 * encoding of its columns, names included), and the hashes are added up lane by lane (8 × 32 bits, modulo 2^32).
 * Two stores hold the same rows exactly when their sums and row counts agree, however each stored or paged
 * them; a duplicated row changes the sum (unlike XOR), and a sum splits by document and adds back up. It guards
 * a copy against mistakes and damage, not against someone crafting rows to collide.
 */
import { createHash } from 'node:crypto';

/** A column's value as the stores give it: text, numbers, flags, nulls, vectors as float32 arrays, and bytes. */
export type Cell = string | number | boolean | bigint | null | undefined | Float32Array | Uint8Array;

const TAG = { null: 0, string: 1, number: 2, boolean: 3, bigint: 4, float32: 5, bytes: 6 } as const;

/** Encodes rows into one reusable buffer, growing it as needed. */
class RowEncoder {
  private buf = Buffer.alloc(64 * 1024);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  private text(s: string): void {
    const n = Buffer.byteLength(s);
    this.room(5 + n);
    this.buf.writeUInt32LE(n, this.at);
    this.buf.write(s, this.at + 4);
    this.at += 4 + n;
  }

  /** The SHA-256 of the row's columns, given as [name, value] in a fixed order. */
  hash(columns: Iterable<readonly [string, Cell]>): Buffer {
    this.at = 0;
    for (const [name, value] of columns) {
      this.text(name);
      this.room(9);
      if (value === null || value === undefined) this.buf[this.at++] = TAG.null;
      else if (typeof value === 'string') {
        this.buf[this.at++] = TAG.string;
        this.text(value);
      } else if (typeof value === 'number') {
        this.buf[this.at++] = TAG.number;
        this.at = this.buf.writeDoubleLE(value, this.at);
      } else if (typeof value === 'boolean') {
        this.buf[this.at++] = TAG.boolean;
        this.buf[this.at++] = value ? 1 : 0;
      } else if (typeof value === 'bigint') {
        this.buf[this.at++] = TAG.bigint;
        this.at = this.buf.writeBigInt64LE(value, this.at);
      } else {
        this.buf[this.at++] = value instanceof Float32Array ? TAG.float32 : TAG.bytes;
        const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        this.room(4 + bytes.length);
        this.buf.writeUInt32LE(bytes.length, this.at);
        bytes.copy(this.buf, this.at + 4);
        this.at += 4 + bytes.length;
      }
    }
    return createHash('sha256').update(this.buf.subarray(0, this.at)).digest();
  }
}

export class RowDigest {
  rows = 0;
  private readonly sum = new Uint32Array(8);

  /** Adds one row's hash (see rowHasher). */
  addHash(hash: Buffer): void {
    for (let i = 0; i < 8; i++) this.sum[i] = (this.sum[i]! + hash.readUInt32LE(i * 4)) >>> 0;
    this.rows++;
  }

  /** Adds another digest's rows (a document's into its table's). */
  merge(other: RowDigest): void {
    for (let i = 0; i < 8; i++) this.sum[i] = (this.sum[i]! + other.sum[i]!) >>> 0;
    this.rows += other.rows;
  }

  /** The sum as 64 hex characters. */
  hex(): string {
    return Array.from(this.sum, (lane) => lane.toString(16).padStart(8, '0')).join('');
  }

  equals(other: RowDigest): boolean {
    return this.rows === other.rows && this.hex() === other.hex();
  }
}

/** A function that hashes rows ([name, value] pairs in a fixed order), reusing one buffer. */
export function rowHasher(): (columns: Iterable<readonly [string, Cell]>) => Buffer {
  const encoder = new RowEncoder();
  return (columns) => encoder.hash(columns);
}
