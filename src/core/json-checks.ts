/**
 * Checks on JSON text that JSON.parse lets through: a key repeated within one object, a `__proto__` key, nesting
 * too deep for the recursive code further on. The REST API's bodies, /mcp and `docsearch mcp`'s lines ask them.
 */

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

/**
 * The first key that is repeated within one object, or `__proto__`, with its path below `root` (`body.metadata.owner`;
 * with root '', `metadata.owner`). JSON.parse keeps the last of two equal keys silently, while a proxy or a client
 * library in front may keep the first: the two would read different requests. Runs on text JSON.parse already
 * accepted, so it only tracks strings and nesting.
 */
export function suspectKey(text: string, root = 'body'): { path: string; problem: string } | null {
  type Frame = { path: string; keys: Set<string> | null; key: string | null; index: number };
  const stack: Frame[] = [];
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const childPath = (f: Frame) => (f.keys ? join(f.path, f.key!) : `${f.path}[${f.index}]`);
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      const top = stack.at(-1);
      stack.push({ path: top ? childPath(top) : root, keys: c === '{' ? new Set() : null, key: null, index: 0 });
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      const top = stack.at(-1)!;
      if (top.keys) expectKey = true;
      else top.index++;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string; // "\u0061" and "a" are the same key
        if (key === '__proto__') return { path: top.path, problem: 'the key "__proto__" is not accepted' };
        if (top.keys.has(key)) return { path: join(top.path, key), problem: 'is given more than once; send each key once' };
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    }
  }
  return null;
}
