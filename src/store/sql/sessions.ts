import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';

export interface SessionRow {
  idHash: string;
  userId: string | null;
  expiresAt: number;
  lastSeenAt: number;
  /** What a form left for the next page to show once, sealed; null when nothing is waiting. */
  onceSealed: string | null;
  /** How it was signed in ('password', 'password+totp', 'passkey', …); null when anonymous (or signed in before 015). */
  signedInWith: string | null;
  clientIp: string | null;
  userAgent: string | null;
  /** The account whose password was right, waiting for its second factor (null when none is, or it has expired). */
  pendingUserId: string | null;
  /** Signed in through an identity provider: which, as whom, and what the re-check asks it with. */
  provider: ProviderLink | null;
  /** When its person last proved who they are (signed in, or confirmed in sudo mode); null before 023. */
  confirmedAt: number | null;
}

/** A session's link to the provider it was signed in through (migration 019). */
export interface ProviderLink {
  /** The issuer (identities.provider). */
  provider: string;
  subject: string;
  /** The provider's session id (`sid`), when its ID token had one. */
  sid: string | null;
  /** The provider's tokens (refresh, access, its expiry), sealed under the secrets key; null when none were given. */
  tokensSealed: string | null;
  /** When the provider last said the session stands (the sign-in, or the last re-check). */
  checkedAt: number;
}

/** A signed-in session as its owner sees it listed. */
export interface SessionListing {
  idHash: string;
  createdAt: number;
  lastSeenAt: number;
  signedInWith: string | null;
  clientIp: string | null;
  userAgent: string | null;
}

/** Where a request came from, kept on its session (Settings → Security lists them). */
export interface SeenFrom {
  clientIp: string;
  userAgent: string | null;
}

/** Longest user agent kept on a session. */
const MAX_USER_AGENT = 400;

/** How often a session's sliding expiry is written at most. */
const TOUCH_INTERVAL_MS = 60_000;

/** Server-side web sessions, keyed by the SHA-256 of the cookie value. */
export class SessionStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async create(
    idHash: string,
    userId: string | null,
    ttlMs: number,
    opts: { signedInWith?: string; seen?: SeenFrom; pendingUserId?: string; pendingTtlMs?: number; provider?: Omit<ProviderLink, 'checkedAt'> } = {},
  ): Promise<void> {
    const now = this.now();
    await this.db
      .insertInto('sessions')
      .values({
        id_hash: idHash,
        user_id: userId,
        created_at: now,
        expires_at: now + ttlMs,
        last_seen_at: now,
        signed_in_with: opts.signedInWith ?? null,
        client_ip: opts.seen?.clientIp ?? null,
        user_agent: opts.seen?.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
        pending_user_id: opts.pendingUserId ?? null,
        pending_until: opts.pendingUserId ? now + (opts.pendingTtlMs ?? 0) : null,
        provider: opts.provider?.provider ?? null,
        provider_subject: opts.provider?.subject ?? null,
        provider_sid: opts.provider?.sid ?? null,
        provider_refresh: opts.provider?.tokensSealed ?? null,
        provider_checked_at: opts.provider ? now : null,
        confirmed_at: userId ? now : null,
      })
      .execute();
  }

  /** Its person proved who they are again (sudo mode). */
  async confirm(idHash: string, at: number): Promise<void> {
    await this.db.updateTable('sessions').set({ confirmed_at: at }).where('id_hash', '=', idHash).execute();
  }

  async find(idHash: string): Promise<SessionRow | null> {
    const row = await this.db
      .selectFrom('sessions as s')
      .leftJoin('users as u', 'u.id', 's.user_id')
      .select([
        's.id_hash',
        's.user_id',
        's.expires_at',
        's.last_seen_at',
        's.once_sealed',
        's.signed_in_with',
        's.client_ip',
        's.user_agent',
        's.pending_user_id',
        's.pending_until',
        's.provider',
        's.provider_subject',
        's.provider_sid',
        's.provider_refresh',
        's.provider_checked_at',
        's.confirmed_at',
      ])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', this.now())
      // A disabled user's session is over, even before its row is deleted.
      .where((eb) => eb.or([eb('s.user_id', 'is', null), eb('u.disabled_at', 'is', null)]))
      .executeTakeFirst();
    if (!row) return null;
    const pending = row.pending_user_id !== null && Number(row.pending_until) > this.now() ? row.pending_user_id : null;
    return {
      idHash: row.id_hash,
      userId: row.user_id,
      expiresAt: row.expires_at,
      lastSeenAt: row.last_seen_at,
      onceSealed: row.once_sealed,
      signedInWith: row.signed_in_with,
      clientIp: row.client_ip,
      userAgent: row.user_agent,
      pendingUserId: pending,
      provider:
        row.provider && row.provider_subject
          ? { provider: row.provider, subject: row.provider_subject, sid: row.provider_sid, tokensSealed: row.provider_refresh, checkedAt: Number(row.provider_checked_at ?? 0) }
          : null,
      confirmedAt: row.confirmed_at === null ? null : Number(row.confirmed_at),
    };
  }

  /**
   * Claims the session's re-check: true for the one caller (of any replica) that moved `checked_at` from what it
   * read to `at`; the others go on without asking the provider (one refresh token is not used twice).
   */
  async claimProviderCheck(idHash: string, seenCheckedAt: number, at: number): Promise<boolean> {
    const res = await this.db.updateTable('sessions').set({ provider_checked_at: at }).where('id_hash', '=', idHash).where('provider_checked_at', '=', seenCheckedAt).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Records a re-check the provider passed: when, and the tokens it gave for the next one. */
  async providerChecked(idHash: string, tokensSealed: string | null, at: number): Promise<void> {
    await this.db.updateTable('sessions').set({ provider_refresh: tokensSealed, provider_checked_at: at }).where('id_hash', '=', idHash).execute();
  }

  /**
   * Ends the sessions a provider's back-channel logout names: those signed in through `provider` in its session
   * `sid`, or (no sid) every one of its person `subject`. The accounts whose sessions ended, with how many.
   */
  async deleteForProvider(provider: string, who: { subject: string | null; sid: string | null }): Promise<Map<string, number>> {
    let q = this.db.selectFrom('sessions').select(['id_hash', 'user_id']).where('provider', '=', provider);
    if (who.sid) q = q.where('provider_sid', '=', who.sid);
    if (who.subject) q = q.where('provider_subject', '=', who.subject);
    const rows = await q.execute();
    const ended = new Map<string, number>();
    for (const r of rows) {
      const res = await this.db.deleteFrom('sessions').where('id_hash', '=', r.id_hash).executeTakeFirst();
      if (Number(res.numDeletedRows) > 0 && r.user_id) ended.set(r.user_id, (ended.get(r.user_id) ?? 0) + 1);
    }
    return ended;
  }

  /**
   * Sliding expiry, written at most once a minute per session to spare the disk. `session` is the row the request
   * found: seen within the minute, no statement is sent at all. True when this call moved the expiry.
   */
  async touch(session: Pick<SessionRow, 'idHash' | 'lastSeenAt'>, ttlMs: number, seen?: SeenFrom): Promise<boolean> {
    const now = this.now();
    if (session.lastSeenAt >= now - TOUCH_INTERVAL_MS) return false;
    const res = await this.db
      .updateTable('sessions')
      .set({ last_seen_at: now, expires_at: now + ttlMs, ...(seen ? { client_ip: seen.clientIp, user_agent: seen.userAgent?.slice(0, MAX_USER_AGENT) ?? null } : {}) })
      .where('id_hash', '=', session.idHash)
      .where('last_seen_at', '<', now - TOUCH_INTERVAL_MS)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async setOnce(idHash: string, sealed: string): Promise<void> {
    await this.db.updateTable('sessions').set({ once_sealed: sealed }).where('id_hash', '=', idHash).execute();
  }

  /** Clears what `setOnce` left, if it is still `sealed`; true for the one caller that cleared it. */
  async clearOnce(idHash: string, sealed: string): Promise<boolean> {
    const res = await this.db.updateTable('sessions').set({ once_sealed: null }).where('id_hash', '=', idHash).where('once_sealed', '=', sealed).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Ends every session of a user but the one kept (a password change keeps the session that made it). */
  async deleteForUser(userId: string, keepIdHash?: string): Promise<number> {
    let q = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepIdHash) q = q.where('id_hash', '!=', keepIdHash);
    const res = await q.executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** The signed-in sessions of a user that have not expired, the most recently seen first. */
  async listForUser(userId: string): Promise<SessionListing[]> {
    const rows = await this.db
      .selectFrom('sessions')
      .select(['id_hash', 'created_at', 'last_seen_at', 'signed_in_with', 'client_ip', 'user_agent'])
      .where('user_id', '=', userId)
      .where('expires_at', '>', this.now())
      .orderBy('last_seen_at', 'desc')
      .execute();
    return rows.map((r) => ({ idHash: r.id_hash, createdAt: Number(r.created_at), lastSeenAt: Number(r.last_seen_at), signedInWith: r.signed_in_with, clientIp: r.client_ip, userAgent: r.user_agent }));
  }

  /** Ends one of a user's sessions; false when it is not theirs (or already over). */
  async deleteOfUser(userId: string, idHash: string): Promise<boolean> {
    const res = await this.db.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '=', idHash).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** How the session passed sign-in, once it has passed more (a second factor set up from it). */
  async setSignedInWith(idHash: string, signedInWith: string): Promise<void> {
    await this.db.updateTable('sessions').set({ signed_in_with: signedInWith }).where('id_hash', '=', idHash).execute();
  }

  /** Gives the session a WebAuthn challenge (replacing one it had), valid until `until`. */
  async setChallenge(idHash: string, challenge: string, until: number): Promise<void> {
    await this.db.updateTable('sessions').set({ challenge, challenge_until: until }).where('id_hash', '=', idHash).execute();
  }

  /** The session's WebAuthn challenge, taken: only the first caller gets it, and only before it expires. */
  async takeChallenge(idHash: string): Promise<string | null> {
    const row = await this.db.selectFrom('sessions').select(['challenge', 'challenge_until']).where('id_hash', '=', idHash).executeTakeFirst();
    if (!row?.challenge) return null;
    const res = await this.db.updateTable('sessions').set({ challenge: null, challenge_until: null }).where('id_hash', '=', idHash).where('challenge', '=', row.challenge).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return null;
    return Number(row.challenge_until) > this.now() ? row.challenge : null;
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpired(): Promise<number> {
    const res = await this.db.deleteFrom('sessions').where('expires_at', '<=', this.now()).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
