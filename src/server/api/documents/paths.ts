import { codePointCount } from '../../../core/code-points.js';
import { invalidRequest } from '../../../core/errors.js';
import { bytesProblem, MAX_PATH_BYTES } from '../../../core/storable-text.js';
import { unsafeTextProblem } from '../../../core/unsafe-text.js';

export const MAX_PATH_CHARS = 1024;

/**
 * Why an upload path cannot be a document's, or undefined: it must be relative, `/`-separated, without `.`/`..`
 * segments, control or bidi formatting characters, and fit what the path index holds.
 */
export function pathProblem(p: string): string | undefined {
  if (p.length === 0 || codePointCount(p) > MAX_PATH_CHARS) return `must be 1 to ${MAX_PATH_CHARS} characters`;
  const unsafe = unsafeTextProblem(p) ?? bytesProblem(p, MAX_PATH_BYTES);
  if (unsafe) return unsafe;
  if (p.includes('\\')) return 'must not contain backslashes (use / between folders)';
  if (p.startsWith('/') || p.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) return `must be a relative path like "guides/setup.md" (got "${p}")`;
  return undefined;
}

function checkPath(p: unknown, i: number): string | null {
  if (p === null) return null;
  const bad = (why: string) => invalidRequest(`paths[${i}]: ${why}`);
  if (typeof p !== 'string') throw bad('must be a string or null');
  const problem = pathProblem(p);
  if (problem) throw bad(problem);
  return p;
}

/**
 * The multipart `paths` field: a JSON array with one relative path (or null) per `file` part, in the same
 * order. Absent: no file has a path.
 */
export function parsePaths(raw: string | undefined, fileCount: number): (string | null)[] {
  if (raw === undefined) return Array.from({ length: fileCount }, () => null);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalidRequest('paths: must be a JSON array of relative paths, one per file (could not parse it as JSON)');
  }
  if (!Array.isArray(value)) throw invalidRequest('paths: must be a JSON array of relative paths, one per file');
  if (value.length !== fileCount) throw invalidRequest(`paths: has ${value.length} entries for ${fileCount} file(s); give one per file, in order`);
  const paths = value.map(checkPath);
  const seen = new Set<string>();
  for (const p of paths) {
    if (p === null) continue;
    if (seen.has(p)) throw invalidRequest(`paths: "${p}" is given for more than one file`);
    seen.add(p);
  }
  return paths;
}
