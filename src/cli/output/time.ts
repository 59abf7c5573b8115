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

/** Sizes in binary (IEC) units, as the web library shows them: 1 KiB = 1024 bytes. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  // Moves up a unit also when rounding would show 1024 (1 048 000 bytes is "1.0 MiB", not "1024 KiB").
  while (Math.round(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 9.95 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
