/**
 * Synchronous work over many items, done in turns. Each item runs whole, but once a turn has held the event loop
 * `turnMs`, the loop gets a turn (setImmediate) before the next item: requests that arrived meanwhile (another user's
 * search) are served between items instead of after all of them. Keyword analysis of a slice of 64 chunks of a
 * script without spaces (kana, Thai: ICU segmentation) held the daemon's loop ~0.25 s in one piece.
 */
export const TURN_MS = 50;

export async function mapInTurns<T, R>(items: readonly T[], fn: (item: T, index: number) => R, turnMs = TURN_MS): Promise<R[]> {
  const out: R[] = [];
  let turn = performance.now();
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && performance.now() - turn >= turnMs) {
      await new Promise((resolve) => setImmediate(resolve));
      turn = performance.now();
    }
    out.push(fn(items[i]!, i));
  }
  return out;
}
