/**
 * Text both databases store alike. SQLite keeps any string; PostgreSQL refuses a NUL in text ("invalid byte sequence
 * for encoding UTF8: 0x00"), a lone surrogate is no text at all (UTF-8 cannot encode it: each driver writes U+FFFD
 * in its place), and a btree index entry holds ~2,704 bytes. So every way in refuses the first two with one wording,
 * text read from a document's own bytes is cleaned of them, and an indexed field is bounded in UTF-8 bytes (a
 * character outside ASCII takes 2 to 4), below what its index holds.
 */

/** A NUL, or a surrogate half without its other half (code units: a pair is one character and fine). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `value` cannot be stored ("must not contain U+0000 (a NUL character)"), or undefined. */
export function unstorableProblem(value: string): string | undefined {
  const m = UNSTORABLE.exec(value);
  if (!m) return undefined;
  const c = m[0].charCodeAt(0);
  return c === 0 ? 'must not contain U+0000 (a NUL character)' : `must not contain U+${c.toString(16).toUpperCase()} (a lone surrogate)`;
}

/**
 * The first string in a parsed JSON value (or form) that cannot be stored, as `where.a.0.b` (`a.0.b` without
 * `where`) and why; a key names the object it is in. Iterative: the value's depth is the caller's to bound.
 */
export function firstUnstorable(value: unknown, where = ''): { path: string; problem: string } | undefined {
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = unstorableProblem(v);
      if (problem) return { path, problem };
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const problem = unstorableProblem(k);
        if (problem) return { path, problem: `a key ${problem}` };
        stack.push([child, path ? `${path}.${k}` : k]);
      }
    }
  }
  return undefined;
}

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Text from a document's bytes made storable: NULs left out, a lone surrogate shown as U+FFFD (as UTF-8 would). */
export const storableText = (text: string): string => text.replace(UNSTORABLE_ALL, (c) => (c === '\u0000' ? '' : '\ufffd'));

/** `value` (a document's metadata as its file gives it: JSON-shaped) with every string, keys too, made storable. */
export function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableValue(v)]));
  return value;
}

/**
 * A document's path at most, uploaded or listed by a source: what the (project_id, path) index entry holds (~2,704
 * bytes on PostgreSQL), less room for the project id. Its file name, the path's last part, is in an index too.
 */
export const MAX_PATH_BYTES = 2048;

/** Why `value` is longer than `max` bytes of UTF-8 (what an index entry holds is bytes, not characters), or undefined. */
export function bytesProblem(value: string, max: number): string | undefined {
  const bytes = new TextEncoder().encode(value).length;
  return bytes > max ? `must be at most ${max} bytes in UTF-8 (it is ${bytes}; a character outside ASCII takes 2 to 4)` : undefined;
}
