/**
 * The one way anything sends e-mail (docs/mail.md): write it into the outbox, in the caller's transaction, and wake
 * the sender. Nothing here talks SMTP: the sender (outbox-sender.ts) does, on one replica at a time, so a mail server
 * that is down delays mail and loses none, and a rolled-back change sends nothing.
 */
import type { Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';
import type { SecretSealer } from '../core/sealed-secret.js';
import type { Events } from '../store/coordination.js';
import type { Db } from '../store/sql/database.js';
import { insertMail, type MailKind } from '../store/sql/mail-outbox.js';

/** A mail to send: to one address, in plain text. */
export interface MailDraft {
  kind: MailKind;
  to: string;
  subject: string;
  text: string;
}

/** What the sealed body holds. */
export interface MailBody {
  text: string;
}

/** The sealing context of an outbox row's body: a body cannot be moved to another row and still open. */
export const bodyContext = (id: string): string => `mail_outbox:${id}`;

export interface MailerDeps {
  /** The library's database, for mail that no other write goes with (`send`). */
  db: Db;
  /** Whether mail can be sent at all (`--smtp-url` is set); without it nothing is queued and pages show links instead. */
  enabled: boolean;
  sealer: SecretSealer;
  events: Events;
  now: Clock;
  /** The base of every link in a mail (`--public-url`, else the address the daemon is bound to). */
  publicUrl: () => string;
}

export class Mailer {
  constructor(private readonly deps: MailerDeps) {}

  get enabled(): boolean {
    return this.deps.enabled;
  }

  /** An absolute link to `path` on this server, for mail. */
  link(path: string): string {
    return `${this.deps.publicUrl()}${path}`;
  }

  /**
   * Writes the mail into the outbox on `db` (pass the transaction of the change that causes it). Returns its id, or
   * null when no mail server is configured (nothing is queued). Call `wake()` once the transaction has committed.
   */
  async queue(db: Db, draft: MailDraft): Promise<string | null> {
    if (!this.deps.enabled) return null;
    const now = this.deps.now();
    const id = newId('mail', now);
    const body: MailBody = { text: draft.text };
    await insertMail(db, { id, kind: draft.kind, to: draft.to, subject: draft.subject, bodySealed: this.deps.sealer.seal(JSON.stringify(body), bodyContext(id)) }, now);
    return id;
  }

  /** Queues a mail that no other change goes with, and wakes the sender; its id, or null without a mail server. */
  async send(draft: MailDraft): Promise<string | null> {
    const id = await this.queue(this.deps.db, draft);
    this.wake();
    return id;
  }

  /** Tells the sender, on whichever replica runs it, that mail is waiting. A lost announcement only delays it to the next poll. */
  wake(): void {
    if (this.deps.enabled) void this.deps.events.publish('mail', '').catch(() => undefined);
  }

  /** The body of an outbox row, or null when it cannot be opened (sealed under another secrets key). */
  open(id: string, sealed: string): MailBody | null {
    const plain = this.deps.sealer.open(sealed, bodyContext(id));
    if (plain === null) return null;
    return JSON.parse(plain) as MailBody;
  }
}
