/**
 * Secrets the server must read back (an authenticator app's TOTP seed) are kept sealed: AES-256-GCM under a key
 * that is not in the database (`<data-dir>/secrets.key`, or DOCSEARCH_SECRETS_KEY for replicas), so a copy of the
 * database alone — a PostgreSQL dump, a stolen backup of it — gives no one a second factor. Each sealed value is
 * bound to what it belongs to (`context`, e.g. the account's id): moved to another row, it does not open.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const SECRETS_KEY_BYTES = 32;

/** A key as text: 32 bytes in base64url (43 characters) or hex (64). Null when the text is neither. */
export function parseSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9_-]{43}=?$/.test(t)) {
    const key = Buffer.from(t, 'base64url');
    return key.length === SECRETS_KEY_BYTES ? key : null;
  }
  return null;
}

/** The key in a file the operator named (`--secrets-key-file`): never made here. Throws an Error saying why it cannot be used. */
export function readSecretsKeyFile(path: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the secrets key ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const key = parseSecretsKey(text);
  if (!key) throw new Error(`${path} does not hold a secrets key (32 bytes as 43 base64url or 64 hex characters)`);
  return key;
}

export const newSecretsKeyText = (): string => randomBytes(SECRETS_KEY_BYTES).toString('base64url');

export class SecretSealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes`);
  }

  /** Names the key without revealing it: replicas and restores compare it to the one their library was sealed with. */
  get keyId(): string {
    return createHmac('sha256', this.key).update('docsearch-secrets-key-id').digest('base64url').slice(0, 16);
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** The plain text, or null when it was sealed under another key or for another context, or was changed. */
  open(sealed: string, context: string): string | null {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
