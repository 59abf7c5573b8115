/**
 * What a label's name may be, checked alike by the server's schemas (core/filters.ts LabelName) and by the CLI before
 * it sends anything (without zod, which a client command does not load).
 */
import { codePointCount } from './code-points.js';
import { unsafeTextProblem } from './unsafe-text.js';

export const MAX_LABEL_CHARS = 64;
/** Values a filter or a field takes in one list at most (labels on an upload among them). */
export const MAX_FILTER_VALUES = 100;
/** The most a field of label names separated by commas holds: as many as a document carries, each at its longest. */
export const MAX_LABEL_LIST_CHARS = MAX_FILTER_VALUES * (MAX_LABEL_CHARS + 2);

/** Why the characters of `name` make no label name (controls, bidi formatting, a comma), or undefined. */
export function labelTextProblem(name: string): string | undefined {
  return unsafeTextProblem(name) ?? (name.includes(',') ? 'must not contain a comma' : undefined);
}

/** Why `name` (trimmed) is no label name, or undefined when it is one. */
export function labelNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (codePointCount(name) > MAX_LABEL_CHARS) return `must be at most ${MAX_LABEL_CHARS} characters`;
  return labelTextProblem(name);
}
