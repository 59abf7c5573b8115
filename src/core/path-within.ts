import { isAbsolute, relative, sep } from 'node:path';

/** Whether `inner` is `outer` or lies under it (both resolved, or both real paths). A child named `..x` lies under. */
export function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
