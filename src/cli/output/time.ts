/** Unit phrases and plurals ("3 minutes ago", "in 1 hour") from Intl; the CLI speaks English throughout. */
const phrase = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

const UNITS: Array<[number, Intl.RelativeTimeFormatUnit]> = [
  [60 * 60 * 24 * 365, 'year'],
  [60 * 60 * 24 * 30, 'month'],
  [60 * 60 * 24, 'day'],
  [60 * 60, 'hour'],
  [60, 'minute'],
];

/** "3 minutes ago" on a terminal (gh's tableprinter); exact RFC 3339 through a pipe. */
export function relativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((then - now) / 1000);
  const s = Math.abs(seconds);
  if (s < 45) return seconds > 0 ? 'in a moment' : 'just now';
  // 45–59 s count as one minute, said like every other minute count ("1 minute ago"), never "a minute ago".
  const [size, unit] = UNITS.find(([size]) => s >= size) ?? UNITS.at(-1)!;
  return phrase.format(Math.sign(seconds) * Math.max(1, Math.floor(s / size)), unit);
}
