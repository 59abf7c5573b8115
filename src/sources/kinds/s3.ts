/**
 * `s3`: the objects of a bucket under a prefix (`s3://bucket/prefix`), on AWS or any S3 endpoint (Ceph RGW, MinIO,
 * Garage, R2…), through the AWS SDK over the sources' checked agents. An object's version is its ETag: an unchanged
 * object costs its line in the listing. The listing comes in key order, so a pass cut off midway continues after
 * the last key it recorded (`StartAfter`) instead of from the start.
 *
 * The SDK is given everything explicitly (endpoint, region, the source's keys or none): it must not fall back to the
 * server's own environment, instance metadata or credentials.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { ItemError, type ListedItem, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import { globOptions, noUserinfo, secret } from './options.js';
import { MAX_S3_KEY_ID_CHARS, MAX_S3_REGION_CHARS, MAX_SOURCE_URL_CHARS } from '../../core/source-limits.js';

type Sdk = typeof import('@aws-sdk/client-s3');

const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

const Options = z.strictObject({
  endpoint: z.url({ protocol: /^https?$/ }).max(MAX_SOURCE_URL_CHARS).refine(noUserinfo, 'the endpoint takes no user name or password: the keys are access_key_id and secret_access_key').optional().describe('the S3 endpoint (default: AWS in `region`)'),
  region: z.string().min(1).max(MAX_S3_REGION_CHARS).optional().describe('default us-east-1'),
  access_key_id: z.string().min(1).max(MAX_S3_KEY_ID_CHARS).optional(),
  secret_access_key: secret.optional(),
  ...globOptions,
});

/** Bucket and key prefix of an `s3://bucket/prefix` URL. */
function location(url: URL): { bucket: string; prefix: string } {
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+/, '');
  return { bucket: url.hostname, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/` };
}

/** What an S3 error means to the source's owner: refused keys, a missing bucket, no answer. */
function sourceError(err: unknown, bucket: string): SourceError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (e.name === 'InvalidAccessKeyId' || e.name === 'SignatureDoesNotMatch' || status === 403 || status === 401) {
    return new SourceError(`the bucket ${bucket} refused the credentials (${e.name ?? 'HTTP ' + status}): check access_key_id and secret_access_key`);
  }
  if (e.name === 'NoSuchBucket' || status === 404) return new SourceError(`there is no bucket ${bucket} at this endpoint`);
  // An answer the SDK cannot read (a redirect, which it does not follow) is an "UnknownError": its status says more.
  return new SourceError(`the bucket ${bucket} could not be listed: ${e.message ?? e.name ?? String(err)}${status ? ` (HTTP ${status})` : ''}`);
}

export const s3: SourceKind = {
  name: 's3',
  schemes: ['s3:'],
  options: Options,
  secretOptions: ['secret_access_key'],
  urlCredentials: null,
  resumable: true,
  async check(url) {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(url.hostname)) return 'an S3 source is s3://bucket/prefix, with a valid bucket name';
    return null;
  },
  async connect(setup, env) {
    const o = setup.options as z.infer<typeof Options>;
    if (Boolean(o.access_key_id) !== Boolean(setup.secrets.secret_access_key)) throw new SourceError('give both access_key_id and secret_access_key, or neither (a public bucket)');
    // The SDK warns once per process that its future releases need Node 22; the version pinned here runs on 20.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const sdk = await import('@aws-sdk/client-s3');
    const region = o.region ?? 'us-east-1';
    const client = new sdk.S3Client({
      region,
      endpoint: o.endpoint ?? `https://s3.${region}.amazonaws.com`,
      forcePathStyle: o.endpoint !== undefined,
      // Without keys: unsigned requests (a public bucket), never the server's own credentials.
      ...(o.access_key_id
        ? { credentials: { accessKeyId: o.access_key_id, secretAccessKey: setup.secrets.secret_access_key! } }
        : { credentials: { accessKeyId: '', secretAccessKey: '' }, signer: { sign: async (request: unknown) => request as never } }),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { httpAgent: env.reach.httpAgent, httpsAgent: env.reach.httpsAgent, connectionTimeout: env.reach.timeoutMs },
      logger: QUIET,
    });
    return new S3Connection(sdk, client, location(setup.url));
  },
};

class S3Connection implements SourceConnection {
  constructor(
    private readonly sdk: Sdk,
    private readonly client: S3Client,
    private readonly where: { bucket: string; prefix: string },
  ) {}

  async list(request: { resumeAfter: string | null }) {
    const { bucket, prefix } = this.where;
    const { sdk, client } = this;
    // The first page is asked for here: refused keys or a missing bucket fail the pass before anything is decided.
    const page = (token: string | undefined) =>
      client
        .send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, ...(token === undefined && request.resumeAfter !== null ? { StartAfter: prefix + request.resumeAfter } : {}) }))
        .catch((err: unknown) => Promise.reject(sourceError(err, bucket)));
    const first = await page(undefined);
    async function* items(): AsyncIterable<ListedItem> {
      for (let res = first; ; res = await page(res.NextContinuationToken)) {
        for (const o of res.Contents ?? []) {
          const path = o.Key!.slice(prefix.length);
          if (path === '' || path.endsWith('/')) continue; // folder markers
          yield { path, version: o.ETag ?? `${o.LastModified?.getTime()}:${o.Size}` };
        }
        if (!res.IsTruncated) return;
      }
    }
    return { complete: true, items: items(), cursor: () => null };
  }

  async fetch(item: ListedItem) {
    try {
      const res = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.where.bucket, Key: this.where.prefix + item.path }));
      return { body: res.Body as AsyncIterable<Uint8Array> };
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NoSuchKey') throw new ItemError('the object is gone');
      // The bucket was listed with these keys: an object they may not read (its own ACL, a KMS key, archived:
      // InvalidObjectState) or a 5xx for it is that object's failure, and the others go on; refused keys are the source's.
      const status = e.$metadata?.httpStatusCode;
      if (status !== undefined && status !== 401 && e.name !== 'InvalidAccessKeyId' && e.name !== 'SignatureDoesNotMatch') {
        throw new ItemError(`the bucket would not give the object (${e.name ?? 'HTTP'} ${status})`);
      }
      throw sourceError(err, this.where.bucket);
    }
  }

  async close() {
    // Not client.destroy(): it would destroy the agents, which every source's connections share.
  }
}
