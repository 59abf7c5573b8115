import { join } from 'node:path';
import { CliError, UsageError } from '../terminal/errors.js';
import { type IO, warn } from '../terminal/io.js';
import { configDir } from './paths.js';
import { readJsonFile, writePrivateJson } from './private-json-file.js';

/** What `docsearch login` keeps per server. Never printed; `whoami --show-token` is the one way out. */
export interface StoredCredential {
  /** `oauth`: from the browser login (refreshable); `token`: an API key or access token given with --with-token. */
  type: 'oauth' | 'token';
  access_token: string;
  refresh_token?: string;
  /** Epoch milliseconds when the access token expires (oauth only). */
  expires_at?: number;
  scope?: string;
}

/**
 * Secrets per server URL. Implementations: the OS keychain (preferred) and a mode-0600 JSON file
 * where no keychain exists. Like a storage adapter, callers never know which one they hold.
 */
export interface CredentialStore {
  /** `keychain` or `file`, for `whoami` and notices. */
  readonly kind: 'keychain' | 'file';
  /** Where it lives, in words (the file path, or the keychain service name). */
  readonly location: string;
  get(server: string): Promise<StoredCredential | null>;
  set(server: string, credential: StoredCredential): Promise<void>;
  /** Forgets the server's credential; false when there was none. */
  delete(server: string): Promise<boolean>;
  /** The servers it holds a credential for (`auth status`). */
  list(): Promise<string[]>;
}

const SERVICE = 'docsearch';
/** A keychain that hangs (a locked D-Bus secret service) must not hang the CLI (gh's keyring timeout). */
const KEYCHAIN_TIMEOUT_MS = 5_000;

/** Each field of a StoredCredential of the type it must have: a refresh token of another type was sent on as one. */
const isCredential = (c: Partial<Record<keyof StoredCredential, unknown>> | null): c is StoredCredential =>
  c !== null &&
  typeof c === 'object' &&
  (c.type === 'oauth' || c.type === 'token') &&
  typeof c.access_token === 'string' &&
  (c.refresh_token === undefined || typeof c.refresh_token === 'string') &&
  (c.expires_at === undefined || Number.isFinite(c.expires_at)) &&
  (c.scope === undefined || typeof c.scope === 'string');

function parseCredential(text: string | undefined | null): StoredCredential | null {
  if (!text) return null;
  try {
    const c = JSON.parse(text) as Partial<Record<keyof StoredCredential, unknown>> | null;
    return isCredential(c) ? c : null;
  } catch {
    return null;
  }
}

/** First line of a native error: keyring errors carry a Rust backtrace after it. */
const firstLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0]!.trim();

/** The OS keychain through @napi-rs/keyring (the keytar API's maintained successor), one entry per server. */
export class KeychainStore implements CredentialStore {
  readonly kind = 'keychain' as const;
  readonly location = `the OS keychain (service "${SERVICE}")`;

  /** The native binding, loaded on first use; docsearch-cli has it as an optional dependency, which may be absent. */
  private async keyring() {
    try {
      return await import('@napi-rs/keyring');
    } catch (err) {
      throw new KeychainUnavailable(`the keychain binding @napi-rs/keyring is not installed (${firstLine(err)})`);
    }
  }

  private async entry(server: string) {
    const { AsyncEntry } = await this.keyring();
    return new AsyncEntry(SERVICE, server);
  }

  private async withTimeout<T>(what: string, op: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(KEYCHAIN_TIMEOUT_MS);
    try {
      return await op(signal);
    } catch (err) {
      throw new KeychainUnavailable(`${what}: ${signal.aborted ? 'timed out' : firstLine(err)}`);
    }
  }

  async get(server: string) {
    const e = await this.entry(server);
    return parseCredential(await this.withTimeout('reading the keychain', (signal) => e.getPassword(signal)));
  }

  async set(server: string, credential: StoredCredential) {
    const e = await this.entry(server);
    await this.withTimeout('writing the keychain', (signal) => e.setPassword(JSON.stringify(credential), signal));
  }

  async delete(server: string) {
    const e = await this.entry(server);
    return this.withTimeout('deleting from the keychain', (signal) => e.deleteCredential(signal));
  }

  async list() {
    const { findCredentialsAsync } = await this.keyring();
    const found = await this.withTimeout('searching the keychain', (signal) => findCredentialsAsync(SERVICE, null, signal));
    return found.filter((c) => parseCredential(c.password)).map((c) => c.account);
  }
}

export class KeychainUnavailable extends Error {
  override name = 'KeychainUnavailable';
}

/** A JSON file, mode 0600 in a 0700 directory: the fallback where no keychain exists. */
export class FileStore implements CredentialStore {
  readonly kind = 'file' as const;
  readonly location: string;

  constructor(readonly path: string) {
    this.location = path;
  }

  private readAll(): Record<string, StoredCredential> {
    const hint = 'delete the file and run `docsearch login` again';
    const parsed = readJsonFile(this.path, hint);
    if (parsed === undefined) return {};
    const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
    // Checked, not cast: a login written over a file of another shape spread its characters into the servers.
    const servers = isObject(parsed) ? (parsed.servers ?? {}) : undefined;
    if (!isObject(servers)) throw new CliError(`cannot read ${this.path}: not a credentials file of docsearch ({"servers": {…}})`, undefined, hint);
    return servers as Record<string, StoredCredential>;
  }

  private writeAll(servers: Record<string, StoredCredential>): void {
    writePrivateJson(this.path, { servers });
  }

  async get(server: string) {
    return parseCredential(JSON.stringify(this.readAll()[server] ?? null));
  }

  async set(server: string, credential: StoredCredential) {
    this.writeAll({ ...this.readAll(), [server]: credential });
  }

  async delete(server: string) {
    const all = this.readAll();
    if (!(server in all)) return false;
    delete all[server];
    this.writeAll(all);
    return true;
  }

  async list() {
    return Object.keys(this.readAll());
  }
}

/**
 * The keychain first, the file where none is available. `DOCSEARCH_CREDENTIALS` chooses explicitly:
 * `keychain` (fail if missing), `file` (never touch the keychain: tests, containers) or `auto` (default).
 * Writing to the file prints a one-line warning, once per process.
 */
export class FallbackStore implements CredentialStore {
  private active: CredentialStore;
  private warned = false;

  constructor(
    private readonly io: IO,
    private readonly keychain: CredentialStore,
    private readonly file: FileStore,
    private readonly mode: 'auto' | 'keychain' | 'file',
  ) {
    this.active = mode === 'file' ? file : keychain;
  }

  get kind() {
    return this.active.kind;
  }

  get location() {
    return this.active.location;
  }

  private async run<T>(op: (store: CredentialStore) => Promise<T>): Promise<T> {
    try {
      return await op(this.active);
    } catch (err) {
      if (!(err instanceof KeychainUnavailable)) throw err;
      if (this.mode === 'keychain') throw new CliError(`no OS keychain available: ${err.message}`, undefined, 'set DOCSEARCH_CREDENTIALS=file to keep credentials in a 0600 file instead');
      this.fallbackReason = err.message;
      this.active = this.file;
      return op(this.active);
    }
  }

  private fallbackReason: string | undefined;

  private warnFile(): void {
    if (this.warned || this.active !== this.file) return;
    this.warned = true;
    const why = this.mode === 'file' ? 'DOCSEARCH_CREDENTIALS=file' : `no OS keychain available (${this.fallbackReason ?? 'unknown error'})`;
    warn(this.io, `${why}: storing credentials in plain text in ${this.file.path} (mode 0600)`);
  }

  async get(server: string) {
    let askedFile = false;
    const found = await this.run((s) => {
      askedFile = s === this.file;
      return s.get(server);
    });
    // Some keychains read fine (empty) yet refuse writes, so an earlier login may sit in the file. Decided by
    // the store this call asked, not `active`: a concurrent call may have switched it meanwhile.
    if (found || this.mode !== 'auto' || askedFile) return found;
    const inFile = await this.file.get(server);
    if (inFile) this.active = this.file;
    return inFile;
  }

  async set(server: string, credential: StoredCredential) {
    await this.run((s) => s.set(server, credential));
    this.warnFile();
  }

  async delete(server: string) {
    const deleted = await this.run((s) => s.delete(server));
    // Forget a file copy too (left by an earlier fallback), so logout leaves nothing behind.
    const fromFile = this.mode === 'auto' && this.active !== this.file ? await this.file.delete(server) : false;
    return deleted || fromFile;
  }

  async list() {
    const listed = await this.run((s) => s.list());
    // In auto mode an earlier fallback may have left logins in the file beside the keychain's.
    const inFile = this.mode === 'auto' && this.active !== this.file ? await this.file.list() : [];
    return [...new Set([...listed, ...inFile])];
  }
}

export function createCredentialStore(io: IO): CredentialStore {
  const raw = (io.env.DOCSEARCH_CREDENTIALS || 'auto').toLowerCase(); // set but empty means the default
  if (raw !== 'auto' && raw !== 'keychain' && raw !== 'file') {
    throw new UsageError(`DOCSEARCH_CREDENTIALS must be auto, keychain or file (got "${raw}")`);
  }
  return new FallbackStore(io, new KeychainStore(), new FileStore(join(configDir(io.env), 'credentials.json')), raw);
}
