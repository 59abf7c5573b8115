/**
 * Sends what the outbox holds (docs/mail.md). One replica at a time is the sender: the one that holds the `mail`
 * lease (an advisory lock on PostgreSQL, which ends with its connection, so a killed sender frees it at once); the
 * others look again every poll. The sender still claims each row before sending it (store/sql/mail-outbox.ts), so
 * even two senders at once would not send a mail twice. A failed attempt is tried again later, backing off
 * (30 s doubling, up to an hour); the recipient's final "no" (a 5xx to RCPT TO: permanentFailure), or MAX_ATTEMPTS
 * failures, gives the mail up: it shows as failed to admins (Admin → Mail, the admin API, health) and in the audit log.
 */
import { randomBytes } from 'node:crypto';
import type { AuditLog } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Events, Lease, Locks } from '../store/coordination.js';
import type { MailOutboxStore, OutboxRow } from '../store/sql/mail-outbox.js';
import type { Mailer } from './mailer.js';
import { type MailTransport, permanentFailure } from './smtp-transport.js';
import { cutUnits } from '../core/code-points.js';

export const MAIL_LOCK = 'mail';
/**
 * Attempts before a mail is given up on: with the backoff below, eleven waits between them (30 s, 1, 2, 4 … 32 min,
 * then an hour four times), about five hours of trying (docs/mail.md).
 */
export const MAX_ATTEMPTS = 12;
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 3600_000;
/** How long a claim on a row lasts: longer than one SMTP exchange with its timeouts. */
const CLAIM_MS = 120_000;
/** Recording a sent mail is tried again after 0.5 s, doubling up to 5 s, for as long as the database refuses. */
const RECORD_RETRY_MS = 500;
const RECORD_RETRY_MAX_MS = 5000;

/** When the attempt after `attempts` failed ones is due. */
export const retryDelay = (attempts: number): number => Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1), RETRY_MAX_MS);

export interface OutboxSenderDeps {
  store: MailOutboxStore;
  mailer: Mailer;
  transport: MailTransport;
  locks: Locks;
  events: Events;
  audit: AuditLog;
  log: Logger;
  now: Clock;
}

export class OutboxSender {
  /** Names this process in the rows it claims. */
  readonly owner = `m_${randomBytes(6).toString('hex')}`;
  private lease: Lease | null = null;
  private stopped = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly deps: OutboxSenderDeps,
    private readonly pollMs = 30_000,
  ) {}

  start(): void {
    this.unsubscribe = this.deps.events.subscribe('mail', () => this.wake());
    this.loop = this.run().catch((err: unknown) => this.deps.log.error({ err }, 'the mail sender stopped unexpectedly'));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.wake();
    await this.loop;
    await this.lease?.release().catch(() => undefined);
    this.deps.transport.close();
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let wakeAt = this.deps.now() + this.pollMs;
      try {
        if (!this.lease?.held()) this.lease = await this.deps.locks.tryAcquire(MAIL_LOCK);
        if (this.lease) wakeAt = Math.min(wakeAt, await this.drain(this.lease));
      } catch (err) {
        this.deps.log.warn({ err }, 'the mail sender could not read the outbox; trying again');
      }
      if (this.woken || this.stopped) continue;
      await this.sleep(wakeAt - this.deps.now());
    }
  }

  /** Waits `ms`, or until woken (a new mail, stop). */
  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(50, ms));
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
  }

  /** Sends every due row while the lease holds; returns when to look again. */
  private async drain(lease: Lease): Promise<number> {
    for (;;) {
      const due = await this.deps.store.due(20);
      if (due.length === 0) break;
      let claimed = 0;
      for (const id of due) {
        if (this.stopped || !lease.held()) return this.deps.now();
        const row = await this.deps.store.claim(id, this.owner, CLAIM_MS);
        if (!row) continue;
        claimed++;
        await this.send(row);
      }
      if (claimed === 0) break;
    }
    return this.deps.now() + this.pollMs;
  }

  private async send(row: OutboxRow): Promise<void> {
    const { store, mailer, transport, audit, log, now } = this.deps;
    const target = { type: 'mail', id: row.id, label: row.to };
    const body = row.bodySealed === null ? null : mailer.open(row.id, row.bodySealed);
    if (!body) {
      await store.markFailed(row.id, this.owner, 'its text cannot be read: it was sealed under another secrets key', null);
      log.error({ event: 'mail.failed', mail_id: row.id, kind: row.kind }, 'a queued mail cannot be read (another secrets key) and was given up');
      await audit.record({ type: 'mail.failed', target, details: { kind: row.kind, subject: row.subject, attempts: row.attempts + 1, error: 'sealed under another secrets key' } });
      return;
    }
    let messageId: string | null;
    try {
      ({ messageId } = await transport.send({ id: row.id, to: row.to, subject: row.subject, text: body.text }));
    } catch (err) {
      const message = mailError(err);
      const attempts = row.attempts + 1;
      const giveUp = permanentFailure(err) || attempts >= MAX_ATTEMPTS;
      await store.markFailed(row.id, this.owner, message, giveUp ? null : now() + retryDelay(attempts));
      if (giveUp) {
        log.error({ event: 'mail.failed', mail_id: row.id, kind: row.kind, attempts, error: message }, 'a mail was given up');
        await audit.record({ type: 'mail.failed', target, details: { kind: row.kind, subject: row.subject, attempts, error: message } });
      } else {
        log.warn({ event: 'mail.deferred', mail_id: row.id, kind: row.kind, attempts, error: message, retry_in_ms: retryDelay(attempts) }, 'could not send a mail; it is tried again later');
      }
      return;
    }
    if (!(await this.recordSent(row.id, messageId))) return;
    log.info({ event: 'mail.sent', mail_id: row.id, kind: row.kind, attempts: row.attempts + 1 }, `sent a mail (${row.kind})`);
    await audit.record({ type: 'mail.sent', target, details: { kind: row.kind, subject: row.subject, attempts: row.attempts + 1 } });
  }

  /**
   * Records a mail the mail server took as sent, trying again while the database refuses (an outage, a full disk):
   * recorded as a failed attempt, or left claimed, it would be sent a second time. Only stopping, or another sender
   * having taken the row over, ends the trying; the mail is then sent again under the same Message-ID (docs/mail.md).
   */
  private async recordSent(id: string, messageId: string | null): Promise<boolean> {
    const { store, log } = this.deps;
    for (let wait = RECORD_RETRY_MS; ; wait = Math.min(wait * 2, RECORD_RETRY_MAX_MS)) {
      try {
        if (await store.markSent(id, this.owner, messageId)) return true;
        log.warn({ event: 'mail.taken_over', mail_id: id }, 'a sent mail was claimed by another sender before it could be recorded: it may be sent again');
        return false;
      } catch (err) {
        if (this.stopped) {
          log.error({ err, event: 'mail.unrecorded', mail_id: id }, 'a sent mail could not be recorded as sent before stopping: it is sent again once its claim ends');
          return false;
        }
        log.warn({ err, event: 'mail.unrecorded', mail_id: id, retry_in_ms: wait }, 'a sent mail could not be recorded as sent yet; trying again');
        await this.sleep(wait);
      }
    }
  }
}

/** The mail server's answer, or the connection's trouble, in one line without credentials. */
function mailError(err: unknown): string {
  const e = err as { response?: string; code?: string; message?: string };
  return cutUnits((e.response ?? e.message ?? String(err)).replace(/\s+/g, ' '), 300);
}
