import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A file's content tag: the assets' ETag, and the version in the addresses pages link them by. */
export const contentTag = (body: Buffer): string => createHash('sha256').update(body).digest('base64url').slice(0, 22);

const versions = new Map<string, string>();

/** The content tag of a file under web/static/, read once from the built package. */
export function assetVersion(file: string): string {
  let version = versions.get(file);
  if (version === undefined) {
    version = contentTag(readFileSync(new URL(`./static/${file}`, import.meta.url)));
    versions.set(file, version);
  }
  return version;
}

/**
 * The address a page links a static file by, with its content's tag (`/static/app.css?v=…`): a browser keeps it for
 * good and asks nothing on the next page, and an upgrade changes the address (server/web/static.ts).
 */
export const assetUrl = (file: string): string => `/static/${file}?v=${assetVersion(file)}`;
