import { domainToASCII } from 'node:url';
import { codePointCount } from '../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../core/name-limits.js';
import { AppError, invalidRequest } from '../core/errors.js';
import { lowerKey } from '../core/name-spellings.js';
import { randomUrlToken, sha256Hex } from '../core/secrets.js';
import type { LoginAttemptStore, ThrottlePolicy } from '../store/sql/login-attempts.js';
import type { ProjectStore } from '../store/sql/projects.js';
import type { SetupTokenStore } from '../store/sql/setup-tokens.js';
import type { User, UserStore, UserWithHash } from '../store/sql/users.js';
import { checkPasswordStrength, unknownUserHash, hashPassword, verifyPassword } from './password.js';

/**
 * The local part mail servers take (RFC 5321/6531): dot-separated runs of the characters RFC 5322 allows unquoted,
 * and any letter beyond ASCII; or a quoted string of visible ASCII without a quote or backslash. Hand-written: no
 * dependency checks addresses (zod's e-mail check refuses IDN domains, which work here; `validEmail` refuses a
 * single-label one but `localhost` where an address is taken).
 * Nothing that ends a header or splits a list (CR, LF, comma, semicolon, angle brackets, spaces) can pass.
 */
const LOCAL_PART = /^(?:[\p{L}\p{N}\p{M}!#$%&'*+\-/=?^_`{|}~]+(?:\.[\p{L}\p{N}\p{M}!#$%&'*+\-/=?^_`{|}~]+)*|"[!#-[\]-~]+")$/u;
/** A host name as DNS has it once IDN labels are in their ASCII form: letters, digits and inner hyphens, 63 at most a label. */
const ASCII_DOMAIN = /^(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

/** Whether `address` is an e-mail address a mail server would take: one @, a mailbox name before it, a domain after. */
export function isEmailAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  // domainToASCII (WHATWG URL) turns IDN labels into punycode; it also decodes %41 and maps look-alike dots, so only
  // letters, digits, dots and hyphens go in.
  return at > 0 && codePointCount(address) <= MAX_EMAIL_CHARS && Buffer.byteLength(local) <= 64 && LOCAL_PART.test(local) && /^[\p{L}\p{N}\p{M}.-]+$/u.test(domain) && ASCII_DOMAIN.test(domainToASCII(domain));
}

/** "Too many failed attempts. Try again in 15 minutes." — the login form's words, for the account forms too. */
export function throttledMessage(waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

/** "password must be …" → "Password must be …." */
const sentenceOf = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');

export const LOGIN_THROTTLE: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

/**
 * What a sign-in did. A refusal says whether this attempt began a lockout (`locked`: the e-mail's count, the
 * address's, or both) and names the account whose password was tried, when it exists (for the audit log only:
 * the page says the same whichever it is).
 */
export type LoginResult =
  | { ok: true; user: User }
  | { ok: false; reason: 'invalid' | 'throttled' | 'disabled'; retryAfterMs?: number; locked?: ('email' | 'ip')[]; user?: Pick<User, 'id' | 'email'> };

/**
 * The throttle's key of an address: its case lowered as before, and either Unicode spelling one key, so that typing
 * the other spelling (which signs in as well) gives no second budget of guesses.
 */
const emailThrottleKey = (email: string): string => `email:${lowerKey(email.trim())}`;

/** Which of the throttle's keys an attempt locked: 'email:…' → 'email'. */
export const lockedKinds = (keys: readonly string[]): ('email' | 'ip' | '2fa')[] => keys.map((k) => k.slice(0, k.indexOf(':')) as 'email' | 'ip' | '2fa');

/** What an account change from Settings did: done, or why not (a sentence for the page). */
export type AccountChangeResult = { ok: true; user: User } | { ok: false; reason: 'invalid' | 'throttled' | 'refused'; message: string; retryAfterMs?: number };

/**
 * The address trimmed and composed (NFC, as a keyboard types it: one pasted from a Mac may come decomposed;
 * core/name-spellings.ts), or an invalid_request error saying it is not one.
 */
export function validEmail(emailInput: string, opts: { vouched?: boolean } = {}): string {
  const email = emailInput.trim().normalize('NFC');
  // JSON quoting shows a line break or tab as \n, \t: what was refused stays visible, in a page or a terminal.
  if (!isEmailAddress(email)) throw invalidRequest(`${JSON.stringify(email)} is not an e-mail address`);
  // Syntax alone took "carol@example" (a name nobody's mail reaches) and mailed it: an address typed for an account or
  // a mail has a domain with a dot. `localhost` stays: mail to it is delivered on the machine itself. One an identity
  // provider vouches for (`vouched`) is no slip of a hand: an intranet's single-label domain must not lock its people out.
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const ascii = domainToASCII(domain);
  if (!opts.vouched && !ascii.includes('.') && ascii !== 'localhost') throw invalidRequest(`${JSON.stringify(email)} is not an e-mail address: the domain after the @, "${domain}", has no dot (as in example.com)`);
  return email;
}

const withoutHash = ({ passwordHash: _, ...user }: UserWithHash): User => user;

/** Accounts: creation (setup page, operator command), login with throttling, the first-run setup token. */
export class AccountService {
  constructor(
    private readonly users: UserStore,
    private readonly projects: ProjectStore,
    private readonly setupTokens: SetupTokenStore,
    private readonly attempts: LoginAttemptStore,
  ) {}

  hasUsers(): Promise<boolean> {
    return this.users.count().then((n) => n > 0);
  }

  async createUser(emailInput: string, password: string): Promise<User> {
    const email = validEmail(emailInput);
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    const user = await this.users.create(email, await hashPassword(password));
    if (!user) throw new AppError('conflict', `an account with the e-mail ${email} already exists`);
    await this.projects.ensureDefault(user.id);
    return user;
  }

  /**
   * Checks a password. Attempts count per email and per client address, before the password is verified
   * (so concurrent guesses are counted too); after 5 failures in 15 minutes that key is locked for 15
   * minutes. A success gives its attempt back. Unknown emails cost the same time as known ones.
   */
  async login(email: string, password: string, clientIp: string): Promise<LoginResult> {
    // Only an address is a key (no longer than a primary key may be): a password typed into the e-mail field must not
    // be stored. No account has another name, so the client's address alone counts such an attempt.
    const byEmail = isEmailAddress(lowerKey(email.trim())) ? emailThrottleKey(email) : null;
    const byAddress = `ip:${clientIp}`;
    const locking: string[] = [];
    const wait = await this.attempts.take(byEmail ? [byEmail, byAddress] : [byAddress], LOGIN_THROTTLE, locking);
    if (wait > 0) return { ok: false, reason: 'throttled', retryAfterMs: wait };
    const user = await this.users.findByEmail(email.trim());
    const valid = await verifyPassword(user?.passwordHash ?? (await unknownUserHash()), password);
    const tried = user ? { user: { id: user.id, email: user.email } } : {};
    if (!user || !valid) return { ok: false, reason: 'invalid', ...tried, ...(locking.length ? { locked: lockedKinds(locking) as ('email' | 'ip')[] } : {}) };
    // Said only to whoever knows the password: a disabled account is not a wrong password.
    if (user.disabledAt !== null) return { ok: false, reason: 'disabled', ...tried };
    if (byEmail) await this.attempts.clear(byEmail);
    await this.attempts.refund(byAddress, LOGIN_THROTTLE);
    return { ok: true, user: withoutHash(user) };
  }

  /**
   * Checks a signed-in user's current password before an account change (or a change to its second factors), counted like a login (the same keys, so
   * guesses here and on the login form share one budget): after 5 wrong ones in 15 minutes it is locked.
   */
  async checkCurrentPassword(userId: string, password: string, clientIp: string): Promise<AccountChangeResult> {
    const user = await this.users.findWithHashById(userId);
    if (!user) return { ok: false, reason: 'invalid', message: 'This account no longer exists.' };
    const [byEmail, byAddress] = [emailThrottleKey(user.email), `ip:${clientIp}`];
    const wait = await this.attempts.take([byEmail, byAddress], LOGIN_THROTTLE);
    if (wait > 0) return { ok: false, reason: 'throttled', retryAfterMs: wait, message: throttledMessage(wait) };
    if (!(await verifyPassword(user.passwordHash, password))) return { ok: false, reason: 'invalid', message: 'The current password is not right.' };
    await this.attempts.clear(byEmail);
    await this.attempts.refund(byAddress, LOGIN_THROTTLE);
    return { ok: true, user: withoutHash(user) };
  }

  /** Settings → Account: a new password, with the current one. The caller ends the user's other sessions. */
  async changePassword(userId: string, current: string, next: string, clientIp: string): Promise<AccountChangeResult> {
    const weak = checkPasswordStrength(next);
    if (weak) return { ok: false, reason: 'refused', message: sentenceOf(`the new ${weak}`) };
    const checked = await this.checkCurrentPassword(userId, current, clientIp);
    if (!checked.ok) return checked;
    await this.users.setPasswordHash(userId, await hashPassword(next));
    return checked;
  }

  /** Settings → Account: a new e-mail address, with the current password. */
  async changeEmail(userId: string, password: string, emailInput: string, clientIp: string): Promise<AccountChangeResult> {
    let email: string;
    try {
      email = validEmail(emailInput);
    } catch (err) {
      return { ok: false, reason: 'refused', message: sentenceOf((err as Error).message) };
    }
    const checked = await this.checkCurrentPassword(userId, password, clientIp);
    if (!checked.ok) return checked;
    if (email === checked.user.email) return { ok: false, reason: 'refused', message: `Your e-mail is already ${email}.` };
    const changed = await this.users.setEmail(userId, email);
    if (changed === 'conflict') return { ok: false, reason: 'refused', message: `Another account already uses ${email}.` };
    return { ok: true, user: { ...checked.user, email } };
  }

  /** `docsearch users set-password`: the operator sets a password (same rules as setup's). The caller ends sessions. */
  async setPassword(email: string, password: string): Promise<User> {
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    const user = await this.users.findByEmail(email.trim());
    if (!user) throw new AppError('not_found', `no account has the e-mail ${email.trim()}`);
    await this.users.setPasswordHash(user.id, await hashPassword(password));
    return withoutHash(user);
  }

  findUser(id: string): Promise<User | null> {
    return this.users.findById(id);
  }

  /** A fresh one-time setup token, only while no account exists. */
  async newSetupToken(): Promise<string | null> {
    if (await this.hasUsers()) return null;
    const token = randomUrlToken(24);
    await this.setupTokens.issue(sha256Hex(token));
    return token;
  }

  async setupTokenValid(token: string): Promise<boolean> {
    return !(await this.hasUsers()) && (await this.setupTokens.isValid(sha256Hex(token)));
  }

  /** Consumes the setup token and creates the first account; the token works once only. */
  async completeSetup(token: string, email: string, password: string): Promise<User> {
    if (!(await this.setupTokenValid(token))) throw invalidRequest('this setup link has already been used or is not valid');
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    // The address is checked before the link is used up: a typo in it made the link dead, and no account.
    validEmail(email);
    if (!(await this.setupTokens.consume(sha256Hex(token)))) throw invalidRequest('this setup link has already been used');
    return this.createUser(email, password);
  }
}
