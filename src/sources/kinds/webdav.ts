/**
 * `webdav`: a folder on Nextcloud, ownCloud or any WebDAV server (`https://cloud.example.com/remote.php/dav/files/
 * alice/Documents`), with basic authentication (a Nextcloud app password works as the password), through the
 * `webdav` client over the sources' checked agents. The tree is read one PROPFIND (Depth 1) per folder, as Nextcloud
 * refuses Depth infinity; a file's version is its ETag (its modification time and size where the server sends none).
 */
import { z } from 'zod';
import type { FileStat, WebDAVClient } from 'webdav';
import { MAX_PATH_BYTES } from '../../core/storable-text.js';
import { ItemError, type ListedItem, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import { globOptions, secret, username } from './options.js';

/**
 * The largest answer to a folder's PROPFIND read (some 80,000 entries): read whole before it is parsed, an answer
 * without end (a broken or hostile server) grew the daemon by gigabytes (3.9 GB in 45 s).
 */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/**
 * The most entries (files and folders) one pass lists: each folder's answer is bounded above, the whole tree is by
 * this. A server listing an endlessly wide tree (every folder holding thousands more) would otherwise keep a pass
 * asking for ever, holding each level's entries as it walks down.
 */
export const MAX_PASS_ENTRIES = 150_000;

/** A path with a `.` or `..` segment: an href decoded to one (`..%2F`) names something outside the source folder. */
const leadsOut = (path: string): boolean => path.split('/').some((part) => part === '.' || part === '..');

const Options = z.strictObject({ username: username.optional(), password: secret.optional(), ...globOptions });

/** The HTTP status of a webdav client error, if it has one. */
const statusOf = (err: unknown): number | undefined => (err as { status?: number; response?: { status?: number } }).status ?? (err as { response?: { status?: number } }).response?.status;

function sourceError(err: unknown, url: string): SourceError {
  const status = statusOf(err);
  if (status === 401 || status === 403) return new SourceError(`the WebDAV server refused the credentials (HTTP ${status}): check username and password (an app password on Nextcloud)`);
  if (status === 404) return new SourceError(`there is no folder at ${url} (HTTP 404)`);
  const cause = (err as { cause?: Error }).cause;
  return new SourceError(`the WebDAV folder ${url} could not be read: ${cause?.message ?? (err as Error).message ?? String(err)}`);
}

const safeDecode = (href: string): string | null => {
  try {
    return decodeURIComponent(href);
  } catch {
    return null;
  }
};

export const webdav: SourceKind = {
  name: 'webdav',
  schemes: ['webdav:', 'webdavs:'],
  options: Options,
  secretOptions: ['password'],
  urlCredentials: { username: 'username', password: 'password' },
  resumable: false,
  async check(url) {
    if (!['http:', 'https:', 'webdav:', 'webdavs:'].includes(url.protocol)) return 'a WebDAV source is an http(s):// URL of a folder';
    return null;
  },
  async connect(setup, env) {
    const o = setup.options as z.infer<typeof Options>;
    // webdav(s):// is how some clients name it; the requests are HTTP(S).
    const url = new URL(setup.url.href.replace(/^webdav(s?):/, 'http$1:'));
    // Loaded on first use: the client adds ~20 MiB to a daemon that may never have a WebDAV source.
    const { createClient, parseXML, prepareFileFromProps } = await import('webdav');
    const client = createClient(url.href, {
      ...(o.username ? { username: o.username, password: setup.secrets.password ?? '' } : {}),
      httpAgent: env.reach.httpAgent,
      httpsAgent: env.reach.httpsAgent,
    });
    return new WebDavConnection(client, url, { parseXML, prepareFileFromProps });
  },
};

/** The client's own reading of a PROPFIND answer. */
interface DavParsing {
  parseXML: typeof import('webdav').parseXML;
  prepareFileFromProps: typeof import('webdav').prepareFileFromProps;
}

/** A multistatus answer read as the client reads it (parseXML makes `response` a list). */
interface Multistatus {
  multistatus: { response: { href: string; propstat: { prop: Parameters<DavParsing['prepareFileFromProps']>[0] } }[] };
}

/** An answer's body as it streams in: the client's fetch (node-fetch) gives a Node stream, which its types do not say. */
const bodyOf = (res: unknown): AsyncIterable<Uint8Array> | null => (res as { body: AsyncIterable<Uint8Array> | null }).body;

/** A listing's text, read up to MAX_LISTING_BYTES (then the answer is let go and the pass fails, saying so). */
async function bounded(body: AsyncIterable<Uint8Array> | null, where: string): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of body ?? []) {
    size += part.length;
    if (size > MAX_LISTING_BYTES) throw new SourceError(`the WebDAV server's listing of ${where} is larger than ${MAX_LISTING_BYTES / 1024 / 1024} MiB: nothing was decided from it`);
    parts.push(Buffer.from(part));
  }
  return Buffer.concat(parts).toString('utf8');
}

/** A folder's entry as the walk keeps it: its path from the source folder (leading slash), and a file's version. */
interface Entry {
  name: string;
  dir: boolean;
  version: string;
}

class WebDavConnection implements SourceConnection {
  private readonly url: string;
  /** The source folder's path on the server, decoded, with a trailing slash. */
  private readonly base: string;
  /** Entries this pass's listing has read so far (MAX_PASS_ENTRIES). */
  private listed = 0;

  constructor(
    private readonly client: WebDAVClient,
    url: URL,
    private readonly dav: DavParsing,
  ) {
    this.url = url.href;
    this.base = decodeURIComponent(url.pathname).replace(/\/*$/, '/');
  }

  /**
   * A folder's entries (paths from the source folder, with a leading slash), one PROPFIND of depth 1. Asked for
   * here rather than through getDirectoryContents to see the answer whole: XML cut after an entry's end (a server
   * that failed while it streamed the listing) still parses, as the entries before the cut, and taken for the
   * whole folder it would delete what followed.
   */
  private async folder(path: string): Promise<Entry[]> {
    const where = path === '/' ? this.url : `${this.url} (${path})`;
    let xml: string;
    try {
      // The top folder at the source's own URL, with its slash: joined to that URL, "/" loses it, and a server that
      // redirects a folder's address to its slashed form (Apache) costs a second request each pass.
      const top = path === '/' ? { url: this.url.replace(/\/*$/, '/') } : {};
      const res = await this.client.customRequest(path.replace(/\/*$/, '/'), { method: 'PROPFIND', headers: { Accept: 'text/plain,application/xml', Depth: '1' }, ...top });
      xml = await bounded(bodyOf(res), where);
    } catch (err) {
      // The top folder was listed with these credentials: a folder below it answering 403 is its own permissions.
      if (path !== '/' && statusOf(err) === 403) throw new SourceError(`the WebDAV server would not list ${where} (HTTP 403: the folder's permissions): nothing was decided from this pass`);
      throw err instanceof SourceError ? err : sourceError(err, where);
    }
    if (!/<\/(?:[\w.-]+:)?multistatus>\s*$/.test(xml)) throw new SourceError(`the WebDAV server's listing of ${where} ended early: nothing was decided from it`);
    let parsed: Multistatus;
    try {
      parsed = (await this.dav.parseXML(xml)) as unknown as Multistatus;
    } catch (err) {
      throw new SourceError(`the WebDAV server's listing of ${where} is not valid XML: ${(err as Error).message}`);
    }
    const self = `${this.base}${path.replace(/^\/+/, '')}`.replace(/\/*$/, '/');
    const entries: Entry[] = [];
    this.listed += parsed.multistatus.response.length;
    if (this.listed > MAX_PASS_ENTRIES) {
      throw new SourceError(`the WebDAV folder ${this.url} lists more than ${MAX_PASS_ENTRIES.toLocaleString('en')} entries (files and folders) in one pass: the pass stops there, and nothing is removed for it`);
    }
    for (const r of parsed.multistatus.response) {
      const at = safeDecode(r.href.replace(/^https?:\/\/[^/]+/, ''));
      if (at === null || !at.startsWith(this.base) || at.replace(/\/*$/, '/') === self) continue;
      const e = this.dav.prepareFileFromProps(r.propstat.prop, `/${at.slice(this.base.length).replace(/\/+$/, '')}`) as FileStat;
      // Kept as little as the walk needs: it holds every level's entries on its way down, up to MAX_PASS_ENTRIES.
      // ETags compared weakly, as If-None-Match compares them (RFC 9110 8.8.3.2): Apache marks a file's weak for
      // the second after it was written and strong after, which is no change.
      entries.push(e.type === 'directory' ? { name: e.filename, dir: true, version: '' } : { name: e.filename, dir: false, version: e.etag ? `etag:${e.etag.replace(/^W\//, '')}` : `${e.lastmod}:${e.size}` });
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async list() {
    this.listed = 0;
    // The top folder is read here: refused credentials fail the pass before anything is decided.
    const top = await this.folder('/');
    const self = this;
    async function* walk(entries: Entry[]): AsyncIterable<ListedItem> {
      for (const e of entries) {
        const path = e.name.replace(/^\/+/, '');
        if (e.dir) {
          if (leadsOut(path)) continue; // not in the source folder: not walked (a file there is refused by fetch)
          // A folder whose path no item may have (a server that lists a folder in itself, endlessly) is passed over,
          // and said so (sync.ts), rather than walked deeper for ever.
          if (Buffer.byteLength(path) > MAX_PATH_BYTES) yield { path, version: '' };
          else yield* walk(await self.folder(e.name));
        } else yield { path, version: e.version };
      }
    }
    return { complete: true, items: walk(top), cursor: () => null };
  }

  async fetch(item: ListedItem) {
    if (leadsOut(item.path)) throw new ItemError('its path leads out of the source folder (a ".." in the listing): not fetched');
    try {
      // Streamed: the pass stops reading past --max-upload-mb (sync.ts). Read whole (getFileContents), a file far
      // larger than its listing said was held in memory before it was measured.
      const res = await this.client.customRequest(`/${item.path}`, { method: 'GET' });
      return { body: bodyOf(res) ?? new Uint8Array() };
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) throw new ItemError('the file is gone');
      // The folder was listed with these credentials: a file the server will not give (403 on its permissions, 423
      // locked on Nextcloud, a 5xx of its own) is that file's failure, and the others go on; 401 is the source's.
      if (status !== undefined && status !== 401) throw new ItemError(`the WebDAV server would not give the file (HTTP ${status})`);
      throw sourceError(err, this.url);
    }
  }

  async close() {}
}
