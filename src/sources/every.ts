/** A source's schedule as people write it: `90s`, `15m`, `1h`, `1d`, or combined (`1h30m`). */
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export const DEFAULT_EVERY = '1h';
/** The longest schedule: a source nobody syncs for longer is better paused. */
export const MAX_EVERY_MS = 30 * 86_400_000;

/** Milliseconds, or null when the text is no duration. */
export function parseEvery(text: string): number | null {
  const parts = text.trim().toLowerCase();
  if (!/^(\d+[smhd])+$/.test(parts)) return null;
  let ms = 0;
  for (const [, n, unit] of parts.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNITS[unit!]!;
  return ms;
}

/** The shortest way to write a schedule back (`3600000` → `1h`, `5400000` → `1h30m`). */
export function formatEvery(ms: number): string {
  let left = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's']) {
    const n = Math.floor(left / UNITS[unit]!);
    if (n > 0) out += `${n}${unit}`;
    left -= n * UNITS[unit]!;
  }
  return out || '0s';
}
