import { parseMoment } from './moment.js';

/**
 * When an API key expires, as its maker asks for it: in a number of days, at a moment, or never. The REST body, the
 * Settings page, `docsearch keys create --expires` and `docsearch users add --key-expires` all say it these ways;
 * the daemon turns it into a moment with its own clock (src/auth/api-keys.ts).
 */
export type KeyExpiry = { days: number } | { at: number } | 'never';

/** The longest lifetime a key may be given (GitHub's fine-grained tokens stop at a year; a self-hoster may want more). */
export const MAX_KEY_DAYS = 3650;

export const DAY_MS = 86_400_000;

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
