import { z } from 'zod';
import { foldAscii } from '../../../core/name-order.js';
import { invalidRequest } from '../../../core/errors.js';
import { LabelName, MAX_FILTER_VALUES } from '../../../core/filters.js';
import { parseInput } from '../validate.js';

/**
 * A list of label names on the wire: each a LabelName, at most MAX_FILTER_VALUES, duplicates (any case) once, in the
 * spelling given first, as the store makes a missing label (docs/api.md#labels): `Foo,foo` is `Foo`.
 */
export const LabelNames = z
  .array(LabelName)
  .max(MAX_FILTER_VALUES)
  .transform((names) => names.filter((n, i) => names.findIndex((m) => foldAscii(m) === foldAscii(n)) === i));

/** A form field of label names: comma-separated, or a JSON array; none when absent or blank. */
export function parseLabelField(raw: string | undefined, field: string): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  let names: unknown = raw.split(',').filter((n) => n.trim() !== '');
  if (raw.trim().startsWith('[')) {
    try {
      names = JSON.parse(raw);
    } catch {
      throw invalidRequest(`${field}: a JSON array of label names, or names separated by commas`);
    }
  }
  const parsed = LabelNames.safeParse(names);
  if (!parsed.success) return parseInput(z.object({ [field]: LabelNames }), { [field]: names }, 'body')[field] as string[];
  return parsed.data;
}
