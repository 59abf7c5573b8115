import type Router from '@koa/router';
import { defaultFrom } from '../../mail/from.js';
import { testMail } from '../../mail/messages.js';
import { relayShown } from '../../mail/smtp-url.js';
import { adminMailPage } from '../../web/pages/admin-mail.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin, requireAdminForm } from './admin-common.js';
import { redirectWithOutcome } from './flash.js';
import { formBody } from './form.js';
import { render } from './render.js';

/** Admin → Mail: the outbox, a test mail, and "retry now" (the same actions as /api/v1/admin/mail). */
export function adminMailRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin.mail', '/admin/mail', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    const [counts, mail] = await Promise.all([s.outbox.counts(), s.outbox.list({ limit: 100 })]);
    render(ctx, adminMailPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, configured: s.mailer.enabled, counts, mail, relay: s.config.smtpUrl ? relayShown(s.config.smtpUrl) : null, from: s.config.smtpFrom ?? defaultFrom(s.publicUrl()) }));
  });

  router.post('admin.mail.test', '/admin/mail/test', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/mail', async () => {
      if (!(await s.mailer.send(testMail({ to: admin.email, publicUrl: s.publicUrl(), by: admin.email })))) return 'This server sends no mail: nothing was queued.';
      return `Queued a test mail to ${admin.email}: it shows below as sent once the mail server has taken it.`;
    });
  });

  router.post('admin.mail.retry', '/admin/mail/retry', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/mail', async () => {
      const n = await s.outbox.retryNow();
      s.mailer.wake();
      return `Trying ${n} waiting mail now.`;
    });
  });
}
