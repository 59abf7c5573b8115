/** JSON values nested deeper than this are refused: recursive code further on (validation, logging, SQLite JSON) must not overflow the stack. */
export const MAX_JSON_DEPTH = 32;

/** True when a parsed JSON value nests objects/arrays more than `max` levels deep. Iterative, so any depth is safe to check. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
