/**
 * A moment as people write it in a query or a body: a day (`2026-03-31`, 00:00 UTC) or an RFC 3339 time with its
 * offset (a time without one would mean the writer's zone, which the server can't know).
 */
export const MOMENT = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/;

const DAY_MS = 86_400_000;

/** Whether the day of a text MOMENT matches is in the calendar: not `2026-02-30` (Date.parse rolls it into March), nor year 0000. */
function realDay(text: string): boolean {
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  // Date.UTC reads years 0–99 as 1900–1999: the same leap years but for year 0, refused anyway.
  return y > 0 && m >= 1 && m <= 12 && new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
}

/**
 * Epoch milliseconds of a text MOMENT matches (digits past the millisecond dropped), or null when its day is not
 * real (realDay) or its time is none a clock shows: hour 24 (which Date.parse reads as the next day's 00:00), minute
 * or second 60 (a leap second), an offset past ±23:59.
 */
export function momentOf(text: string): number | null {
  if (!realDay(text)) return null;
  if (text.length === 10) return Date.parse(`${text}T00:00:00Z`);
  const ms = Number(text.slice(11, 13)) > 23 ? NaN : Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/** What a written moment covers, in the whole milliseconds times are kept in. */
export interface MomentSpan {
  /** The first whole millisecond at or after its start. */
  from: number;
  /** The first whole millisecond after it: a day's next 00:00 UTC; a time's millisecond plus one. */
  to: number;
}

/**
 * The span of a moment, for bounds to mean what a person means by them: at or after it and before it compare with
 * `from`; at or before it and after it with `to` (so `2025-01-31` takes in the whole of that day). A time with digits
 * past the millisecond starts at the next one: no millisecond before the moment is at or after it. Null for a text
 * that is no moment.
 */
export function momentSpan(text: string): MomentSpan | null {
  const ms = parseMoment(text);
  if (ms === null) return null;
  if (text.length === 10) return { from: ms, to: ms + DAY_MS };
  const beyondMs = /\.\d{3}(\d+)/.exec(text)?.[1] ?? '';
  return { from: /[1-9]/.test(beyondMs) ? ms + 1 : ms, to: ms + 1 };
}

/** What the server's schemas and the CLI's flags alike say of a text that is no moment. */
export const MOMENT_FORM = 'must be a date (2026-03-31) or an RFC 3339 time (2026-03-31T12:00:00Z)';
const NOT_A_REAL_DATE = 'is not a real date';
const NOT_A_REAL_TIME = 'is not a real time (hours 00–23, minutes and seconds 00–59, offsets within ±23:59)';

/** Why `text` is no moment (MOMENT_FORM, NOT_A_REAL_DATE, NOT_A_REAL_TIME), or undefined when it is one. */
export function momentProblem(text: string): string | undefined {
  if (!MOMENT.test(text)) return MOMENT_FORM;
  if (!realDay(text)) return NOT_A_REAL_DATE;
  return momentOf(text) === null ? NOT_A_REAL_TIME : undefined;
}

/** A moment as written (see MOMENT), or null when it is not one. */
export const parseMoment = (text: string): number | null => (MOMENT.test(text) ? momentOf(text) : null);

const AGO_UNITS_MS = { h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS } as const;

/** The relative forms a person types at a terminal, as a flag's help and errors name them. */
export const RELATIVE_MOMENT_FORMS = 'a time ago (12h, 7d, 2w), today or yesterday (UTC days)';

/**
 * A relative moment (`12h`, `7d`, `2w` ago; `today`, `yesterday` as UTC days, as a written date is read) as the
 * absolute moment text the filters take, at `now`; undefined for any other text. The CLI's convenience: a saved search
 * keeps the moment it resolves to, so it is not taken there (src/cli/commands/shared/filter-flags.ts).
 */
export function relativeMoment(text: string, now: number): string | undefined {
  const word = text.trim().toLowerCase();
  if (word === 'today' || word === 'yesterday') return new Date(now - (word === 'today' ? 0 : DAY_MS)).toISOString().slice(0, 10);
  const ago = /^(\d{1,5})([hdw])$/.exec(word);
  return ago ? new Date(now - Number(ago[1]) * AGO_UNITS_MS[ago[2] as keyof typeof AGO_UNITS_MS]).toISOString() : undefined;
}

