/**
 * CLI errors and exit codes, decided in one place (like gh's cmd.go): 0 ok, 1 error, 2 usage,
 * 4 authentication needed. Each error carries an optional hint: what to do next.
 */
export const EXIT = { ok: 0, error: 1, usage: 2, auth: 4 } as const;

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
  }
}

export class AuthRequiredError extends CliError {
  override name = 'AuthRequiredError';
  constructor(message = 'not logged in', hint = 'run `docsearch login` (or set DOCSEARCH_TOKEN to an API key)') {
    super(message, EXIT.auth, hint);
  }
}
