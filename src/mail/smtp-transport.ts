import { createTransport } from 'nodemailer';

/** One message as the outbox sends it. */
export interface OutgoingMessage {
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

/** Whether a failure is the mail server's final "no" (a 5xx reply: an address it will never take), not a passing one. */
export const permanentFailure = (err: unknown): boolean => {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
};

/**
 * nodemailer's SMTP transport on `url` (smtp://user:pass@host:port, smtps://…). Bounded waits: a relay that stops
 * answering fails the attempt (retried later from the outbox) instead of holding the sender.
 */
export function smtpTransport(url: string, from: string): MailTransport {
  // The URL's own settings (auth, port, ?tls.rejectUnauthorized=…) win over these defaults.
  const transport = createTransport({ url, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 }, { from });
  return {
    async send(message) {
      const info = await transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
      return { messageId: typeof info.messageId === 'string' ? info.messageId : null };
    },
    close: () => transport.close(),
  };
}
