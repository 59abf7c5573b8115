import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from './paths.js';
import { CliError } from '../terminal/errors.js';
import { readJsonFile, writePrivateJson } from './private-json-file.js';

/** Non-secret CLI settings. Secrets live in the CredentialStore, never here. */
export interface CliSettings {
  /** The server `docsearch login` last logged in to: the default for later commands. */
  default_server?: string;
}

const CLIENT_KEYS: ReadonlyArray<keyof CliSettings> = ['default_server'];

/**
 * The CLI's own settings file, `$XDG_CONFIG_HOME/docsearch/client.json`. `config.json` beside it is the
 * server's (`docsearch serve`). CLIs up to 0.1 wrote `default_server` into config.json, which then stopped
 * serve from starting; such a key is moved here the first time it is read (and serve ignores it).
 */
export class CliConfig {
  readonly path: string;
  private readonly legacyPath: string;

  constructor(env: NodeJS.ProcessEnv) {
    this.path = join(configDir(env), 'client.json');
    this.legacyPath = join(configDir(env), 'config.json');
  }

  read(): CliSettings {
    const hint = 'fix or delete the file, then run `docsearch login` again';
    const parsed = readJsonFile(this.path, hint);
    if (parsed === undefined) return this.migrateLegacy();
    // Checked, not cast: a number as default_server was taken for a host ("5" → http://0.0.0.5).
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`cannot read ${this.path}: not a JSON object`, undefined, hint);
    const server = (parsed as Record<string, unknown>).default_server;
    if (server !== undefined && typeof server !== 'string') throw new CliError(`cannot read ${this.path}: default_server is not a string (a server URL)`, undefined, hint);
    return parsed as CliSettings; // keys of another version kept as they are
  }

  update(change: Partial<CliSettings>): void {
    writePrivateJson(this.path, { ...this.read(), ...change });
  }

  /** Moves client keys out of the server's config.json; deletes that file when nothing else was in it. */
  private migrateLegacy(): CliSettings {
    let legacy: unknown;
    try {
      legacy = readJsonFile(this.legacyPath, '');
    } catch {
      return {}; // not JSON: the server's problem to report, not ours
    }
    if (!legacy || typeof legacy !== 'object' || Array.isArray(legacy)) return {};
    const all = legacy as Record<string, unknown>;
    const mine = Object.fromEntries(CLIENT_KEYS.filter((k) => typeof all[k] === 'string').map((k) => [k, all[k]])) as CliSettings;
    if (Object.keys(mine).length === 0) return {};
    writePrivateJson(this.path, mine);
    const rest = Object.fromEntries(Object.entries(all).filter(([k]) => !(CLIENT_KEYS as string[]).includes(k)));
    if (Object.keys(rest).length === 0) rmSync(this.legacyPath, { force: true });
    else writePrivateJson(this.legacyPath, rest);
    return mine;
  }
}
