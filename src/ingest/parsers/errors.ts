/**
 * A document that cannot be parsed. `permanent` tells the job queue not to retry: the same bytes fail the same
 * way. The message is shown to the person who uploaded the file, so it names the problem in their words.
 */
export class ParseError extends Error {
  readonly permanent = true as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ParseError';
  }
}

export const isParseError = (err: unknown): err is ParseError =>
  err instanceof ParseError ||
  (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ParseError' &&
    (err as { permanent?: unknown }).permanent === true);
