import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
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
  size: number;
}

export interface Collected {
  files: LocalFile[];
  /** One line each: what was not sent and why. */
  skipped: string[];
}

async function walk(dir: string, recursive: boolean, out: Collected): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue; // .git, .DS_Store: never documents
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) await walk(p, true, out);
      else out.skipped.push(`${p}/: a folder (add --recursive to include subfolders)`);
    } else if (e.isFile() || e.isSymbolicLink()) {
      await addFile(p, out);
    }
  }
}

async function addFile(p: string, out: Collected): Promise<void> {
  if (!SUPPORTED_EXTENSIONS.has(extname(p).toLowerCase())) {
    out.skipped.push(`${p}: unsupported file type (PDF, DOCX and plain text only)`);
    return;
  }
  const s = await stat(p).catch(() => null);
  if (!s?.isFile()) {
    out.skipped.push(`${p}: not a regular file`);
    return;
  }
  out.files.push({ path: p, name: basename(p), size: s.size });
}

/** Expands the command's paths: files as given, folders' files (subfolders with --recursive). */
export async function collectFiles(paths: string[], recursive: boolean): Promise<Collected> {
  const out: Collected = { files: [], skipped: [] };
  for (const p of paths) {
    const s = await stat(p).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read ${p}: ${err.code === 'ENOENT' ? 'no such file or folder' : err.message}`);
    });
    if (s.isDirectory()) await walk(p.replace(/\/+$/, '') || '/', recursive, out);
    else await addFile(p, out);
  }
  // The same file named twice (a file and its folder) is sent once.
  const seen = new Set<string>();
  out.files = out.files.filter((f) => (seen.has(f.path) ? false : (seen.add(f.path), true)));
  return out;
}
