import { randomBase62 } from './secrets.js';

/**
 * Opaque identifiers: a type prefix, a fixed-width time part and randomness. The time part makes
 * ids sort by creation, which keeps cursor pagination stable without a separate sequence.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomBase62(12)}`;
}
