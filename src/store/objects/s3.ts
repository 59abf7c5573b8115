/**
 * Objects in an S3 bucket under a key prefix (AWS S3, Ceph RGW, MinIO, R2…), through the AWS SDK. Creating an
 * object that must not exist yet is a conditional PUT (`If-None-Match: *`): the store itself decides who was
 * first, so two replicas placing the same original never overwrite each other (a 412 means it is there).
 */
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { describeS3, type S3Location } from './location.js';
import { type ByteRange, type ObjectInfo, type ObjectStore, StorageUnavailable } from './object-store.js';

type Sdk = typeof import('@aws-sdk/client-s3');

const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** How often a streamed upload is tried: the SDK cannot replay a file stream, so it leaves retries to us. */
const UPLOAD_ATTEMPTS = 3;

const status = (err: unknown): number | undefined => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/** The SDK's error names what failed; its text never holds credentials. */
export function s3ErrorMessage(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  const code = status(err);
  return [e.name, code ? `HTTP ${code}` : undefined, e.message && e.message !== e.name ? e.message : e.code].filter(Boolean).join(': ');
}

/**
 * An error of a request to the store: no answer, or a 5xx, means the store is down or overloaded for now, a 503
 * for an API caller and a retry for the ingest worker. Other answers (403: wrong keys or policy) are the
 * operator's to fix, and stay as they are.
 */
function unavailable(err: unknown): boolean {
  const code = status(err);
  return code === undefined || code >= 500;
}

function unavailableOr(err: unknown): unknown {
  return unavailable(err) ? new StorageUnavailable(err) : err;
}

export class S3ObjectStore implements ObjectStore {
  readonly engine = 's3';
  readonly location: string;
  private readonly base: string;

  private constructor(
    private readonly sdk: Sdk,
    readonly client: S3Client,
    readonly bucket: string,
    readonly prefix: string,
  ) {
    this.base = prefix ? `${prefix}/` : '';
    this.location = describeS3({ bucket, prefix });
  }

  /**
   * A client for the location. The SDK is loaded here, not at startup: embedded mode never pays for it.
   * Checksums only where S3 requires them: the SDK's default trailing checksums are not understood by every
   * S3-compatible store (Ceph before 18 among them).
   */
  static async connect(loc: S3Location): Promise<S3ObjectStore> {
    // The SDK warns once per process that its future releases need Node 22; the version pinned here runs on 20.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const sdk = await import('@aws-sdk/client-s3');
    const client = new sdk.S3Client({
      region: loc.region,
      ...(loc.endpoint ? { endpoint: loc.endpoint, forcePathStyle: true } : {}),
      ...(loc.credentials ? { credentials: loc.credentials } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An unreachable or hung store fails a request instead of holding it forever; the idle limit leaves room for
      // a slow client reading an original (the download pauses while the client's socket is full).
      requestHandler: { connectionTimeout: 5000, socketTimeout: 120_000 },
      // Failed requests reach the caller as errors; the SDK would also print some to the console.
      logger: QUIET,
      // Each command's middleware stack resolved once, not again on every request (a sizeable part of a PutObject's
      // CPU: bench/results/scale.md). Nothing here adds middleware to a client or a command.
      cacheMiddleware: true,
    });
    return new S3ObjectStore(sdk, client, loc.bucket, loc.prefix);
  }

  /** The same bucket and client, deeper under the prefix. */
  at(sub: string): S3ObjectStore {
    return new S3ObjectStore(this.sdk, this.client, this.bucket, `${this.base}${sub.replace(/^\/+|\/+$/g, '')}`);
  }

  private keyOf(key: string): string {
    if (key === '' || key.startsWith('/')) throw new TypeError(`invalid object key "${key}"`);
    return this.base + key;
  }

  async putFileIfAbsent(key: string, path: string): Promise<'stored' | 'exists'> {
    try {
      const Key = this.keyOf(key);
      const { size } = await stat(path);
      for (let attempt = 0; ; attempt++) {
        try {
          await this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.bucket, Key, Body: createReadStream(path), ContentLength: size, IfNoneMatch: '*' }));
          return 'stored';
        } catch (err) {
          const code = status(err);
          if (code === 412) return 'exists';
          // 409: another conditional write of this key was in flight (AWS asks for a retry); 5xx or no answer: transient.
          const transient = unavailable(err) || code === 409;
          if (!transient || attempt + 1 >= UPLOAD_ATTEMPTS) throw unavailableOr(err);
          await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
        }
      }
    } finally {
      await rm(path, { force: true });
    }
  }

  async put(key: string, body: string | Buffer): Promise<void> {
    const Key = this.keyOf(key);
    await this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.bucket, Key, Body: body })).catch((err: unknown) => {
      throw unavailableOr(err);
    });
  }

  async get(key: string): Promise<Buffer | null> {
    const obj = await this.open(key);
    if (!obj) return null;
    const parts: Buffer[] = [];
    for await (const part of obj.body) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }

  async open(key: string, range?: ByteRange): Promise<{ body: Readable; size: number } | null> {
    const Key = this.keyOf(key);
    let res;
    try {
      res = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
    } catch (err) {
      if (status(err) === 404) return null;
      throw unavailableOr(err);
    }
    const body = res.Body as Readable;
    if (!range) return { body, size: Number(res.ContentLength ?? 0) };
    // The whole object's size is in Content-Range. A store that sent other bytes (the whole object, ignoring Range)
    // must not have them served as the range.
    const asked = `bytes ${range.start}-${range.end}/`;
    if (!res.ContentRange?.startsWith(asked)) {
      body.destroy();
      throw new Error(`${this.location} answered a GET of ${key} for ${asked.slice(0, -1)} with ${res.ContentRange ? `Content-Range: ${res.ContentRange}` : 'no Content-Range'}`);
    }
    return { body, size: Number(res.ContentRange.slice(asked.length)) };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const Key = this.keyOf(key);
    try {
      const res = await this.client.send(new this.sdk.HeadObjectCommand({ Bucket: this.bucket, Key }));
      return { size: Number(res.ContentLength ?? 0), modified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if (status(err) === 404) return null;
      throw unavailableOr(err);
    }
  }

  async delete(key: string): Promise<void> {
    const Key = this.keyOf(key);
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key })).catch((err: unknown) => {
      throw unavailableOr(err);
    });
  }

  async *list(prefix = ''): AsyncIterable<string> {
    for await (const o of this.listSized(prefix)) yield o.key;
  }

  /** Keys with their sizes, in S3's order (ascending UTF-8 bytes), a page (of up to 1,000) per request as iterated. */
  async *listSized(prefix = '', pageSize?: number): AsyncIterable<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const res = await this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.base + prefix, ContinuationToken: token, MaxKeys: pageSize })).catch((err: unknown) => {
        throw unavailableOr(err);
      });
      for (const o of res.Contents ?? []) {
        if (o.Key) yield { key: o.Key.slice(this.base.length), size: Number(o.Size ?? 0) };
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }

  async probe(): Promise<{ up: boolean; error?: string }> {
    try {
      await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: this.bucket }));
      return { up: true };
    } catch (err) {
      return { up: false, error: s3ErrorMessage(err) };
    }
  }

  /**
   * Whether the store honours `If-None-Match: *` on PUT: two creates of one fresh key must give 200, then 412.
   * LanceDB's concurrent commits depend on it; a store that ignores the header (s3rver, Garage) silently loses
   * rows when two replicas commit at once. Null when it does, else what it did instead.
   */
  async conditionalPutProblem(): Promise<string | null> {
    const key = `.docsearch/conditional-put-probe/${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    const create = () => this.client.send(new this.sdk.PutObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key), Body: 'probe', IfNoneMatch: '*' }));
    try {
      await create();
      try {
        await create();
        return 'a second create of the same key with If-None-Match: * succeeded (200) instead of failing with 412 Precondition Failed';
      } catch (err) {
        if (status(err) === 412) return null;
        throw err;
      }
    } finally {
      await this.delete(key).catch(() => undefined);
    }
  }

  close(): void {
    this.client.destroy();
  }
}
