/**
 * What every kind of source is to the sync engine: a connection that lists changes since a cursor and fetches one
 * item. One file per kind in kinds/, each using the client library of its protocol. The engine (sync.ts) decides
 * what a listed item means (new, changed, unchanged, gone) from what earlier passes recorded.
 */
import type { z } from 'zod';
import type { Clock } from '../core/clock.js';
import type { Reach } from './reach.js';

export const KIND_NAMES = ['folder', 'webdav', 's3', 'git', 'web', 'imap'] as const;
export type KindName = (typeof KIND_NAMES)[number];

export interface ListedItem {
  /** Where the item is in the source (`/`-separated, no leading slash): its key, and its document's source path. */
  path: string;
  /** Changes whenever the item does (an ETag, mtime and size, a blob id, a UID): the same version is not fetched. */
  version: string;
  /** A delta listing's way of saying the item is gone. */
  deleted?: boolean;
}

export interface Listing {
  /**
   * True: the items are everything the source holds now, so a recorded item not listed is gone. False: only what
   * changed since the cursor, gone items listed with `deleted`.
   */
  complete: boolean;
  items: AsyncIterable<ListedItem>;
  /** Once the items were read to the end: where the next pass starts. */
  cursor(): string | null;
}

export interface Fetched {
  /** The bytes: streamed to the file store's temp folder, hashed, counted and typed on the way. */
  body: AsyncIterable<Uint8Array> | Uint8Array;
  /** The document's name (default: the path's last part). */
  filename?: string;
  /** What the document's metadata says of its origin (a page's URL, a message's folder). */
  metadata?: Record<string, unknown>;
}

export interface ListRequest {
  /** Where the previous pass ended (`Listing.cursor`), or null: the first pass, or a listing that starts over. */
  cursor: string | null;
  /** A resumable kind continues a listing that stopped after this path (in path order); null: from the start. */
  resumeAfter: string | null;
  /** The version recorded for a path, if any: a kind that must request an item to list it asks conditionally. */
  known(path: string): string | undefined;
  /** Every recorded path (a crawler visits them again: a page may have lost its last link but still exist). */
  knownPaths(): Iterable<string>;
}

export interface SourceConnection {
  list(request: ListRequest): Promise<Listing>;
  fetch(item: ListedItem): Promise<Fetched>;
  close(): Promise<void>;
}

/** A source as its kind sees it. */
export interface SourceSetup {
  /** Without credentials (those are in `secrets`). */
  url: URL;
  options: Record<string, unknown>;
  secrets: Record<string, string>;
}

/** What the daemon lends a connection. */
export interface SourceEnv {
  reach: Reach;
  /** Folders a `folder` source may be under (`--source-roots`). */
  roots: readonly string[];
  /** The server's own folders (its data directory, its secrets key): no source may be, hold or lie in one. */
  hidden: readonly string[];
  /** A folder this source's connection may keep things in between passes (a clone), on this replica. */
  scratchDir: string;
  /** The largest item fetched (`--max-upload-mb`): a kind that downloads while it lists stops there too. */
  maxItemBytes: number;
  /** Ends the connection's work: the pass is over (shutdown, lock lost). */
  signal: AbortSignal;
  now: Clock;
}

export interface SourceKind {
  name: KindName;
  /** URL schemes that name this kind when the kind is not given (`s3:` → s3). */
  schemes: readonly string[];
  /** The kind's options (a strict object: unknown ones are refused by name). */
  options: z.ZodType<Record<string, unknown>>;
  /** Options whose values are secrets: sealed at rest, never shown (`password`, `secret_access_key`). */
  secretOptions: readonly string[];
  /** The URL's user name and password, when it carries them, become these options (null: refused in the URL). */
  urlCredentials: { username: string; password: string } | null;
  /** Its listing is in path order and may continue after a path (`ListRequest.resumeAfter`). */
  resumable: boolean;
  /** Why the URL cannot name a source of this kind, or null (checked when a source is added; nothing is fetched). */
  check(url: URL, roots: readonly string[], hidden: readonly string[]): Promise<string | null>;
  connect(setup: SourceSetup, env: SourceEnv): Promise<SourceConnection>;
}

/** An error that is the source's (bad credentials, unreachable, refused): shown on the source as it is. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/** An error that is one item's (vanished since the listing, too large, unreadable): the pass goes on. */
export class ItemError extends Error {
  override name = 'ItemError';
}
