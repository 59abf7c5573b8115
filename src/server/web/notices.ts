import type Router from '@koa/router';
import { noticesPage } from '../../web/pages/notices.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { formBody } from './form.js';
import { render } from './render.js';
import { requireUser } from './session.js';

/** Notices the page lists at most (the store keeps a few hundred per person). */
const SHOWN = 100;

/** The bell's page (`/notices`): a person's own notices, and marking them read. */
export function noticeRoutes(router: Router<AppState>, s: Services): void {
  router.get('notices', '/notices', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const notices = await s.notices.list(user.id, SHOWN);
    render(ctx, noticesPage({ user, csrfToken: ctx.state.session!.csrfToken, notices: notices.map((n) => ({ id: n.id, message: n.message, link: n.link, createdAt: n.createdAt, read: n.readAt !== null })) }));
  });

  router.post('notices.read', '/notices/read', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    await s.notices.markRead(user.id, 'all');
    ctx.status = 303;
    ctx.redirect('/notices');
  });
}
