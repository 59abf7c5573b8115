import { z } from 'zod';
import { foldAscii } from '../../../core/name-order.js';
import { invalidRequest } from '../../../core/errors.js';
import { LabelName, MAX_FILTER_VALUES } from '../../../core/filters.js';
import { plainMessage } from '../validate.js';

/**
 * A list of label names on the wire: each a LabelName, at most MAX_FILTER_VALUES, duplicates (any case) once, in the
 * spelling given first, as the store makes a missing label (docs/api.md#labels): `Foo,foo` is `Foo`.
 */
export const LabelNames = z
  .array(LabelName)
  .max(MAX_FILTER_VALUES)
  .transform((names) => names.filter((n, i) => names.findIndex((m) => foldAscii(m) === foldAscii(n)) === i));

/**
 * A form field of label names: comma-separated, or a JSON array; none when absent or blank. Any other JSON (an
 * object, `null`, `true`, `false`, a quoted string) is refused rather than taken as a name: it is what a script sends
 * when it serialised the wrong value, and `{"a":1}` or `null` on every document is not what it meant. A label of
 * such a name is sent in an array (`["null"]`); a bare number stays a name (`2024`), as nothing else reads it so.
 * A refusal names the field (`labels: …`, `labels[2]: …`), in the message and in `details`.
 */
export function parseLabelField(raw: string | undefined, field: string): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const text = raw.trim();
  const refuse = (path: string, problem: string) => {
    const message = `${path}: ${problem}`;
    return invalidRequest(message, [{ path, message }]);
  };
  const expected = 'must be label names separated by commas, or a JSON array of label names';
  let names: unknown;
  if (text.startsWith('[')) {
    try {
      names = JSON.parse(text);
    } catch {
      throw refuse(field, `${expected} (could not parse it as JSON)`);
    }
  } else {
    const other = otherJson(text);
    if (other) throw refuse(field, `${expected}, not ${other}`);
    names = raw.split(',').filter((n) => n.trim() !== '');
  }
  const parsed = LabelNames.safeParse(names);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => {
    const path = field + i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    const message = `${path}: ${plainMessage(i)}`;
    return { path, message };
  });
  // Bounded: 64 KiB of `[1,1,…]` is 30,000 issues of one kind.
  throw invalidRequest(issues[0]!.message, issues.slice(0, MAX_FILTER_VALUES));
}

/** What `text` is when it is JSON but no list of names (an object, a literal, a string), with how to send it as a name. */
function otherJson(text: string): string | undefined {
  if (text.startsWith('{')) return 'a JSON object';
  if (/^(null|true|false)$/.test(text)) return `JSON ${text} (a label of that name is sent as ["${text}"])`;
  if (!text.startsWith('"')) return undefined;
  try {
    return typeof JSON.parse(text) === 'string' ? 'a JSON string (send ["…"])' : undefined;
  } catch {
    return undefined; // "a","b": names in quotes, not JSON
  }
}
