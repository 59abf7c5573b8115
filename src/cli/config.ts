import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './errors.js';
import { configDir } from './paths.js';

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
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return {};
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as CliSettings) : {};
    } catch {
      throw new CliError(`cannot read ${this.path}: not valid JSON`, undefined, 'fix or delete the file, then run `docsearch login` again');
    }
  }

  update(change: Partial<CliSettings>): void {
    const next = { ...this.read(), ...change };
    mkdirSync(join(this.path, '..'), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
  }
}
