/**
 * Where shared storage lives: `s3://bucket/prefix`, with the endpoint, region and credentials from the standard
 * AWS variables (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, and AWS_SESSION_TOKEN
 * with temporary keys). Parsed once, checked
 * before anything connects: credentials never appear in the URL, and plain http is only allowed to this machine.
 */
import { isIP } from 'node:net';

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  region: string;
  /** A custom endpoint (RGW, MinIO, R2…); absent means AWS itself. */
  endpoint?: string;
  /** Absent: each client's default chain (instance role, profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export class StorageConfigError extends Error {
  override name = 'StorageConfigError';
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** `s3://bucket/prefix` plus the AWS variables; throws StorageConfigError naming what is wrong. */
export function parseS3Location(url: string, env: NodeJS.ProcessEnv): S3Location {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StorageConfigError(`"${url}" is not a URL; expected s3://bucket/prefix`);
  }
  if (parsed.protocol !== 's3:') throw new StorageConfigError(`unsupported storage "${parsed.protocol}//…"; expected s3://bucket/prefix`);
  if (parsed.username || parsed.password) throw new StorageConfigError('credentials do not go in the storage URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (parsed.search || parsed.hash) throw new StorageConfigError('the storage URL takes no query or fragment; expected s3://bucket/prefix');
  const bucket = parsed.hostname;
  if (!BUCKET.test(bucket)) throw new StorageConfigError(`"${bucket}" is not a valid bucket name (3–63 lowercase letters, digits, dots, hyphens)`);
  const prefix = decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, '');

  const keyId = env.AWS_ACCESS_KEY_ID || undefined;
  const secret = env.AWS_SECRET_ACCESS_KEY || undefined;
  if ((keyId === undefined) !== (secret === undefined)) throw new StorageConfigError('set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither (to use the instance role or profile)');

  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  if (endpoint !== undefined) {
    let e: URL;
    try {
      e = new URL(endpoint);
    } catch {
      throw new StorageConfigError(`AWS_ENDPOINT_URL "${endpoint}" is not a URL`);
    }
    if (e.protocol !== 'https:' && e.protocol !== 'http:') throw new StorageConfigError(`AWS_ENDPOINT_URL must be an http(s) URL, got "${e.protocol}"`);
    if (e.protocol === 'http:' && !isLoopback(e.hostname))
      throw new StorageConfigError(`AWS_ENDPOINT_URL ${e.origin} is plain http to another machine: keys and files would cross the network unencrypted; use https (http is allowed only for a loopback endpoint)`);
  }
  return {
    bucket,
    prefix,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    ...(endpoint ? { endpoint: endpoint.replace(/\/+$/, '') } : {}),
    ...(keyId && secret ? { credentials: { accessKeyId: keyId, secretAccessKey: secret, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } } : {}),
  };
}

/** The location as a URL for messages and logs (never credentials). */
export const describeS3 = (loc: Pick<S3Location, 'bucket' | 'prefix'>, sub = ''): string => `s3://${[loc.bucket, loc.prefix, sub].filter(Boolean).join('/')}`;

/** What is wrong with a `--storage` value in this environment, or null (the configuration's check). */
export function storageProblem(value: string, env: NodeJS.ProcessEnv): string | null {
  try {
    parseS3Location(value, env);
    return null;
  } catch (err) {
    if (err instanceof StorageConfigError) return err.message;
    throw err;
  }
}
