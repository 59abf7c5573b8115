import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { randomUrlToken, safeEqual, sha256Hex } from '../core/secrets.js';
import type { SessionStore } from '../store/sql/sessions.js';

export const SESSION_TTL_MS = 7 * 24 * 3600_000;
export const ANONYMOUS_SESSION_TTL_MS = 3600_000;

export interface WebSession {
  /** The cookie value. Only its hash is stored. */
  id: string;
  userId: string | null;
  csrfToken: string;
  /** What a form left for this session's next page, still sealed (see `stashOnce`). */
  onceSealed?: string | null;
}

/** What a form created, for the page it redirects to: shown there once. */
export type OnceMessage =
  | { kind: 'api-key'; key: string; name: string | null }
  | { kind: 'client-secret'; name: string; clientId: string; secret: string | null; rotated: boolean }
  | { kind: 'invite'; email: string; link: string };

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

  async start(userId: string | null): Promise<WebSession> {
    const id = randomUrlToken(32);
    await this.store.create(sha256Hex(id), userId, userId ? SESSION_TTL_MS : ANONYMOUS_SESSION_TTL_MS);
    return { id, userId, csrfToken: csrfFor(id) };
  }

  async load(id: string | undefined): Promise<WebSession | null> {
    if (!id || id.length > 100) return null;
    const row = await this.store.find(sha256Hex(id));
    if (!row) return null;
    await this.store.touch(row, row.userId ? SESSION_TTL_MS : ANONYMOUS_SESSION_TTL_MS);
    return { id, userId: row.userId, csrfToken: csrfFor(id), onceSealed: row.onceSealed };
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
