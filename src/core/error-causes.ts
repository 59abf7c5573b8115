/**
 * An error and the errors it was caused by (`cause`), outermost first: a wrapped error is judged by what is inside
 * it. Stops after `depth` links, so a cycle of causes ends.
 */
export function* errorCauses(err: unknown, depth = 8): Generator<object> {
  for (let e = err, i = 0; e !== null && typeof e === 'object' && i < depth; e = (e as { cause?: unknown }).cause, i++) yield e;
}
