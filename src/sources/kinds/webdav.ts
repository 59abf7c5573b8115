/**
 * `webdav`: a folder on Nextcloud, ownCloud or any WebDAV server (`https://cloud.example.com/remote.php/dav/files/
 * alice/Documents`), with basic authentication (a Nextcloud app password works as the password), through the
 * `webdav` client over the sources' checked agents. The tree is read one PROPFIND (Depth 1) per folder, as Nextcloud
 * refuses Depth infinity; a file's version is its ETag (its modification time and size where the server sends none).
 */
import { z } from 'zod';
import type { FileStat, WebDAVClient } from 'webdav';
import { ItemError, type ListedItem, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import { globOptions, secret, username } from './options.js';

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
    const { createClient } = await import('webdav');
    const client = createClient(url.href, {
      ...(o.username ? { username: o.username, password: setup.secrets.password ?? '' } : {}),
      httpAgent: env.reach.httpAgent,
      httpsAgent: env.reach.httpsAgent,
    });
    return new WebDavConnection(client, url.href);
  },
};

class WebDavConnection implements SourceConnection {
  constructor(
    private readonly client: WebDAVClient,
    private readonly url: string,
  ) {}

  private async folder(path: string): Promise<FileStat[]> {
    try {
      return (await this.client.getDirectoryContents(path)) as FileStat[];
    } catch (err) {
      throw sourceError(err, path === '/' ? this.url : `${this.url} (${path})`);
    }
  }

  async list() {
    // The top folder is read here: refused credentials fail the pass before anything is decided.
    const top = await this.folder('/');
    const self = this;
    async function* walk(entries: FileStat[]): AsyncIterable<ListedItem> {
      for (const e of [...entries].sort((a, b) => (a.filename < b.filename ? -1 : 1))) {
        const path = e.filename.replace(/^\/+/, '');
        if (e.type === 'directory') yield* walk(await self.folder(e.filename));
        else yield { path, version: e.etag ? `etag:${e.etag}` : `${e.lastmod}:${e.size}` };
      }
    }
    return { complete: true, items: walk(top), cursor: () => null };
  }

  async fetch(item: ListedItem) {
    try {
      const buffer = (await this.client.getFileContents(`/${item.path}`, { format: 'binary' })) as ArrayBuffer;
      return { body: new Uint8Array(buffer) };
    } catch (err) {
      if (statusOf(err) === 404) throw new ItemError('the file is gone');
      throw sourceError(err, this.url);
    }
  }

  async close() {}
}
