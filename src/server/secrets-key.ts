/**
 * The key that seals the secrets the server reads back — authenticator-app seeds and sources' credentials
 * (core/sealed-secret.ts): `--secrets-key` (DOCSEARCH_SECRETS_KEY) or the file `--secrets-key-file` names, else
 * `secrets.key` beside the library's files — in the data directory (0600), or with `--storage s3://…` under the
 * prefix every replica shares — made at first start. Never in the database. The library records which key sealed its secrets (an id
 * derived from it, never the key): a replica or a restored library started with another key is refused while
 * secrets sealed under the first one exist, rather than failing every authenticator code later.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectStore } from '../store/objects/object-store.js';
import { newSecretsKeyText, parseSecretsKey, SecretSealer } from '../core/sealed-secret.js';
import type { Logger } from '../core/logger.js';
import type { SettingsStore } from '../store/sql/settings.js';
import type { TwoFactorStore } from '../store/sql/two-factor.js';
import type { ServeConfig } from './config.js';

/** The settings row naming the key the library's secrets are sealed with (`users reset-2fa --all` clears it). */
export const KEY_ID_SETTING = 'secrets_key_id';
export const SECRETS_KEY_FILE = 'secrets.key';

/** The key in a file; made there first when `make` and it is missing (an operator's `--secrets-key-file` never is). */
function keyFromFile(path: string, make: boolean): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !make) throw new Error(`cannot read the secrets key ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    try {
      writeFileSync(path, `${newSecretsKeyText()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (made) {
      if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made; // another process made it first: read theirs
    }
    text = readFileSync(path, 'utf8');
  }
  const key = parseSecretsKey(text);
  if (!key) throw new Error(`${path} does not hold a secrets key (32 bytes as 43 base64url or 64 hex characters)`);
  return key;
}

/**
 * The library's sealer. A key other than the recorded one is taken over only while nothing is sealed yet (a restore
 * onto a new machine before anyone set up an app); once something is, another key stops the start.
 */
/** The key object under the shared prefix, made by the first replica to look (a conditional PUT: one wins). */
async function keyFromStore(store: ObjectStore): Promise<Buffer> {
  let body = await store.get(SECRETS_KEY_FILE);
  if (!body) {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-key-'));
    try {
      writeFileSync(join(dir, 'key'), `${newSecretsKeyText()}\n`, { mode: 0o600 });
      await store.putFileIfAbsent(SECRETS_KEY_FILE, join(dir, 'key'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    body = await store.get(SECRETS_KEY_FILE);
  }
  const key = body ? parseSecretsKey(body.toString('utf8')) : null;
  if (!key) throw new Error(`${store.location}/${SECRETS_KEY_FILE} does not hold a secrets key (32 bytes as 43 base64url or 64 hex characters)`);
  return key;
}

export async function openSecretsKey(
  config: Pick<ServeConfig, 'secretsKey' | 'secretsKeyFile' | 'dataDir'>,
  deps: { settings: Pick<SettingsStore, 'getOrCreate' | 'set'>; sealed: Pick<TwoFactorStore, 'anySealed'>; sharedStore?: ObjectStore; log: Logger },
): Promise<SecretSealer> {
  const key = config.secretsKey
    ? parseSecretsKey(config.secretsKey)!
    : config.secretsKeyFile
      ? keyFromFile(config.secretsKeyFile, false)
      : deps.sharedStore
        ? await keyFromStore(deps.sharedStore)
        : keyFromFile(join(config.dataDir, SECRETS_KEY_FILE), true);
  const sealer = new SecretSealer(key);
  const recorded = await deps.settings.getOrCreate(KEY_ID_SETTING, () => sealer.keyId);
  if (recorded === sealer.keyId) return sealer;
  if (await deps.sealed.anySealed()) {
    throw new Error(
      `this library seals authenticator-app secrets and sources' credentials with another secrets key (id ${recorded}; this one is ${sealer.keyId}): ` +
        `give every replica the same DOCSEARCH_SECRETS_KEY, or copy ${SECRETS_KEY_FILE} from where the library this one was restored or moved from kept it (its data directory, or its storage prefix). ` +
        'If that key is lost, `docsearch users reset-2fa --all` removes every authenticator app (recovery codes and passkeys go too) so that accounts sign in with their passwords and set one up again',
    );
  }
  deps.log.info({ event: 'secrets_key.adopted', key_id: sealer.keyId }, "no secret was sealed with the previous secrets key: this one is the library's now");
  await deps.settings.set(KEY_ID_SETTING, sealer.keyId);
  return sealer;
}
