import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addUser, type Daemon, type StartOptions, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

/**
 * Environment for running the CLI in a test: its own config home (never the real one), the file
 * credential store (never the real keychain), and no credential inherited from the developer's shell.
 */
export function cliEnv(daemon: Daemon | null, extra: Record<string, string> = {}): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'docsearch-cli-'));
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    DOCSEARCH_CREDENTIALS: 'file',
    DOCSEARCH_TOKEN: '',
    DOCSEARCH_URL: daemon?.url ?? '',
    NO_COLOR: '1',
    ...extra,
  };
}

export interface CliSuite {
  d: Daemon;
  user: TestUser;
  /** Runs the CLI as `user` (DOCSEARCH_TOKEN) against `d`. */
  env: Record<string, string>;
}

/**
 * One daemon and one user for the enclosing describe block, handed to `ready` once started:
 * `cliSuite((s) => ({ d, user, env } = s))`.
 */
export function cliSuite(ready: (s: CliSuite) => void, opts: StartOptions & { setupTimeoutMs?: number } = {}): void {
  daemonForSuite(async (d) => {
    const user = await addUser(d);
    ready({ d, user, env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) });
  }, { cleanExit: false, ...opts });
}

/** An http://127.0.0.1 URL nothing listens on: a free port outside the range other tests' servers get theirs from. */
export async function unusedUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
