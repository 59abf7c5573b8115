import type { z } from 'zod';
import { invalidRequest } from '../../core/errors.js';

function describe(where: string, issue: z.core.$ZodIssue): string {
  const path = [where, ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys} in ${path}`;
  }
  return `${path}: ${issue.message}`;
}

/** Parses input at the edge; the 400 names the offending field, and every issue is in details. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query' | 'params'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // An unknown field is usually a misspelt one: name it first, before the "required" issue it causes.
  const issues = [...result.error.issues].sort((a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'));
  throw invalidRequest(
    describe(where, issues[0]!),
    issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: describe(where, i) })),
  );
}
