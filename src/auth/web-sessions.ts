import { createHmac } from 'node:crypto';
import { randomUrlToken, safeEqual, sha256Hex } from '../core/secrets.js';
import type { SessionStore } from '../store/sql/sessions.js';

export const SESSION_TTL_MS = 7 * 24 * 3600_000;
export const ANONYMOUS_SESSION_TTL_MS = 3600_000;

export interface WebSession {
  /** The cookie value. Only its hash is stored. */
  id: string;
  userId: string | null;
  csrfToken: string;
}

/**
 * The CSRF token is derived from the session id (HMAC), so it needs no storage and changes
 * whenever the session does (login rotates the session: no fixation, no stale tokens).
 */
function csrfFor(sessionId: string): string {
  return createHmac('sha256', sessionId).update('docsearch-csrf').digest('base64url');
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
    return { id, userId: row.userId, csrfToken: csrfFor(id) };
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
