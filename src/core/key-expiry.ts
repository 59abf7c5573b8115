/**
 * When an API key expires, as its maker asks for it: in a number of days, at a moment, or never. The REST body, the
 * Settings page, `docsearch keys create --expires` and `docsearch users add --key-expires` all say it these ways;
 * the daemon turns it into a moment with its own clock (src/auth/api-keys.ts).
 */
export type KeyExpiry = { days: number } | { at: number } | 'never';

/** The longest lifetime a key may be given (GitHub's fine-grained tokens stop at a year; a self-hoster may want more). */
export const MAX_KEY_DAYS = 3650;

export const DAY_MS = 86_400_000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// RFC 3339 with its offset required: a time without one would mean the reader's zone, which the server can't know.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * A moment as written: a date (`2027-01-31`, from 00:00 UTC that day) or an RFC 3339 timestamp with its offset;
 * null when it is neither, or names a day no calendar has (`2027-02-30`, which Date would roll into March).
 */
export function parseMoment(text: string): number | null {
  const m = DATE.exec(text) ?? TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const midnight = new Date(Date.UTC(year, month - 1, day));
  if (midnight.getUTCFullYear() !== year || midnight.getUTCMonth() !== month - 1 || midnight.getUTCDate() !== day) return null;
  if (m.length === 4) return midnight.getTime();
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

export const EXPIRES_FORMS = '`30d` (days from now), a date such as 2027-01-31, an RFC 3339 timestamp, or `never`';

/** An `--expires` value: `30d`, a date or timestamp, or `never`; throws a message naming the forms otherwise. */
export function parseExpires(text: string): KeyExpiry {
  const value = text.trim();
  if (value.toLowerCase() === 'never') return 'never';
  const days = /^(\d+)d$/i.exec(value);
  if (days) {
    const n = Number(days[1]);
    if (n < 1 || n > MAX_KEY_DAYS) throw new Error(`"${text}" is out of range: a key lasts 1 to ${MAX_KEY_DAYS} days`);
    return { days: n };
  }
  const at = parseMoment(value);
  if (at === null) throw new Error(`"${text}" is not an expiry: give ${EXPIRES_FORMS}`);
  return { at };
}
