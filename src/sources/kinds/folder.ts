/**
 * `folder`: a folder on the server machine (`file:///srv/docs`), allowed only under the roots the operator lists
 * (`--source-roots`). A file's version is its mtime and size; the engine hashes a file whose version changed and
 * re-indexes it only when its bytes did. Nothing leads out of the folder: its real path (symlinks resolved) must lie
 * under a root, and a symlink in it whose target lies outside it is passed over, as is a file swapped for one
 * between the listing and the read (it is opened by its real path, without following a last symlink).
 *
 * Nor is any docsearch data directory read, this server's or another's on the same machine (its originals, its
 * database, its secrets key): one is known by the files every daemon leaves in it (DATA_DIR_MARKERS). A source that
 * is or lies in one is refused when it is added and at each pass; one that holds one fails its pass on reaching it,
 * before anything in it is read (and a symlink into one is passed over).
 */
import { constants, type Dirent, existsSync } from 'node:fs';
import { open, opendir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ItemError, type ListedItem, type SourceConnection, type SourceKind, SourceError } from '../kind.js';
import { globOptions } from './options.js';
import { within } from '../../core/path-within.js';

/**
 * What a docsearch data directory holds whatever its configuration (docs/configuration.md, "Data directory layout"):
 * the lock every daemon takes at its start and leaves (server/data-dir-lock.ts), the embedded database
 * (store/sql/database.ts), the lock of `docsearch backup`.
 */
const DATA_DIR_MARKERS = ['daemon.lock', 'docsearch.db', 'backup.lock'];

const isDataDir = (dir: string): boolean => DATA_DIR_MARKERS.some((marker) => existsSync(join(dir, marker)));

/** The docsearch data directory `real` (a real path) is or lies in, or null. */
function dataDirAround(real: string): string | null {
  for (let dir = real; ; dir = dirname(dir)) {
    if (isDataDir(dir)) return dir;
    if (dirname(dir) === dir) return null;
  }
}

const dataDirRefusal = (path: string, dataDir: string, holds: boolean): string =>
  `${path} ${holds ? `holds a docsearch data directory (${dataDir})` : dataDir === path ? 'is a docsearch data directory' : `lies in a docsearch data directory (${dataDir})`}: its originals, database and secrets key are no source's to read`;

/**
 * The real path of a source folder, checked against the roots; throws SourceError saying why not. A path outside
 * every root is refused before it is looked at: whether it exists, or is a file, would otherwise be said to anyone
 * who may add a source (a map of the server's file system).
 */
async function folderOf(url: URL, roots: readonly string[], hidden: readonly string[]): Promise<string> {
  const path = fileURLToPath(url);
  const realRoots = (await Promise.all(roots.map((root) => realpath(root).catch(() => null)))).filter((r): r is string => r !== null);
  const notUnder = () => new SourceError(`${path} is not under a folder the server allows sources in (${roots.length ? roots.join(', ') : 'none: the operator lists them with --source-roots'})`);
  if (!roots.some((root) => within(path, root)) && !realRoots.some((root) => within(path, root))) throw notUnder();
  let real: string;
  try {
    real = await realpath(path);
    if (!(await stat(real)).isDirectory()) throw new SourceError(`${path} is not a folder`);
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError(`${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  // Its real path too: a symlink under a root may lead anywhere.
  if (!realRoots.some((root) => within(real, root))) throw notUnder();
  // A root the server's data directory lies in (a whole disk, /srv holding /srv/docsearch) would otherwise hand
  // every user's originals, and the secrets key, to whoever adds a source there.
  for (const own of hidden) {
    const realOwn = await realpath(own).catch(() => own);
    if (within(real, realOwn) || within(realOwn, real)) throw new SourceError(`${path} is, holds or lies in this server's own data: no source may read it`);
  }
  // Another server's data directory on this machine is as much its users' as this one's is.
  const around = dataDirAround(real);
  if (around !== null) throw new SourceError(dataDirRefusal(path, around === real ? path : around, false));
  return real;
}

export const folder: SourceKind = {
  name: 'folder',
  schemes: ['file:'],
  options: z.strictObject({ ...globOptions }),
  secretOptions: [],
  urlCredentials: null,
  resumable: false,
  async check(url, roots, hidden) {
    if (url.protocol !== 'file:') return 'a folder source is a file: URL, such as file:///srv/docs';
    if (url.host !== '' && url.host !== 'localhost') return 'a folder source names a folder on the server: file:///path (no host)';
    if (roots.length === 0) return 'the server allows no folder sources: its operator lists the folders they may be under with --source-roots';
    return folderOf(url, roots, hidden).then(
      () => null,
      (err: Error) => err.message,
    );
  },
  async connect(setup, env) {
    const top = await folderOf(setup.url, env.roots, env.hidden);
    return new FolderConnection(top);
  },
};

class FolderConnection implements SourceConnection {
  constructor(private readonly top: string) {}

  async list() {
    const top = this.top;
    async function* walk(dir: string, visited: Set<string>): AsyncIterable<ListedItem> {
      const entries: Dirent[] = [];
      for await (const entry of await opendir(dir)) entries.push(entry);
      // A data directory found inside (made there since the source was added, or beneath): nothing in it is listed,
      // and the pass fails, before it decides anything from an unfinished listing.
      if (entries.some((e) => DATA_DIR_MARKERS.includes(e.name))) throw new SourceError(dataDirRefusal(top, dir, true));
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        const full = join(dir, entry.name);
        let real = full;
        if (entry.isSymbolicLink()) {
          real = await realpath(full).catch(() => '');
          if (!real || !within(real, top)) continue; // leads out of the folder (or nowhere)
          // Into a data directory further on in the folder (its secrets key, say): not before that is reached.
          if (dataDirAround(real) !== null) continue;
        }
        const st = await stat(real).catch(() => null);
        if (!st) continue; // gone since the directory was read
        if (st.isDirectory()) {
          if (visited.has(real)) continue; // a symlink loop
          visited.add(real);
          yield* walk(full, visited);
        } else if (st.isFile()) {
          yield { path: relative(top, full).split(sep).join('/'), version: `${Math.trunc(st.mtimeMs)}:${st.size}` };
        }
      }
    }
    return { complete: true, items: walk(top, new Set([top])), cursor: () => null };
  }

  async fetch(item: ListedItem) {
    const full = join(this.top, ...item.path.split('/'));
    const real = await realpath(full).catch(() => null);
    if (!real) throw new ItemError('the file is gone');
    if (!within(real, this.top)) throw new ItemError('the file now leads out of the source folder (a symlink): not read');
    if (dataDirAround(dirname(real)) !== null) throw new ItemError('the file now lies in a docsearch data directory: not read');
    // O_NOFOLLOW: a last component swapped for a symlink since the realpath is refused, not followed.
    const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
      throw new ItemError(`the file cannot be read (${err.code ?? err.message})`);
    });
    return { body: handle.createReadStream() };
  }

  async close() {}
}
