/**
 * A lookup table keyed by names that come from outside (a header, a URL, an archive's bytes), without a prototype:
 * looked up in a plain object, `constructor` or `__proto__` finds Object's own properties (a daemon ended by
 * `Content-Encoding: constructor` once; test/server/prototype-keys.test.ts).
 */
export function ownTable<T extends object>(entries: T): Readonly<T> {
  return Object.assign(Object.create(null) as T, entries);
}
