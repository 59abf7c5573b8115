/** Every kind of source, by name, and the kind a URL names when none is given. */
import { ownTable } from '../../core/own-table.js';
import type { KindName, SourceKind } from '../kind.js';
import { folder } from './folder.js';
import { git } from './git.js';
import { imap } from './imap.js';
import { s3 } from './s3.js';
import { web } from './web.js';
import { webdav } from './webdav.js';

/** Without a prototype: a kind named `constructor` on the web form found Object's function (a 500), not no kind. */
export const KINDS = ownTable<Partial<Record<KindName, SourceKind>>>({ folder, webdav, s3, git, web, imap });

/**
 * The kind a URL names: by its scheme (file:, s3:, git:, imap:, imaps:); an http(s) URL is a Git repository when
 * its path ends in `.git`, a Nextcloud or ownCloud WebDAV folder under `/remote.php/`, and a web site otherwise.
 */
export function kindOfUrl(url: URL): KindName | null {
  for (const kind of Object.values(KINDS)) if (kind.schemes.includes(url.protocol)) return kind.name;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (/\.git\/?$/.test(url.pathname)) return 'git';
  if (/\/remote\.php\/(?:dav|webdav)\//.test(url.pathname)) return 'webdav';
  return 'web';
}
