/**
 * What `migrate`, `backup` and `restore` say when a database or a storage location named on their command line
 * cannot be used: one sentence naming it (a database URL once, its password masked), what went wrong in words an
 * operator acts on, and a hint. The drivers' own texts say either too much (the URL again) or too little (an S3
 * answer the SDK cannot read is an "UnknownError"); neither ever holds a password or a secret key.
 */
import { NewerLibraryError } from '../../core/newer-library.js';
import { CliError } from '../../terminal/errors.js';

const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/**
 * `err` from opening the database `where` (redacted), named by `option` (--to-database…), as the refusal to print.
 * openPostgres says the URL itself, with the driver's error as its cause: only the cause is kept.
 */
export function databaseUnreachable(what: string, where: string, option: string, err: unknown): Error {
  if (err instanceof NewerLibraryError || err instanceof CliError) return err; // their own words and exit codes
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const e = cause as { code?: string; message?: string };
  const why = e.message ?? String(cause);
  const hint =
    e.code === '28P01' || e.code === '28000'
      ? `check the user and password in ${option}`
      : e.code === '3D000'
        ? `create the database first (createdb, or CREATE DATABASE … OWNER …), or correct its name in ${option}`
        : e.code && NETWORK.has(e.code)
          ? `check that PostgreSQL runs and listens there, and the host and port in ${option}`
          : undefined;
  return new CliError(`could not open ${what} ${where}: ${why}`, 1, hint);
}

/** `err` from listing or opening the storage `where` (s3://…, or a directory) as the refusal to print. */
export function storageUnreachable(what: string, where: string, err: unknown): Error {
  if (err instanceof NewerLibraryError || err instanceof CliError) return err;
  const inner = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const e = inner as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const said = [e.name && e.name !== 'Error' ? e.name : undefined, status ? `HTTP ${status}` : undefined].filter(Boolean).join(', ');
  if (e.name === 'InvalidAccessKeyId' || e.name === 'SignatureDoesNotMatch' || e.name === 'AccessDenied' || status === 401 || status === 403) {
    return new CliError(`could not use ${what} ${where}: the store refused the access keys (${said})`, 1, 'check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL, AWS_REGION): they must be the bucket\'s');
  }
  if (e.name === 'NoSuchBucket' || status === 404) {
    return new CliError(`could not use ${what} ${where}: there is no such bucket at this endpoint`, 1, 'create the bucket first, or correct its name (and AWS_ENDPOINT_URL)');
  }
  // No answer at all (the store wraps it as StorageUnavailable), or a 5xx; a local folder's errors are not these.
  if ((e.code && NETWORK.has(e.code)) || (status !== undefined && status >= 500) || (err as Error).name === 'StorageUnavailable') {
    return new CliError(`could not use ${what} ${where}: the store did not answer (${e.message ?? said})`, 1, 'check that it runs, and AWS_ENDPOINT_URL');
  }
  return new CliError(`could not use ${what} ${where}: ${e.message && e.message !== e.name ? e.message : said}`);
}
