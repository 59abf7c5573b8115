import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * Secrets the server must use again later (a source's password or access key), sealed at rest with AES-256-GCM under
 * a key the operator keeps outside the database (`--secrets-key-file`): a copy of the database alone reveals none of
 * them. Each sealed value names its key by a short fingerprint, so a value sealed under another key is told apart
 * from a damaged one; `context` (a source's id) is bound in as associated data, so a sealed value copied onto
 * another record does not open there.
 */
export class SealedBoxError extends Error {
  override name = 'SealedBoxError';
}

const VERSION = 'v1';
const IV_BYTES = 12;
/** Key material a file must hold at least (after trimming): 32 characters, e.g. `openssl rand -hex 32` gives 64. */
export const MIN_KEY_MATERIAL = 32;

export class SealedBox {
  private readonly key: Buffer;
  /** Names the key in sealed values (8 hex characters of a hash of the key: says which, reveals nothing). */
  readonly keyId: string;

  constructor(material: Buffer) {
    if (material.length < MIN_KEY_MATERIAL) throw new SealedBoxError(`the key must hold at least ${MIN_KEY_MATERIAL} bytes (e.g. the output of \`openssl rand -hex 32\`)`);
    // Whatever the file holds (hex, base64, raw bytes), HKDF makes a uniform 256-bit key of it.
    this.key = Buffer.from(hkdfSync('sha256', material, 'docsearch', 'sealed secrets', 32));
    this.keyId = createHash('sha256').update(this.key).digest('hex').slice(0, 8);
  }

  /** The key in a file: its bytes, surrounding whitespace trimmed. */
  static fromFile(path: string): SealedBox {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw new SealedBoxError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const text = bytes.toString('latin1');
    return new SealedBox(Buffer.from(text.trim(), 'latin1'));
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, this.keyId, ...[iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'))].join('.');
  }

  open(sealed: string, context: string): string {
    const [version, keyId, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new SealedBoxError('the sealed value is damaged');
    if (keyId !== this.keyId) throw new SealedBoxError(`it was sealed under another key (${keyId}; this server's is ${this.keyId}): the secrets key file changed`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedBoxError('the sealed value is damaged, or belongs to another record');
    }
  }
}
