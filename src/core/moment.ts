/**
 * A moment as people write it in a query or a body: a day (`2026-03-31`, 00:00 UTC) or an RFC 3339 time with its
 * offset (a time without one would mean the writer's zone, which the server can't know).
 */
export const MOMENT = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/**
 * Epoch milliseconds of a text MOMENT matches; null when its day exists in no calendar (`2026-02-30`, which
 * Date.parse would roll into March) or its time is not one.
 */
export function momentOf(text: string): number | null {
  const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  return Number.isNaN(ms) || new Date(Date.UTC(y, m - 1, d)).getUTCDate() !== d ? null : ms;
}

/** What the server's schemas and the CLI's flags alike say of a text that is no moment. */
export const MOMENT_FORM = 'must be a date (2026-03-31) or an RFC 3339 time (2026-03-31T12:00:00Z)';
export const NOT_A_REAL_DATE = 'is not a real date';

/** Why `text` is no moment (MOMENT_FORM, NOT_A_REAL_DATE), or undefined when it is one. */
export function momentProblem(text: string): string | undefined {
  if (!MOMENT.test(text)) return MOMENT_FORM;
  return momentOf(text) === null ? NOT_A_REAL_DATE : undefined;
}

/** A moment as written (see MOMENT), or null when it is not one. */
export const parseMoment = (text: string): number | null => (MOMENT.test(text) ? momentOf(text) : null);
