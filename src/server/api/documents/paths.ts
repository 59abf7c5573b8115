import { invalidRequest } from '../../../core/errors.js';
import { bytesProblem, MAX_PATH_BYTES } from '../../../core/storable-text.js';
import { unsafeTextProblem } from '../../../core/unsafe-text.js';

export const MAX_PATH_CHARS = 1024;

/** One upload path: relative, `/`-separated, no `.`/`..` segments, control or bidi formatting characters. */
function checkPath(p: unknown, i: number): string | null {
  if (p === null) return null;
  const bad = (why: string) => invalidRequest(`paths[${i}]: ${why}`);
  if (typeof p !== 'string') throw bad('must be a string or null');
  if (p.length === 0 || p.length > MAX_PATH_CHARS) throw bad(`must be 1 to ${MAX_PATH_CHARS} characters`);
  const unsafe = unsafeTextProblem(p) ?? bytesProblem(p, MAX_PATH_BYTES);
  if (unsafe) throw bad(unsafe);
  if (p.includes('\\')) throw bad('must not contain backslashes (use / between folders)');
  if (p.startsWith('/') || p.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    throw bad(`must be a relative path like "guides/setup.md" (got "${p}")`);
  }
  return p;
}

/** True for a path `paths` accepts (see checkPath). */
export function isRelativePath(p: string): boolean {
  try {
    return checkPath(p, 0) !== null && p.includes('/');
  } catch {
    return false;
  }
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
