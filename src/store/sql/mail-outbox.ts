import type { Selectable } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { MailOutboxTable } from './schema.js';
import type { Db } from './database.js';

/** What kind of mail a row is (docs/mail.md lists them). */
export const MAIL_KINDS = ['invite', 'password_reset', 'sign_in_notice', 'source_alert', 'test'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/** A row to queue: the body already sealed by the mail room (it may hold a one-time link). */
export interface QueuedMail {
  id: string;
  kind: MailKind;
  to: string;
  subject: string;
  bodySealed: string;
}

export interface OutboxRow {
  id: string;
  kind: string;
  to: string;
  subject: string;
  bodySealed: string | null;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  sentAt: number | null;
  messageId: string | null;
}

type Row = Omit<Selectable<MailOutboxTable>, 'claimed_by' | 'claimed_until'>;

const COLUMNS = ['id', 'kind', 'to_address', 'subject', 'body_sealed', 'status', 'attempts', 'next_attempt_at', 'last_error', 'created_at', 'sent_at', 'message_id'] as const;

const toRow = (r: Row): OutboxRow => ({
  id: r.id,
  kind: r.kind,
  to: r.to_address,
  subject: r.subject,
  bodySealed: r.body_sealed,
  status: r.status,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  sentAt: r.sent_at === null ? null : Number(r.sent_at),
  messageId: r.message_id,
});

/**
 * Writes a mail into the outbox on `db`, which may be a transaction: the mail then exists exactly when what caused
 * it does (an invitation, a reset link, a paused source). Due at once.
 */
export async function insertMail(db: Db, mail: QueuedMail, now: number): Promise<void> {
  const { id } = mail;
  await db
    .insertInto('mail_outbox')
    .values({ id, kind: mail.kind, to_address: mail.to, subject: mail.subject, body_sealed: mail.bodySealed, status: 'queued', attempts: 0, next_attempt_at: now, claimed_by: null, claimed_until: null, last_error: null, created_at: now, sent_at: null, message_id: null })
    .execute();
}

/**
 * The outbox (`mail_outbox`). Senders on any number of replicas claim due rows one at a time with a conditional
 * update (the claim succeeds for one of them only), send, then mark the row sent or due again later; a claim that
 * outlives a sender killed mid-send runs out after its lease, and the row is sent by whoever claims it next.
 */
export class MailOutboxStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  /** Whether a mail still waits to be sent with its body sealed under the library's secrets key. */
  async anySealed(): Promise<boolean> {
    return (await this.db.selectFrom('mail_outbox').select('id').where('body_sealed', 'is not', null).limit(1).executeTakeFirst()) !== undefined;
  }

  /** Ids of rows due now, oldest first (not yet claimed by anyone whose claim still runs). */
  async due(limit: number): Promise<string[]> {
    const now = this.now();
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Claims a due row for `owner` until `leaseMs` from now; the row, or null when another sender has it (or it is no longer due). */
  async claim(id: string, owner: string, leaseMs: number): Promise<OutboxRow | null> {
    const now = this.now();
    const res = await this.db
      .updateTable('mail_outbox')
      .set({ claimed_by: owner, claimed_until: now + leaseMs })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    return this.get(id);
  }

  async get(id: string): Promise<OutboxRow | null> {
    const row = await this.db.selectFrom('mail_outbox').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row ? toRow(row as Row) : null;
  }

  /** Sent: the body (and the link it may hold) is dropped; only what it was, to whom and when stays. */
  async markSent(id: string, owner: string, messageId: string | null): Promise<boolean> {
    const res = await this.db
      .updateTable('mail_outbox')
      .set({ status: 'sent', sent_at: this.now(), message_id: messageId, body_sealed: null, claimed_by: null, claimed_until: null, last_error: null, attempts: (eb) => eb('attempts', '+', 1) })
      .where('id', '=', id)
      .where('claimed_by', '=', owner)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** A failed attempt: due again at `retryAt`, or (null) given up on, with the body dropped. */
  async markFailed(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    const res = await this.db
      .updateTable('mail_outbox')
      .set(
        retryAt === null
          ? { status: 'failed', last_error: error, body_sealed: null, claimed_by: null, claimed_until: null, attempts: (eb) => eb('attempts', '+', 1) }
          : { next_attempt_at: retryAt, last_error: error, claimed_by: null, claimed_until: null, attempts: (eb) => eb('attempts', '+', 1) },
      )
      .where('id', '=', id)
      .where('claimed_by', '=', owner)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Makes every queued mail due now (an admin's "retry now", once the mail server is back); how many. */
  async retryNow(): Promise<number> {
    const res = await this.db.updateTable('mail_outbox').set({ next_attempt_at: this.now() }).where('status', '=', 'queued').executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** The newest rows, optionally of one status (Admin → Mail, the admin API). */
  async list(opts: { status?: OutboxRow['status']; limit: number }): Promise<OutboxRow[]> {
    let q = this.db.selectFrom('mail_outbox').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit);
    if (opts.status) q = q.where('status', '=', opts.status);
    return ((await q.execute()) as Row[]).map(toRow);
  }

  /** How many rows are queued, sent and failed; and when the oldest queued one was written (health). */
  async counts(): Promise<{ queued: number; sent: number; failed: number; oldestQueuedAt: number | null }> {
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .groupBy('status')
      .execute();
    const out = { queued: 0, sent: 0, failed: 0, oldestQueuedAt: null as number | null };
    for (const r of rows) {
      out[r.status] = Number(r.n);
      if (r.status === 'queued' && r.oldest !== null) out.oldestQueuedAt = Number(r.oldest);
    }
    return out;
  }

  /** Drops sent and failed rows older than `before` (the outbox is not an archive: the audit log keeps what was sent). */
  async purgeBefore(before: number): Promise<number> {
    const res = await this.db.deleteFrom('mail_outbox').where('status', '!=', 'queued').where('created_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
