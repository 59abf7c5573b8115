import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { randomUrlToken, safeEqual, sha256Hex } from '../core/secrets.js';
import type { ProviderLink, SeenFrom, SessionListing, SessionStore } from '../store/sql/sessions.js';

export type { ProviderLink, SeenFrom };

export const SESSION_TTL_MS = 7 * 24 * 3600_000;
export const ANONYMOUS_SESSION_TTL_MS = 3600_000;
/** How long the second step of a sign-in waits for its code or passkey after the password was right. */
export const SECOND_STEP_TTL_MS = 5 * 60_000;
/** How long a WebAuthn ceremony may take (the browser's own timeout is a minute). */
export const CHALLENGE_TTL_MS = 2 * 60_000;

export interface WebSession {
  /** The cookie value. Only its hash is stored. */
  id: string;
  userId: string | null;
  csrfToken: string;
  /** What a form left for this session's next page, still sealed (see `stashOnce`). */
  onceSealed?: string | null;
  /**
   * How it was signed in: 'password', or with the second factor it passed ('password+totp', 'password+recovery',
   * 'password+passkey'), 'passkey' alone; 'sso' or 'trusted-header' through the identity provider; 'setup' or
   * 'invite' for an account just made. Null when anonymous, and for a session signed in before second factors existed.
   */
  signedInWith?: string | null;
  /** The account whose password was right, still owing its second factor. */
  pendingUserId?: string | null;
  /** Signed in through an identity provider (OpenID Connect): which, as whom, and what to ask it again with. */
  provider?: ProviderLink | null;
  /** When its person last proved who they are: the sign-in, or a confirmation in sudo mode (server/web/sudo.ts). */
  confirmedAt?: number | null;
  /** Its expiry moved on as it was loaded (the sliding lifetime): its cookie is sent again with the new one. */
  renewed?: boolean;
}

/**
 * Whether a session's sign-in passed a second factor (a passkey alone is one: something held, and a PIN or
 * biometric). An OpenID Connect sign-in passed one when the provider says so ('sso+mfa', from its `amr`); a trusted
 * header's proxy is taken at its word (docs/sso.md#second-factors).
 */
const AS_STRONG = new Set(['passkey', 'trusted-header']);
export const passedSecondFactor = (signedInWith: string | null | undefined): boolean => !!signedInWith && (signedInWith.includes('+') || AS_STRONG.has(signedInWith));

/** One of a user's sessions, listed for them; `handle` names it in forms (a prefix of the stored hash, never the cookie). */
export interface ListedSession extends Omit<SessionListing, 'idHash'> {
  handle: string;
  current: boolean;
}

/** The part of a session's stored hash that names it in URLs: 64 bits, plenty among one person's sessions. */
const HANDLE_CHARS = 16;

/** What a form created, for the page it redirects to: shown there once. */
export type OnceMessage =
  | { kind: 'api-key'; key: string; name: string | null }
  | { kind: 'client-secret'; name: string; clientId: string; secret: string | null; rotated: boolean }
  | { kind: 'links'; links: { id: string; label: string; link: string }[] }
  | { kind: 'recovery-codes'; codes: string[] }
  /**
   * A form's answer (a refusal, with what was typed) for its page's next GET at `path`, with the answer's status and,
   * for a throttled one (429), its Retry-After.
   */
  | { kind: 'page'; path: string; status: number; html: string; retryAfter?: string };

/**
 * The CSRF token is derived from the session id (HMAC), so it needs no storage and changes
 * whenever the session does (login rotates the session: no fixation, no stale tokens).
 */
function csrfFor(sessionId: string): string {
  return createHmac('sha256', sessionId).update('docsearch-csrf').digest('base64url');
}

/** The key that seals a session's one-time message: derived from the cookie value, which is never stored. */
function onceKey(sessionId: string): Buffer {
  return createHmac('sha256', sessionId).update('docsearch-once').digest();
}

function seal(sessionId: string, message: OnceMessage): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', onceKey(sessionId), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(message), 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

function unseal(sessionId: string, sealed: string): OnceMessage | null {
  try {
    const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', onceKey(sessionId), iv!);
    decipher.setAuthTag(tag!);
    return JSON.parse(Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8')) as OnceMessage;
  } catch {
    return null;
  }
}

export class WebSessionService {
  constructor(private readonly store: SessionStore) {}

  /** A new session: anonymous (a form's CSRF token), signed in (`userId`, how), or owing a second factor (`pendingUserId`). */
  async start(userId: string | null, opts: { signedInWith?: string; seen?: SeenFrom; pendingUserId?: string; provider?: Omit<ProviderLink, 'checkedAt'> } = {}): Promise<WebSession> {
    const id = randomUrlToken(32);
    await this.store.create(sha256Hex(id), userId, userId ? SESSION_TTL_MS : ANONYMOUS_SESSION_TTL_MS, { ...opts, pendingTtlMs: SECOND_STEP_TTL_MS });
    return {
      id,
      userId,
      csrfToken: csrfFor(id),
      signedInWith: opts.signedInWith ?? null,
      pendingUserId: opts.pendingUserId ?? null,
      provider: opts.provider ? { ...opts.provider, checkedAt: Date.now() } : null,
      confirmedAt: userId ? Date.now() : null,
    };
  }

  async load(id: string | undefined, seen?: SeenFrom): Promise<WebSession | null> {
    if (!id || id.length > 100) return null;
    const row = await this.store.find(sha256Hex(id));
    if (!row) return null;
    const renewed = await this.store.touch(row, row.userId ? SESSION_TTL_MS : ANONYMOUS_SESSION_TTL_MS, row.userId ? seen : undefined);
    return { id, userId: row.userId, csrfToken: csrfFor(id), onceSealed: row.onceSealed, signedInWith: row.signedInWith, pendingUserId: row.pendingUserId, provider: row.provider, confirmedAt: row.confirmedAt, renewed };
  }

  /** Claims the session's re-check for this caller (see SessionStore.claimProviderCheck). */
  claimProviderCheck(session: WebSession, at: number): Promise<boolean> {
    return session.provider ? this.store.claimProviderCheck(sha256Hex(session.id), session.provider.checkedAt, at) : Promise.resolve(false);
  }

  /** The provider said the session stands (a re-check): when, and the tokens for the next one. */
  async providerChecked(session: WebSession, tokensSealed: string | null, at: number): Promise<void> {
    await this.store.providerChecked(sha256Hex(session.id), tokensSealed, at);
    if (session.provider) session.provider = { ...session.provider, tokensSealed, checkedAt: at };
  }

  /** Ends the sessions a provider's back-channel logout names (see SessionStore.deleteForProvider). */
  endForProvider(provider: string, who: { subject: string | null; sid: string | null }): Promise<Map<string, number>> {
    return this.store.deleteForProvider(provider, who);
  }

  /** Its person proved who they are again (sudo mode): from now on the window runs from `at`. */
  async confirm(session: WebSession, at: number): Promise<void> {
    await this.store.confirm(sha256Hex(session.id), at);
    session.confirmedAt = at;
  }

  /** The user's signed-in sessions, `current` marked. */
  async list(userId: string, current: WebSession): Promise<ListedSession[]> {
    const currentHash = sha256Hex(current.id);
    return (await this.store.listForUser(userId)).map(({ idHash, ...rest }) => ({ ...rest, handle: idHash.slice(0, HANDLE_CHARS), current: idHash === currentHash }));
  }

  /** Ends the user's session named by `handle` (see ListedSession); false when none of theirs is. */
  async endListed(userId: string, handle: string): Promise<boolean> {
    if (!/^[0-9a-f]{16}$/.test(handle)) return false;
    const match = (await this.store.listForUser(userId)).find((s) => s.idHash.startsWith(handle));
    return match ? this.store.deleteOfUser(userId, match.idHash) : false;
  }

  /** Records that this session has now passed a second factor too (it was just set up from it). */
  async upgrade(session: WebSession, signedInWith: string): Promise<void> {
    await this.store.setSignedInWith(sha256Hex(session.id), signedInWith);
    session.signedInWith = signedInWith;
  }

  /** Keeps a WebAuthn challenge for this session's next answer. */
  setChallenge(session: WebSession, challenge: string, now: number): Promise<void> {
    return this.store.setChallenge(sha256Hex(session.id), challenge, now + CHALLENGE_TTL_MS);
  }

  /** The challenge this session was given, once; null when none is waiting or it expired. */
  takeChallenge(session: WebSession): Promise<string | null> {
    return this.store.takeChallenge(sha256Hex(session.id));
  }

  /**
   * Keeps a secret a form just created for the page it redirects to (Post/Redirect/Get): in the session row,
   * sealed under a key only the cookie holder can give, never in a URL, a cookie or a log.
   */
  async stashOnce(session: WebSession, message: OnceMessage): Promise<void> {
    const sealed = seal(session.id, message);
    await this.store.setOnce(sha256Hex(session.id), sealed);
    session.onceSealed = sealed;
  }

  /** What `stashOnce` left, still there: whether it is for this page is read before it is taken. */
  peekOnce(session: WebSession): OnceMessage | null {
    return session.onceSealed ? unseal(session.id, session.onceSealed) : null;
  }

  /** What `stashOnce` left, to the one page that asks for it first; it is gone after (null then). */
  async takeOnce(session: WebSession): Promise<OnceMessage | null> {
    const sealed = session.onceSealed;
    if (!sealed) return null;
    session.onceSealed = null;
    if (!(await this.store.clearOnce(sha256Hex(session.id), sealed))) return null;
    return unseal(session.id, sealed);
  }

  /** Ends every session of the user but `keep` (a password change, from the session that made it). */
  endOthers(userId: string, keep?: WebSession): Promise<number> {
    return this.store.deleteForUser(userId, keep ? sha256Hex(keep.id) : undefined);
  }

  async end(id: string): Promise<void> {
    await this.store.delete(sha256Hex(id));
  }

  checkCsrf(session: WebSession, presented: unknown): boolean {
    return typeof presented === 'string' && safeEqual(presented, session.csrfToken);
  }

  purgeExpired(): Promise<number> {
    return this.store.deleteExpired();
  }
}
