/**
 * A request that got no answer (refused, reset, timed out, cut off mid-answer), told apart from an answer the
 * CLI did not like: the first may be asked again (request-retry.ts), the second not.
 */
import { ApiError, CliError } from '../terminal/errors.js';
import { blockedPortText } from '../core/fetch-blocked-ports.js';

/** Describes a fetch failure ("fetch failed" says nothing) by its network cause; `hint` says how to point elsewhere. */
export function networkError(baseUrl: string, err: unknown, hint = 'check --server or DOCSEARCH_URL'): CliError {
  const cause = (err as { cause?: { code?: string; message?: string; path?: string; syscall?: string } }).cause;
  // A file of a streamed upload that could not be read: not the server's fault.
  if (cause?.path && cause.syscall) return new CliError(`cannot read ${cause.path} (${cause.code ?? cause.message})`, undefined, 'check the file\'s permissions');
  // Refused by fetch itself before any connection: "is it running?" would mislead, so say why.
  if (cause?.message === 'bad port') return new UnreachableError(`could not reach ${baseUrl} (bad port): ${blockedPortText(Number(new URL(baseUrl).port))}`, 'bad port', hint);
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new UnreachableError(`could not reach ${baseUrl} (${why}) — is \`docsearch serve\` running?`, why, hint);
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
