import { join } from 'node:path';
import { configDir } from './paths.js';
import { readJsonFile, writePrivateJson } from './private-json-file.js';

/** Non-secret CLI settings (config.json). Secrets live in the CredentialStore, never here. */
export interface CliSettings {
  /** The server `docsearch login` last logged in to: the default for later commands. */
  default_server?: string;
}

export class CliConfig {
  readonly path: string;
  constructor(env: NodeJS.ProcessEnv) {
    this.path = join(configDir(env), 'config.json');
  }

  read(): CliSettings {
    const parsed = readJsonFile(this.path, 'fix or delete the file, then run `docsearch login` again');
    return parsed && typeof parsed === 'object' ? (parsed as CliSettings) : {};
  }

  update(change: Partial<CliSettings>): void {
    writePrivateJson(this.path, { ...this.read(), ...change });
  }
}
