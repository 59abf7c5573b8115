import { createTransport } from 'nodemailer';

/** One message as the outbox sends it. */
export interface OutgoingMessage {
  /** The outbox row's id: its Message-ID, the same at every attempt. */
  id: string;
  to: string;
  subject: string;
  text: string;
}

/** Where mail leaves this server: an SMTP relay (`--smtp-url`). */
export interface MailTransport {
  /** Hands the message over; resolves with what the server called it. Rejects with the server's answer. */
  send(message: OutgoingMessage): Promise<{ messageId: string | null }>;
  close(): void;
}

/**
 * RFC 3463 statuses that are about the recipient's address or mailbox: no such mailbox (5.1.1), no such domain
 * (5.1.2), bad syntax (5.1.3), moved (5.1.6), a domain that takes no mail (5.1.10), a disabled mailbox (5.2.1).
 */
const RECIPIENT_STATUS = /^5\.(?:1\.(?:1|2|3|6|10)|2\.1)$/;

/**
 * Whether a failure is the recipient's final "no": a 5xx answer to RCPT TO (nodemailer names the command that
 * failed in `err.command`), unless its enhanced status says it is about something else. Every other failure is kept
 * and tried again: a 5xx to AUTH (wrong password), MAIL FROM (a --smtp-from the relay does not allow), the greeting
 * or EHLO (this host refused) is the relay's setup, which its operator fixes; so is a 5xx after DATA (our From
 * refused by the relay's sender policy, a size limit below our few hundred bytes), as the same text goes to
 * everyone. At RCPT TO, postfix also answers for the sender ("Sender address rejected", 5.7.1, as it delays its
 * refusals to RCPT) and for itself ("Relay access denied", 5.7.1): those are the relay's setup too.
 */
export const permanentFailure = (err: unknown): boolean => {
  const { command, responseCode, response } = err as { command?: string; responseCode?: number; response?: string };
  if (command !== 'RCPT TO' || typeof responseCode !== 'number' || responseCode < 500 || responseCode >= 600) return false;
  const status = /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(response ?? '')?.[1];
  return status === undefined || RECIPIENT_STATUS.test(status);
};

/**
 * nodemailer's SMTP transport on `url` (smtp://user:pass@host:port, smtps://…). Bounded waits: a relay that stops
 * answering fails the attempt (retried later from the outbox) instead of holding the sender.
 */
export function smtpTransport(url: string, from: string): MailTransport {
  // The URL's own settings (auth, port, ?tls.rejectUnauthorized=…) win over these defaults.
  const transport = createTransport({ url, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 }, { from });
  const domain = /@([^\s<>@]+)>?\s*$/.exec(from)?.[1] ?? 'docsearch.invalid';
  return {
    async send(message) {
      // A relay that drops the connection before its final reply may have taken the mail: the next attempt sends it
      // again (better twice than never), under the same Message-ID, by which mail systems know it for one.
      const messageId = `<${message.id}@${domain}>`;
      const info = await transport.sendMail({ messageId, to: message.to, subject: message.subject, text: message.text });
      return { messageId: typeof info.messageId === 'string' ? info.messageId : null };
    },
    close: () => transport.close(),
  };
}
