import { z } from 'zod';
import { isEmailAddress } from '../../../auth/accounts.js';
import { toIso } from '../../../core/clock.js';
import { AppError } from '../../../core/errors.js';
import { testMail } from '../../../mail/messages.js';
import type { OutboxRow } from '../../../store/sql/mail-outbox.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, Timestamp } from '../schemas.js';
import { ADMIN_REFUSALS, requireAdminCaller } from './guard.js';
import { MAX_EMAIL_CHARS } from '../../../core/name-limits.js';

export const OutboxMail = z
  .object({
    id: z.string(),
    kind: z.string().describe('invite, password_reset, sign_in_notice, source_alert or test'),
    to: z.string(),
    subject: z.string(),
    status: z.enum(['queued', 'sent', 'failed']).describe('queued: waiting (or being retried); sent: the mail server took it; failed: given up'),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable().describe('when a queued mail is tried next'),
    last_error: z.string().nullable().describe("the mail server's last answer, for a retried or failed mail"),
    created_at: Timestamp,
    sent_at: Timestamp.nullable(),
  })
  .meta({ id: 'OutboxMail' });

const toWire = (r: OutboxRow): z.infer<typeof OutboxMail> => ({
  id: r.id,
  kind: r.kind,
  to: r.to,
  subject: r.subject,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.status === 'queued' ? toIso(r.nextAttemptAt) : null,
  last_error: r.lastError,
  created_at: toIso(r.createdAt),
  sent_at: r.sentAt === null ? null : toIso(r.sentAt),
});

export const adminListMail = (s: Services) =>
  defineRoute({
    name: 'admin.mail.list',
    method: 'GET',
    path: '/admin/mail',
    scope: 'authenticated',
    tag: 'admin',
    summary: 'The mail outbox, newest first: what is queued (and why it is being retried), sent and given up, with counts. Never a body. Admins only.',
    query: z.strictObject({ status: z.enum(['queued', 'sent', 'failed']).optional(), limit: z.coerce.number().int().min(1).max(200).default(50) }),
    responses: {
      200: {
        description: 'The outbox',
        schema: z.object({ configured: z.boolean(), counts: z.object({ queued: z.number().int(), sent: z.number().int(), failed: z.number().int() }), mail: z.array(OutboxMail) }),
      },
      ...ADMIN_REFUSALS,
    },
    async handler({ principal, query }) {
      await requireAdminCaller(s, principal);
      const [counts, rows] = await Promise.all([s.outbox.counts(), s.outbox.list({ ...(query.status ? { status: query.status } : {}), limit: query.limit })]);
      return { status: 200, body: { configured: s.mailer.enabled, counts: { queued: counts.queued, sent: counts.sent, failed: counts.failed }, mail: rows.map(toWire) } };
    },
  });

export const adminTestMail = (s: Services) =>
  defineRoute({
    name: 'admin.mail.test',
    method: 'POST',
    path: '/admin/mail/test',
    scope: 'write:documents',
    tag: 'admin',
    summary: "Queue a test mail to the admin's own address (or `to`), to see that mail from this server arrives. 409 without a mail server (--smtp-url). Admins only.",
    body: z.strictObject({ to: z.string().trim().max(MAX_EMAIL_CHARS).refine(isEmailAddress, 'is not an email address').optional() }).default({}),
    responses: { 202: { description: 'Queued', schema: OutboxMail }, ...ADMIN_REFUSALS, 409: { description: 'No mail server is configured', schema: ErrorBody } },
    async handler({ principal, body }) {
      const admin = await requireAdminCaller(s, principal);
      if (!s.mailer.enabled) throw new AppError('conflict', 'this server sends no mail: start it with --smtp-url (docs/mail.md)');
      const id = await s.mailer.send(testMail({ to: body.to ?? admin.email, publicUrl: s.publicUrl(), by: admin.email }));
      return { status: 202, body: toWire((await s.outbox.get(id!))!) };
    },
  });

export const adminRetryMail = (s: Services) =>
  defineRoute({
    name: 'admin.mail.retry',
    method: 'POST',
    path: '/admin/mail/retry',
    scope: 'write:documents',
    tag: 'admin',
    summary: 'Try every queued mail now instead of at its next attempt (once the mail server is back). Admins only.',
    responses: { 200: { description: 'How many are tried now', schema: z.object({ queued: z.number().int() }) }, ...ADMIN_REFUSALS },
    async handler({ principal }) {
      await requireAdminCaller(s, principal);
      const queued = await s.outbox.retryNow();
      s.mailer.wake();
      return { status: 200, body: { queued } };
    },
  });
