import { constants } from 'node:fs';
import { access, lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../../terminal/errors.js';
import { type IgnoreRules, loadIgnoreRules } from './ignore-rules.js';

/** The formats the server reads, in words, for the notes on files it would not. */
export const READ_FORMATS = 'PDF, Word, OpenDocument, PowerPoint, Excel, EPUB, RTF, CSV, Markdown, HTML, e-mail, images and plain text';

/**
 * Extensions worth sending. The server decides the type by content (READ_FORMATS); this list only spares
 * uploading what can never pass (archives, programs) and says so.
 */
export const SUPPORTED_EXTENSIONS = new Set([
  '.pdf', '.docx', '.doc', '.odt', '.rtf', '.epub', '.pptx', '.ppt', '.odp', '.xlsx', '.xls', '.ods', '.csv', '.tsv', '.tab',
  '.txt', '.text', '.md', '.markdown', '.rst', '.log', '.html', '.htm', '.xhtml', '.eml',
  '.png', '.jpg', '.jpeg', '.tif', '.tiff', '.webp',
]);

export interface LocalFile {
  /** The path as the user will recognise it (relative to what they typed). */
  path: string;
  /** The name sent to the server. */
  name: string;
  /** `/`-separated path below the folder it was found in (its name when given as a file): `upload --sync` keys on it. */
  rel: string;
  /**
   * The path a plain upload keeps it at in the project, as the web's folder upload does: the folder's own name, then
   * `rel` (`notes/day 2/a.md`). None for a file named directly, which keeps no path (as the web's single-file upload).
   */
  inFolder?: string;
  size: number;
}

export interface Collected {
  files: LocalFile[];
  /** One line each: what was not sent and why (not an error). */
  skipped: string[];
  /** One line each: files and folders that could not be read (an error: exit 1 once the rest is uploaded). */
  unreadable: string[];
  /** Paths below a folder left out by its ignore rules (`.docsearchignore`, dotfiles, node_modules/); folders end in `/`. */
  ignored: string[];
  /**
   * Symbolic links below a folder that lead out of it, one line each (also in `skipped`): never followed, so a link
   * planted in a cloned repository or an unpacked archive (`notes.md -> ~/.ssh/id_ed25519`) uploads nothing.
   */
  outside: string[];
  /** Files skipped for their type, and subfolders skipped without --recursive: what to hint when nothing is left. */
  unsupported?: number;
  subfolders?: number;
}

/** Why `p` could not be read, in words: a link whose target is missing is a broken link, not a file that disappeared. */
async function why(p: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'a symbolic link that points to itself';
  if (code === 'ENOENT') {
    const target = await lstat(p).then((s) => (s.isSymbolicLink() ? readlink(p) : undefined), () => undefined);
    return target === undefined ? 'it disappeared' : `a broken symbolic link to ${target}`;
  }
  return (err as Error).message ?? String(err);
}

/** Why a file could not be read, in a phrase: when listed, or when read later (it vanished meanwhile). */
export const unreadableFile = async (p: string, err: unknown): Promise<string> => `cannot read the file (${await why(p, err)})`;

/** The line that names a file that could not be read, with why. */
export const cannotRead = async (p: string, err: unknown): Promise<string> => `${p}: ${await unreadableFile(p, err)}`;

/** A folder being walked: the path as given, where it really is (links resolved), and its ignore rules. */
interface Root {
  path: string;
  real: string;
  rules: IgnoreRules;
  /** The folder's own name, first in its files' paths (none for `/`). */
  name: string;
}

/** Where a file found in `root` is kept by a plain upload (see LocalFile.inFolder). */
const inFolder = (root: Root, rel: string) => (root.name ? `${root.name}/${rel}` : rel);

/**
 * A symbolic link met while walking a folder. One to a file inside the folder (links resolved, `..` included) is
 * uploaded like the file it names; one that leads out of the folder is refused and said; one to a folder is never
 * followed, inside or out (it would send a subtree twice, or loop).
 */
async function addLink(root: Root, p: string, rel: string, out: Collected): Promise<void> {
  let target: string;
  let isDir: boolean;
  try {
    target = await realpath(p);
    isDir = (await stat(target)).isDirectory();
  } catch (err) {
    out.unreadable.push(await cannotRead(p, err));
    return;
  }
  if (target !== root.real && !target.startsWith(root.real.endsWith(sep) ? root.real : root.real + sep)) {
    const line = `${p}${isDir ? '/' : ''}: a symbolic link to ${await readlink(p)}, outside ${root.path} (not followed, nothing uploaded from it)`;
    out.skipped.push(line);
    out.outside.push(line);
  } else if (isDir) out.skipped.push(`${p}/: a symbolic link to a folder (folder links are not followed)`);
  else await addFile(p, rel, out, inFolder(root, rel));
}

async function walk(root: Root, dir: string, recursive: boolean, out: Collected): Promise<void> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    out.unreadable.push(`${dir}/: cannot read the folder (${await why(dir, err)})`);
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    const rel = relative(root.path, p).split(sep).join('/');
    if (root.rules.ignores(e.isDirectory() ? `${rel}/` : rel)) {
      out.ignored.push(e.isDirectory() ? `${rel}/` : rel);
      continue;
    }
    if (e.isDirectory()) {
      if (recursive) await walk(root, p, true, out);
      else {
        out.skipped.push(`${p}/: a folder (add --recursive to include subfolders)`);
        out.subfolders = (out.subfolders ?? 0) + 1;
      }
    } else if (e.isSymbolicLink()) await addLink(root, p, rel, out);
    else if (e.isFile()) await addFile(p, rel, out, inFolder(root, rel));
  }
}

async function addFile(p: string, rel: string, out: Collected, folderPath?: string): Promise<void> {
  if (!SUPPORTED_EXTENSIONS.has(extname(p).toLowerCase())) {
    out.skipped.push(`${p}: unsupported file type (docsearch reads ${READ_FORMATS})`);
    out.unsupported = (out.unsupported ?? 0) + 1;
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
    out.unreadable.push(await cannotRead(p, err));
    return;
  }
  out.files.push({ path: p, name: basename(p), rel, ...(folderPath === undefined ? {} : { inFolder: folderPath }), size });
}

/**
 * Expands the command's paths: files as given, folders' files (subfolders with --recursive) less what the folder's
 * ignore rules leave out. A path that does not exist is a usage error (a typo), a broken link is named as one. A path
 * the user names is read even when it is a link; links found inside a folder are judged by addLink.
 */
export async function collectFiles(paths: string[], recursive: boolean): Promise<Collected> {
  const out: Collected = { files: [], skipped: [], unreadable: [], ignored: [], outside: [] };
  for (const p of paths) {
    let s;
    try {
      s = await stat(p);
    } catch (err) {
      const reason = await why(p, err);
      // `-` is stdin to many tools; here it is a missing file named `-`, so say what upload takes instead.
      if (reason === 'it disappeared' && p === '-') {
        throw new UsageError('upload does not read stdin (`-`): it takes files and folders', 'save the input to a file and upload that; for a list of paths, `xargs -d \'\\n\' docsearch upload < list.txt`');
      }
      if (reason === 'it disappeared') throw new UsageError(`cannot read ${p}: no such file or folder`);
      out.unreadable.push(`${p}: cannot read (${reason})`);
      continue;
    }
    if (s.isDirectory()) {
      const dir = p.replace(/\/+$/, '') || '/';
      // The folder itself may be a link the user named: its links are judged against where it really is.
      // `basename(resolve('.'))` names the working folder; the root `/` has no name.
      await walk({ path: dir, real: await realpath(dir), rules: await loadIgnoreRules(dir), name: basename(resolve(dir)) }, dir, recursive, out);
    } else await addFile(p, basename(p), out);
  }
  // The same file named twice (`a.txt ./a.txt`, or a file and its folder) is sent and reported once.
  const seen = new Set<string>();
  out.files = out.files.filter((f) => (seen.has(resolve(f.path)) ? false : (seen.add(resolve(f.path)), true)));
  out.unreadable = [...new Set(out.unreadable)];
  refuseSharedPaths(out.files);
  return out;
}

/**
 * Two folders that would keep different files at the same path (`a/docs/` and `b/docs/` both holding readme.md):
 * sent together, the server refuses the request, and sent apart the later one would replace the other. A usage error
 * before anything is sent.
 */
function refuseSharedPaths(files: LocalFile[]): void {
  const at = new Map<string, LocalFile>();
  for (const f of files) {
    if (f.inFolder === undefined) continue;
    const other = at.get(f.inFolder);
    if (other) {
      throw new UsageError(
        `${other.path} and ${f.path} would both be kept at ${f.inFolder} in the project (a folder's files keep their path there, the folder's name first)`,
        'upload those folders one at a time into different projects, or keep each in sync below its own path: docsearch upload FOLDER --sync --prefix NAME',
      );
    }
    at.set(f.inFolder, f);
  }
}
