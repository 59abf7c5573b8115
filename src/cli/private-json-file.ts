import { chmodSync, closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CliError } from '../terminal/errors.js';

/** Far past any file the CLI writes (a few hundred bytes a login): a larger one is not one of its files. */
const MAX_FILE_BYTES = 1024 * 1024;

/** Why a file of the CLI's cannot be opened, in words; undefined where there is none. */
function openProblem(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a folder on its path is a file';
  if (code === 'ELOOP') return 'a symbolic link loop';
  return (err as Error).message;
}

/**
 * A JSON file of the CLI's own (settings, file-backed credentials): undefined when it does not exist. Read as a
 * regular file of at most MAX_FILE_BYTES, opened without blocking: a link to /dev/zero or a FIFO would otherwise
 * hang the command, a huge file fill memory, and a folder or an unreadable file read as no file at all.
 */
export function readJsonFile(path: string, hint: string): unknown {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const problem = openProblem(err);
    if (problem === undefined) return undefined;
    throw new CliError(`cannot read ${path}: ${problem}`, undefined, hint);
  }
  let text: string;
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new CliError(`cannot read ${path}: it is a folder, not a file`, undefined, hint);
    if (!stat.isFile()) throw new CliError(`cannot read ${path}: it is not a regular file`, undefined, hint);
    if (stat.size > MAX_FILE_BYTES) throw new CliError(`cannot read ${path}: it is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB, not a file docsearch wrote`, undefined, hint);
    // At most one byte past the limit, however the file grows meanwhile.
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    let size = 0;
    for (let n; size < buf.length && (n = readSync(fd, buf, size, buf.length - size, null)) > 0; ) size += n;
    if (size > MAX_FILE_BYTES) throw new CliError(`cannot read ${path}: it is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB, not a file docsearch wrote`, undefined, hint);
    text = buf.toString('utf8', 0, size);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${path}: ${openProblem(err) ?? (err as Error).message}`, undefined, hint);
  } finally {
    closeSync(fd);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliError(`cannot read ${path}: not valid JSON`, undefined, hint);
  }
}

/**
 * Writes under a temporary name with mode 0600 from the start, then renames: the file is never briefly
 * world-readable, and a crash never leaves half a file.
 */
export function writePrivateJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600); // the umask may have narrowed the mode further, never widened it; set it exactly
  renameSync(tmp, path);
}
