import { constants } from 'node:fs';
import { access, readdir, stat } from 'node:fs/promises';
import { basename, extname, join, relative, sep } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * Extensions worth sending. The server decides the type by content (PDF, DOCX, plain text); this
 * list only spares uploading what can never pass (images, spreadsheets) and says so.
 */
export const SUPPORTED_EXTENSIONS = new Set(['.pdf', '.docx', '.txt', '.text', '.md', '.markdown', '.rst', '.csv', '.log']);

export interface LocalFile {
  /** The path as the user will recognise it (relative to what they typed). */
  path: string;
  /** The name sent to the server. */
  name: string;
  /** `/`-separated path below the folder it was found in (its name when given as a file): `upload --sync` keys on it. */
  rel: string;
  size: number;
}

export interface Collected {
  files: LocalFile[];
  /** One line each: what was not sent and why (not an error). */
  skipped: string[];
  /** One line each: files and folders that could not be read (an error: exit 1 once the rest is uploaded). */
  unreadable: string[];
}

const why = (err: unknown): string => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOENT' ? 'it disappeared' : ((err as Error).message ?? String(err));
};

async function walk(root: string, dir: string, recursive: boolean, out: Collected): Promise<void> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    out.unreadable.push(`${dir}/: cannot read the folder (${why(err)})`);
    return;
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue; // .git, .DS_Store: never documents
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) await walk(root, p, true, out);
      else out.skipped.push(`${p}/: a folder (add --recursive to include subfolders)`);
    } else if (e.isFile() || e.isSymbolicLink()) {
      await addFile(p, relative(root, p).split(sep).join('/'), out);
    }
  }
}

async function addFile(p: string, rel: string, out: Collected): Promise<void> {
  if (!SUPPORTED_EXTENSIONS.has(extname(p).toLowerCase())) {
    out.skipped.push(`${p}: unsupported file type (PDF, DOCX and plain text only)`);
    return;
  }
  let size: number;
  try {
    const s = await stat(p);
    if (!s.isFile()) {
      out.skipped.push(`${p}: not a regular file`);
      return;
    }
    await access(p, constants.R_OK);
    size = s.size;
  } catch (err) {
    out.unreadable.push(`${p}: cannot read the file (${why(err)})`);
    return;
  }
  out.files.push({ path: p, name: basename(p), rel, size });
}

/** Expands the command's paths: files as given, folders' files (subfolders with --recursive). */
export async function collectFiles(paths: string[], recursive: boolean): Promise<Collected> {
  const out: Collected = { files: [], skipped: [], unreadable: [] };
  for (const p of paths) {
    let s;
    try {
      s = await stat(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`cannot read ${p}: no such file or folder`);
      out.unreadable.push(`${p}: cannot read (${why(err)})`);
      continue;
    }
    if (s.isDirectory()) {
      const dir = p.replace(/\/+$/, '') || '/';
      await walk(dir, dir, recursive, out);
    } else await addFile(p, basename(p), out);
  }
  // The same file named twice (a file and its folder) is sent once.
  const seen = new Set<string>();
  out.files = out.files.filter((f) => (seen.has(f.path) ? false : (seen.add(f.path), true)));
  return out;
}
