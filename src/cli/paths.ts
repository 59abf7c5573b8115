import { homedir } from 'node:os';
import { join } from 'node:path';

/** $XDG_CONFIG_HOME/docsearch (default ~/.config/docsearch): where the CLI keeps its settings. */
export function configDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'docsearch');
}
