import { hash, verify } from '@node-rs/argon2';

/**
 * Argon2id with OWASP's recommended floor (19 MiB, 2 passes): memory-hard so a stolen database
 * resists GPU cracking, cheap enough for a login on 2 cores.
 */
const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 8;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * Whether `password` matches `passwordHash`. A stored value that is no Argon2 hash ('!': an account made by the
 * identity provider, or deleted) matches nothing, and costs what an unknown account's check costs: refused at once,
 * it would tell which e-mails have such an account.
 */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  if (!passwordHash.startsWith('$argon2')) {
    await verify(await unknownUserHash(), password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A hash to verify against when the account does not exist, so timing does not reveal which emails exist. */
let unknownUserHashValue: Promise<string> | undefined;
export function unknownUserHash(): Promise<string> {
  unknownUserHashValue ??= hashPassword('not-a-real-password-only-for-timing');
  return unknownUserHashValue;
}

export function checkPasswordStrength(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `password must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > 1024) return 'password must be at most 1024 characters';
  return null;
}
