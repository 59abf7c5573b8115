/**
 * The key that seals the secrets the server reads back — authenticator-app seeds and sources' credentials
 * (core/sealed-secret.ts): `--secrets-key` (DOCSEARCH_SECRETS_KEY) or the file `--secrets-key-file` names, else
 * `secrets.key` beside the library's files — in the data directory (0600), or with `--storage s3://…` under the
 * prefix every replica shares — made at first start. Never in the database. The library records which key sealed its secrets (an id
 * derived from it, never the key): a replica or a restored library started with another key is refused while
 * secrets sealed under the first one exist, rather than failing every authenticator code later.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalObjectStore } from '../store/objects/local.js';
import type { ObjectStore } from '../store/objects/object-store.js';
import { newSecretsKeyText, parseSecretsKey, readSecretsKeyFile, SecretSealer } from '../core/sealed-secret.js';
import type { Logger } from '../core/logger.js';
import type { SettingsStore } from '../store/sql/settings.js';
import type { TwoFactorStore } from '../store/sql/two-factor.js';
import type { ServeConfig } from './config.js';

/** The settings row naming the key the library's secrets are sealed with (`users reset-2fa --all` clears it). */
export const KEY_ID_SETTING = 'secrets_key_id';
export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * Where a library keeps its key when no option gives it: `secrets.key` in the data directory, or under the storage
 * prefix its replicas share (the same object store `backup`, `restore` and `migrate` open as the library's root).
 */
export const keyPlace = (dataDir: string, shared?: ObjectStore): ObjectStore => shared ?? new LocalObjectStore(dataDir);

/** The key kept at `place`, or null when there is none. */
async function keyAt(place: ObjectStore): Promise<Buffer | null> {
  const body = await place.get(SECRETS_KEY_FILE);
  if (!body) return null;
  const key = parseSecretsKey(body.toString('utf8'));
  if (!key) throw new Error(`${place.location}/${SECRETS_KEY_FILE} does not hold a secrets key (32 bytes as 43 base64url or 64 hex characters)`);
  return key;
}

/** The library's key as its daemon finds it (an option, else its place), without making one: null when there is none yet. */
export async function readSecretsKey(config: Pick<ServeConfig, 'secretsKey' | 'secretsKeyFile'>, place: ObjectStore): Promise<{ key: Buffer; from: 'option' | 'place' } | null> {
  if (config.secretsKey) return { key: parseSecretsKey(config.secretsKey)!, from: 'option' };
  if (config.secretsKeyFile) return { key: readSecretsKeyFile(config.secretsKeyFile), from: 'option' };
  const key = await keyAt(place);
  return key ? { key, from: 'place' } : null;
}

/**
 * Puts `key` at `place` (mode 0600 in a data directory) unless a key is there already: a conditional write, so
 * that of replicas starting at once one wins. Returns the key there afterwards.
 */
export async function placeSecretsKey(place: ObjectStore, key: Buffer): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-key-'));
  try {
    writeFileSync(join(dir, 'key'), `${key.toString('base64url')}\n`, { mode: 0o600 });
    await place.putFileIfAbsent(SECRETS_KEY_FILE, join(dir, 'key'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const there = await keyAt(place);
  if (!there) throw new Error(`${place.location}/${SECRETS_KEY_FILE} could not be written`);
  return there;
}

/**
 * The library's sealer. A key other than the recorded one is taken over only while nothing is sealed yet (a restore
 * onto a new machine before anyone set up an app); once something is, another key stops the start — and a start
 * that stops writes nothing: no new key is made where the right one is missing, to be in the way later.
 */
export async function openSecretsKey(
  config: Pick<ServeConfig, 'secretsKey' | 'secretsKeyFile' | 'dataDir'>,
  deps: { settings: Pick<SettingsStore, 'get' | 'getOrCreate' | 'set'>; sealed: Pick<TwoFactorStore, 'anySealed'>; sharedStore?: ObjectStore; log: Logger },
): Promise<SecretSealer> {
  const place = keyPlace(config.dataDir, deps.sharedStore);
  const found = await readSecretsKey(config, place);
  let key = found?.key;
  if (!key) {
    const recorded = await deps.settings.get(KEY_ID_SETTING);
    if (recorded && (await deps.sealed.anySealed())) {
      throw new Error(
        `there is no secrets key at ${place.location}/${SECRETS_KEY_FILE}, and this library seals authenticator-app secrets, sources' credentials and unsent mail with one (id ${recorded}): ` +
          `put back the ${SECRETS_KEY_FILE} it had (\`docsearch restore\` and \`docsearch migrate\` bring it along), or give it with DOCSEARCH_SECRETS_KEY. Nothing was written. ` +
          'If that key is lost, `docsearch users reset-2fa --all` removes every authenticator app (recovery codes and passkeys go too) so that accounts sign in with their passwords and set one up again',
      );
    }
    key = await placeSecretsKey(place, parseSecretsKey(newSecretsKeyText())!);
  }
  const sealer = new SecretSealer(key);
  const recorded = await deps.settings.getOrCreate(KEY_ID_SETTING, () => sealer.keyId);
  if (recorded === sealer.keyId) return sealer;
  if (await deps.sealed.anySealed()) {
    throw new Error(
      `this library seals authenticator-app secrets, sources' credentials and unsent mail with another secrets key (id ${recorded}; this one is ${sealer.keyId}): ` +
        `give every replica the same DOCSEARCH_SECRETS_KEY, or copy ${SECRETS_KEY_FILE} from where the library this one was restored or moved from kept it (its data directory, or its storage prefix). ` +
        'If that key is lost, `docsearch users reset-2fa --all` removes every authenticator app (recovery codes and passkeys go too) so that accounts sign in with their passwords and set one up again',
    );
  }
  deps.log.info({ event: 'secrets_key.adopted', key_id: sealer.keyId }, "no secret was sealed with the previous secrets key: this one is the library's now");
  await deps.settings.set(KEY_ID_SETTING, sealer.keyId);
  return sealer;
}
