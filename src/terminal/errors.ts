/**
 * CLI errors and exit codes, decided in one place (like gh's cmd.go): 0 ok, 1 error, 2 usage,
 * 3 a library too new for this build (server side), 4 authentication needed. Each error carries an optional hint: what to do next.
 */
export const EXIT = { ok: 0, error: 1, usage: 2, newerLibrary: 3, auth: 4, interrupted: 130 } as const;

/** The exit-code table as shown in `--help`, README and docs/cli.md. */
export const EXIT_CODE_TABLE: ReadonlyArray<readonly [number, string]> = [
  [EXIT.ok, 'success'],
  [EXIT.error, 'error (a request failed, a file failed to ingest, a project or document not found, the server is unreachable)'],
  [EXIT.usage, 'usage error (bad flags or arguments; a confirmation needed: `--yes`, or `--force` past the delete guard of `upload --sync --prune`; `login` without a terminal)'],
  [EXIT.newerLibrary, '`serve` or an operator command refused a library written by a newer docsearch (upgrade docsearch; nothing in the library was changed)'],
  [EXIT.auth, 'authentication needed (run `docsearch login`, or set DOCSEARCH_TOKEN), or a credential that is not a valid key'],
  [EXIT.interrupted, 'interrupted (Ctrl-C) while uploading, waiting, watching or acting on several documents; what the server already accepted goes on there, and `--json` still prints what was done'],
];

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly hint?: string,
    /** What went wrong in a word: `error.code` in the `--json` of a command stopped partway (see errorJson). */
    readonly code: string = 'error',
  ) {
    super(message);
  }
}

/**
 * What stopped a command partway, for its `--json` document (`"error": {code, message}`, docs/cli.md): scripts
 * branch on the code; the message is the one stderr shows.
 */
export function errorJson(err: unknown): { code: string; message: string } {
  if (err instanceof CliError) return { code: err.code, message: err.message };
  return { code: 'error', message: err instanceof Error ? err.message : String(err) };
}

export class UsageError extends CliError {
  override name = 'UsageError';
  override readonly code = 'usage';
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
  }
}

export const LOGIN_HINT = 'run `docsearch login` (or set DOCSEARCH_TOKEN to an API key)';

export class AuthRequiredError extends CliError {
  override name = 'AuthRequiredError';
  override readonly code = 'unauthenticated';
  constructor(message = 'not logged in', hint = LOGIN_HINT) {
    super(message, EXIT.auth, hint);
  }
}

/** The user answered "no" to a confirmation or pressed Ctrl-C at a prompt. */
export class CancelledError extends CliError {
  override name = 'CancelledError';
  override readonly code = 'cancelled';
  constructor(message = 'cancelled') {
    super(message, EXIT.error);
  }
}

/** Ctrl-C while waiting on the server: says what goes on there without the CLI (printed without "error:"). */
export class InterruptedError extends CliError {
  override name = 'InterruptedError';
  override readonly code = 'interrupted';
  constructor(message: string, hint?: string) {
    super(message, EXIT.interrupted, hint);
  }
}

/** A non-2xx answer from the API, carrying the server's code and request id for bug reports. */
export class ApiError extends CliError {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    code: string,
    readonly requestId: string | undefined,
    hint?: string,
  ) {
    super(message, EXIT.error, hint, code);
  }
}
