import type { z } from 'zod';
import { invalidRequest } from '../../core/errors.js';
import { firstUnstorable } from '../../core/storable-text.js';

/** zod's own wording ("Too small: expected string to have >=1 characters") in plain words; custom messages are kept. */
export function plainMessage(issue: z.core.$ZodIssue): string {
  const custom = !/^(Too small|Too big|Invalid (input|option|string|element|key))/.test(issue.message);
  if (custom) return issue.message;
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    const n = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
    const most = issue.code === 'too_big';
    if (issue.origin === 'string') return !most && n === 1 ? 'must not be empty' : `must be at ${most ? 'most' : 'least'} ${n} character${n === 1 ? '' : 's'}`;
    if (issue.origin === 'array' || issue.origin === 'set') return `must have at ${most ? 'most' : 'least'} ${n} item${n === 1 ? '' : 's'}`;
    return `must be at ${most ? 'most' : 'least'} ${n}`;
  }
  if (issue.code === 'invalid_type') return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  if (issue.code === 'invalid_format') return 'is not in the expected format';
  return issue.message;
}

/**
 * The issue to report: for a value that matched no branch of a union, the issue of the branch it came closest to
 * (one that failed inside the value, not on its type), so `{"$in": "x"}` reads "…$in: must be an array" rather than
 * "invalid input". Paths are made whole.
 */
function closest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const inner = issue.errors
    .map((branch) => branch[0])
    .filter((i): i is z.core.$ZodIssue => i !== undefined && (i.path.length > 0 || i.code !== 'invalid_type') && i.code !== 'invalid_union')
    .sort((a, b) => b.path.length - a.path.length)[0];
  return inner ? { ...inner, path: [...issue.path, ...inner.path] } : issue;
}

/**
 * A query parameter sent more than once where one value is taken (`?limit=1&limit=2`) arrives as an array; say so,
 * rather than "must be a number" of a value the caller wrote as one.
 */
function repeated(where: string, issue: z.core.$ZodIssue, input: unknown): number | null {
  if (where !== 'query' || issue.path.length !== 1 || !['invalid_type', 'invalid_value', 'invalid_union'].includes(issue.code)) return null;
  // A field that takes a list (`labels=a&labels=b`) failed inside the list (past 100 values), not for its repeats.
  if (closest(issue) !== issue) return null;
  const value = (input as Record<PropertyKey, unknown>)[issue.path[0]!];
  return Array.isArray(value) ? value.length : null;
}

/** The field an issue is about, as its message names it: the closest branch's for a union (`body.labels.add`). */
const fieldPath = (where: string, issue: z.core.$ZodIssue): string => [where, ...closest(issue).path.map(String)].join('.');

function describe(where: string, issue: z.core.$ZodIssue, input: unknown): string {
  const times = repeated(where, issue, input);
  const path = fieldPath(where, issue);
  issue = closest(issue);
  if (times !== null) return `${path}: is given ${times} times; send it once`;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys} in ${path}`;
  }
  return `${path}: ${plainMessage(issue)}`;
}

/**
 * Parses input at the edge; the 400 names the offending field, and every issue is in details. A NUL or a lone
 * surrogate anywhere is refused first, whatever the field: PostgreSQL cannot store them and SQLite can, so the two
 * engines would answer differently (REST and MCP both come through here).
 */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query' | 'params'): T {
  const unstorable = firstUnstorable(value, where);
  if (unstorable) {
    const message = `${unstorable.path}: ${unstorable.problem}`;
    throw invalidRequest(message, [{ path: unstorable.path, message }]);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // An unknown field is usually a misspelt one: name it first, before the "required" issue it causes.
  const issues = [...result.error.issues].sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'));
  throw invalidRequest(
    describe(where, issues[0]!, value),
    issues.map((i) => ({ path: fieldPath(where, i), message: describe(where, i, value) })),
  );
}
