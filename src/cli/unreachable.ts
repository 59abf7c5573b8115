/**
 * A request that got no answer (refused, reset, timed out, cut off mid-answer), told apart from an answer the
 * CLI did not like: the first may be asked again (request-retry.ts), the second not.
 */
import { ApiError, CliError } from '../terminal/errors.js';
import { blockedPortText } from '../core/fetch-blocked-ports.js';

export const UNREACHABLE_HINT = 'check --server or DOCSEARCH_URL';

/** Describes a fetch failure ("fetch failed" says nothing) by its network cause; `hint` says how to point elsewhere. */
export function networkError(baseUrl: string, err: unknown, hint = UNREACHABLE_HINT): CliError {
  const cause = (err as { cause?: { code?: string; message?: string; path?: string; syscall?: string } }).cause;
  // A file of a streamed upload that could not be read: not the server's fault.
  if (cause?.path && cause.syscall) return new CliError(`cannot read ${cause.path} (${cause.code ?? cause.message})`, undefined, 'check the file\'s permissions');
  // Refused by fetch itself before any connection: "is it running?" would mislead, so say why.
  if (cause?.message === 'bad port') return new UnreachableError(`could not reach ${baseUrl} (bad port): ${blockedPortText(Number(new URL(baseUrl).port))}`, 'bad port', hint);
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  // A server that answered, over TLS this machine does not trust: "is it running?" would send the person looking
  // in the wrong place.
  if (cause?.code && UNTRUSTED_CERTIFICATE.test(cause.code)) {
    return new UnreachableError(
      `${baseUrl} presented a TLS certificate this machine does not trust (${why})`,
      why,
      'if the server uses a private or self-signed certificate, point NODE_EXTRA_CA_CERTS at the PEM file of its CA (or of the certificate itself)',
    );
  }
  if (cause?.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || cause?.code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return new UnreachableError(`${baseUrl} did not answer TLS (${why}): it may speak plain http`, why, `try the address with http:// instead (${hint})`);
  }
  return new UnreachableError(`could not reach ${baseUrl} (${why}) — is \`docsearch serve\` running?`, why, hint);
}

/** OpenSSL's and Node's codes for a certificate chain or name that does not check out. */
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_(GET_ISSUER|VERIFY)/;

/** The connection went after the answer began: the server (or a proxy in front of it) dropped it midway. */
export function cutOff(baseUrl: string, request: string, err: unknown): UnreachableError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new UnreachableError(
    `${baseUrl} closed the connection in the middle of its answer to ${request} (${why})`,
    why,
    'the server or a proxy in front of it dropped the connection; try again, and if it keeps happening look in the server\'s log',
  );
}

/** No answer from the server (refused, reset, timed out): what a caller may retry, unlike an answer it did not like. */
export class UnreachableError extends CliError {
  override name = 'UnreachableError';
  override readonly code = 'unreachable';
  constructor(
    message: string,
    /** The network cause in a word or two (ECONNREFUSED). */
    readonly why: string,
    hint?: string,
  ) {
    super(message, undefined, hint);
  }
}

/** No answer, or the answer of a server on its way down or up (a proxy in front of a restarting daemon): worth asking again. */
export const isTransient = (err: unknown): boolean => err instanceof UnreachableError || (err instanceof ApiError && [502, 503, 504].includes(err.status));
