/**
 * Where blobs live: uploaded originals and the small files next to the LanceDB tables. A local directory in
 * embedded mode, an S3 bucket prefix in shared mode; callers never know which. Keys are relative, '/'-separated.
 */
import type { Readable } from 'node:stream';
import { errorCauses } from '../../core/error-causes.js';
import { AppError } from '../../core/errors.js';

/**
 * The store did not answer, or answered that it is down or overloaded (a 5xx): a 503 for an API caller, and for the
 * ingest worker a pause until the store is back, not a failed attempt (isStorageUnavailable).
 */
export class StorageUnavailable extends AppError {
  constructor(cause: unknown) {
    super('service_unavailable', 'file storage is unavailable; try again shortly', { cause, expose: true, headers: { 'Retry-After': '5' } });
    this.name = 'StorageUnavailable';
  }
}

/**
 * LanceDB on S3 reporting that same store away in its own words, once its object_store client has spent its retries:
 * no connection, or a 5xx (the Display form "Generic S3 error: Error performing PUT … - HTTP error: error sending
 * request" / "- Server returned non-2xx status code: 503", or the Debug form `store: "S3"` … `HttpError { kind:
 * Connect`). A 4xx (a refused key, a missing object) is the request's fault, and is not matched.
 */
const LANCE_STORE_AWAY = /(?:Generic S3 error|store: "S3")[\s\S]*?(?:HTTP error: error sending request|non-2xx status code: 5\d\d|HttpError \{ kind: (?:Connect|Timeout)|status: 5\d\d)/;

/** Whether `err`, or an error it was caused by, is the object store being away (StorageUnavailable, or LanceDB's). */
export function isStorageUnavailable(err: unknown): boolean {
  for (const e of errorCauses(err)) {
    if (e instanceof StorageUnavailable) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && LANCE_STORE_AWAY.test(message)) return true;
  }
  return false;
}

export interface ObjectInfo {
  size: number;
  /** When it was last written. */
  modified: Date;
}

/** Bytes `start` to `end` of an object, both included (as HTTP's Range counts them). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ObjectStore {
  /** For health and logs. */
  readonly engine: 'local' | 's3';
  /** A directory or s3://bucket/prefix, for messages; never credentials. */
  readonly location: string;
  /**
   * Stores the local file at `path` under `key` unless the key already exists (then the stored bytes are kept).
   * The file is consumed either way. Atomic: nobody ever reads a partly written object.
   */
  putFileIfAbsent(key: string, path: string): Promise<'stored' | 'exists'>;
  /** Stores `body` under `key`, replacing what is there; readers see the old or the new bytes, never a mix. */
  put(key: string, body: string | Buffer): Promise<void>;
  /** The whole object, or null when there is none. */
  get(key: string): Promise<Buffer | null>;
  /**
   * A stream of the object, or of `range` of it (read from the store as that range only, never the whole), and the
   * whole object's size; null when there is none. The caller consumes or destroys the stream.
   */
  open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Removes the object; no error when it is already gone. */
  delete(key: string): Promise<void>;
  /** The key of every object that starts with `prefix`, in no particular order. */
  list(prefix?: string): AsyncIterable<string>;
  /** Reachable and usable right now. */
  probe(): Promise<{ up: boolean; error?: string }>;
}
