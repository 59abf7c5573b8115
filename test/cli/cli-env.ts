import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.js';

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
