/**
 * Second factors of local accounts besides passkeys (passkeys.ts): an authenticator app (TOTP, RFC 6238, by
 * `otpauth`) and ten one-time recovery codes. Codes are counted like passwords (the same lock: 5 wrong in 15
 * minutes locks the account's codes and the address for 15 minutes, and the address shares one budget with the login
 * form), compared in constant time, and never accepted twice: a TOTP code's time step is recorded when it is
 * accepted, a recovery code is marked used, each in one conditional UPDATE.
 *
 * The TOTP secret is kept sealed under the secrets key (core/sealed-secret.ts), the recovery codes as hashes; none
 * of them is ever logged.
 */
import { Secret, TOTP } from 'otpauth';
import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { SecretSealer } from '../core/sealed-secret.js';
import { sha256Hex } from '../core/secrets.js';
import type { LoginAttemptStore } from '../store/sql/login-attempts.js';
import type { PasskeyStore } from '../store/sql/passkeys.js';
import type { TwoFactorStore } from '../store/sql/two-factor.js';
import type { User, UserStore } from '../store/sql/users.js';
import { LOGIN_THROTTLE, lockedKinds } from './accounts.js';
import { secondFactorRequired, type TwoFactorPolicy } from './two-factor-policy.js';

export const RECOVERY_CODE_COUNT = 10;
/** 16 characters of a 31-letter alphabet: 79 bits, out of reach of guessing even from a stolen hash. */
const RECOVERY_CODE_CHARS = 16;
/** No 0/o, 1/l/i: read off paper without doubt. */
const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';

const TOTP_PERIOD = 30;
const TOTP_DIGITS = 6;

/** What a code did: which kind it was, or why it was refused. */
export type CodeResult =
  | { ok: true; method: 'totp' | 'recovery'; recoveryCodesLeft?: number }
  | { ok: false; reason: 'invalid' | 'throttled'; retryAfterMs?: number; locked?: ('2fa' | 'ip')[] };

/** What an account has set up, for Settings → Security and the sign-in's second step. */
export interface FactorStatus {
  totp: boolean;
  recoveryCodesLeft: number;
  passkeys: number;
  passkeySignIn: boolean;
}

/** RECOVERY_CODE_COUNT new recovery codes, as shown: "abcd-efgh-…". */
function newCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = '';
    for (let i = 0; i < RECOVERY_CODE_CHARS; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
    return code.match(/.{4}/g)!.join('-');
  });
}

/** "abcd-efgh-…" → "abcdefgh…": what a recovery code is compared as. */
const normalizeRecovery = (code: string): string => code.toLowerCase().replace(/[^0-9a-z]/g, '');

export class TwoFactorService {
  constructor(
    private readonly deps: {
      store: TwoFactorStore;
      passkeys: Pick<PasskeyStore, 'list'>;
      users: Pick<UserStore, 'passkeySignIn' | 'setPasskeySignIn'>;
      attempts: LoginAttemptStore;
      sealer: SecretSealer;
      policy: TwoFactorPolicy;
      /** Names this server in authenticator apps ("docsearch (search.example.com)"). */
      issuer: () => string;
      now: Clock;
    },
  ) {}

  get policy(): TwoFactorPolicy {
    return this.deps.policy;
  }

  /** Whether the policy asks this account for a second factor. */
  required(user: Pick<User, 'isAdmin'>): boolean {
    return secondFactorRequired(this.deps.policy, user);
  }

  hasSecondFactor(userId: string): Promise<boolean> {
    return this.deps.store.hasSecondFactor(userId);
  }

  async status(userId: string): Promise<FactorStatus> {
    const [totp, recoveryCodesLeft, passkeys, passkeySignIn] = await Promise.all([
      this.deps.store.totp(userId),
      this.deps.store.recoveryCodesLeft(userId),
      this.deps.passkeys.list(userId),
      this.deps.users.passkeySignIn(userId),
    ]);
    return { totp: totp?.enabledAt != null, recoveryCodesLeft, passkeys: passkeys.length, passkeySignIn };
  }

  private totpOf(user: Pick<User, 'email'>, secret: Secret): TOTP {
    return new TOTP({ issuer: this.deps.issuer(), label: user.email, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD, secret });
  }

  /**
   * Starts setting up an authenticator app: a new secret (kept sealed, not yet in force), and the `otpauth://` URI
   * the app reads from the QR code. Null when one is in force already.
   */
  async startTotp(user: Pick<User, 'id' | 'email'>): Promise<string | null> {
    const secret = new Secret({ size: 20 });
    if (!(await this.deps.store.startTotp(user.id, this.deps.sealer.seal(secret.base32, user.id)))) return null;
    return this.totpOf(user, secret).toString();
  }

  /** The URI of the secret being set up (to show the QR code again), or null. */
  async pendingTotp(user: Pick<User, 'id' | 'email'>): Promise<string | null> {
    const row = await this.deps.store.totp(user.id);
    if (!row || row.enabledAt !== null) return null;
    const secret = this.openSecret(row.secretSealed, user.id);
    return secret ? this.totpOf(user, secret).toString() : null;
  }

  private openSecret(sealed: string, userId: string): Secret | null {
    const base32 = this.deps.sealer.open(sealed, userId);
    return base32 ? Secret.fromBase32(base32) : null;
  }

  /**
   * Puts the secret being set up in force with its first code (counted like a sign-in code). Recovery codes are made
   * when the account has none left: returned, to be shown once.
   */
  async confirmTotp(user: Pick<User, 'id' | 'email'>, code: string, clientIp: string): Promise<CodeResult & { recoveryCodes?: string[] }> {
    const row = await this.deps.store.totp(user.id);
    if (!row || row.enabledAt !== null) return { ok: false, reason: 'invalid' };
    const result = await this.counted(user.id, clientIp, () => this.checkTotp(user, row.secretSealed, code));
    if (!result.ok) return result;
    const recoveryCodes = await this.recoveryCodesIfNone(user.id);
    return { ...result, ...(recoveryCodes ? { recoveryCodes } : {}) };
  }

  /**
   * Recovery codes for an account that has none left, as its first second factor (an app or a passkey) is set up:
   * returned, to be shown once. Undefined when it has some.
   */
  async recoveryCodesIfNone(userId: string): Promise<string[] | undefined> {
    if ((await this.deps.store.recoveryCodesLeft(userId)) > 0) return undefined;
    const codes = newCodes();
    return (await this.deps.store.addRecoveryCodesIfNone(userId, codes.map((c) => this.recoveryHash(userId, c)))) ? codes : undefined;
  }

  /** Turns the authenticator app off. Recovery codes go too when no passkey is left to recover with them. */
  async disableTotp(userId: string): Promise<boolean> {
    const removed = await this.deps.store.removeTotp(userId);
    await this.forgetRecoveryWithoutFactor(userId);
    return removed;
  }

  /** Recovery codes stand in for a second factor: with none left (no app, no passkey) they go. */
  async forgetRecoveryWithoutFactor(userId: string): Promise<void> {
    const [totp, passkeys] = await Promise.all([this.deps.store.totp(userId), this.deps.passkeys.list(userId)]);
    if (totp?.enabledAt == null && passkeys.length === 0) await this.deps.store.removeRecoveryCodes(userId);
  }

  /** Ten new recovery codes, replacing the old ones; returned once, kept as hashes. */
  async newRecoveryCodes(userId: string): Promise<string[]> {
    const codes = newCodes();
    await this.deps.store.replaceRecoveryCodes(userId, codes.map((c) => this.recoveryHash(userId, c)));
    return codes;
  }

  /** Salted with the account, so one table of guesses does not fit every account. */
  private recoveryHash(userId: string, code: string): string {
    return sha256Hex(`docsearch-recovery:${userId}:${normalizeRecovery(code)}`);
  }

  /**
   * The second step of a sign-in: an authenticator code (six digits) or a recovery code, counted and single use.
   */
  verifyCode(user: Pick<User, 'id' | 'email'>, code: string, clientIp: string): Promise<CodeResult> {
    return this.counted(user.id, clientIp, async () => {
      const digits = code.replace(/\s/g, '');
      if (/^\d{6}$/.test(digits)) {
        const row = await this.deps.store.totp(user.id);
        return row?.enabledAt != null ? this.checkTotp(user, row.secretSealed, digits) : { ok: false, reason: 'invalid' };
      }
      const normalized = normalizeRecovery(code);
      if (normalized.length !== RECOVERY_CODE_CHARS || !(await this.deps.store.useRecoveryCode(user.id, this.recoveryHash(user.id, normalized)))) return { ok: false, reason: 'invalid' };
      return { ok: true, method: 'recovery', recoveryCodesLeft: await this.deps.store.recoveryCodesLeft(user.id) };
    });
  }

  /** A TOTP code against the sealed secret; accepted only for a time step later than any accepted before. */
  private async checkTotp(user: Pick<User, 'id' | 'email'>, sealed: string, code: string): Promise<CodeResult> {
    const secret = this.openSecret(sealed, user.id);
    const token = code.replace(/\s/g, '');
    if (!secret || !/^\d{6}$/.test(token)) return { ok: false, reason: 'invalid' };
    const now = this.deps.now();
    // One step either side: a phone's clock a little off, a code typed as it turned.
    const delta = this.totpOf(user, secret).validate({ token, timestamp: now, window: 1 });
    if (delta === null) return { ok: false, reason: 'invalid' };
    const step = Math.floor(now / 1000 / TOTP_PERIOD) + delta;
    if (!(await this.deps.store.acceptStep(user.id, step, sealed))) return { ok: false, reason: 'invalid' };
    return { ok: true, method: 'totp' };
  }

  /**
   * Counts a code attempt as the login form counts a password (LOGIN_THROTTLE, per account and per address, taken
   * before the check so that guesses sent at once are counted too); a right code gives its attempt back.
   */
  private async counted(userId: string, clientIp: string, check: () => Promise<CodeResult>): Promise<CodeResult> {
    const [byAccount, byAddress] = [`2fa:${userId}`, `ip:${clientIp}`];
    const locking: string[] = [];
    const wait = await this.deps.attempts.take([byAccount, byAddress], LOGIN_THROTTLE, locking);
    if (wait > 0) return { ok: false, reason: 'throttled', retryAfterMs: wait };
    const result = await check();
    if (result.ok) {
      await this.deps.attempts.clear(byAccount);
      await this.deps.attempts.refund(byAddress, LOGIN_THROTTLE);
    } else if (locking.length) return { ...result, locked: lockedKinds(locking) as ('2fa' | 'ip')[] };
    return result;
  }
}

/**
 * `docsearch users reset-2fa`: removes every second factor of an account (authenticator app, recovery codes,
 * passkeys) so that its password alone signs it in again, until it sets one up (which `--require-2fa` asks at once).
 * Needs no secrets key: nothing sealed is read.
 */
export async function resetSecondFactors(
  deps: { store: Pick<TwoFactorStore, 'removeTotp' | 'removeRecoveryCodes'>; passkeys: Pick<PasskeyStore, 'removeAll'>; users: Pick<UserStore, 'setPasskeySignIn'> },
  userId: string,
): Promise<{ totp: boolean; recoveryCodes: number; passkeys: number }> {
  const totp = await deps.store.removeTotp(userId);
  const recoveryCodes = await deps.store.removeRecoveryCodes(userId);
  const passkeys = await deps.passkeys.removeAll(userId);
  await deps.users.setPasskeySignIn(userId, false);
  return { totp, recoveryCodes, passkeys };
}
