/** "3 minutes ago" on a terminal (gh's tableprinter); exact RFC 3339 through a pipe. */
export function relativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now - then) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  const units: Array<[number, string]> = [
    [60 * 60 * 24 * 365, 'year'],
    [60 * 60 * 24 * 30, 'month'],
    [60 * 60 * 24, 'day'],
    [60 * 60, 'hour'],
    [60, 'minute'],
  ];
  if (s < 45) return future ? 'in a moment' : 'just now';
  for (const [size, name] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      const phrase = `${n} ${name}${n === 1 ? '' : 's'}`;
      return future ? `in ${phrase}` : `${phrase} ago`;
    }
  }
  // 45–59 s: said like every other minute count ("1 minute ago"), never "a minute ago" beside it.
  return future ? 'in 1 minute' : '1 minute ago';
}

