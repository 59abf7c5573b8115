import type Router from '@koa/router';
import { noticesPage } from '../../web/pages/notices.js';
import { cursorId, encodeCursor } from '../api/pagination.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { formBody } from './form.js';
import { render } from './render.js';
import { requireUser } from './session.js';

/** Notices a page lists (the store keeps a few hundred per person): older ones are on the next pages. */
const SHOWN = 100;

/** The bell's page (`/notices`): a person's own notices, a page at a time, and marking them read. */
export function noticeRoutes(router: Router<AppState>, s: Services): void {
  router.get('notices', '/notices', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    // A page link altered or cut short starts again from the newest, saying so, as the Documents page does.
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    const before = cursor === undefined ? undefined : cursorId(cursor, 'ntc');
    const page = await s.notices.list(user.id, SHOWN + 1, before);
    const notices = page.slice(0, SHOWN);
    render(
      ctx,
      noticesPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        notices: notices.map((n) => ({ id: n.id, message: n.message, link: n.link, createdAt: n.createdAt, read: n.readAt !== null })),
        // Every unread one, shown on this page or not: "Mark all read" marks them all.
        unread: ctx.state.unreadNotices ?? 0,
        older: page.length > SHOWN ? `/notices?cursor=${encodeCursor(notices.at(-1)!.id)}` : null,
        newest: before === undefined ? null : '/notices',
        ...(cursor !== undefined && before === undefined ? { error: 'That page link is out of date; showing the newest notices.' } : {}),
      }),
    );
  });

  router.post('notices.read', '/notices/read', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    await s.notices.markRead(user.id, 'all');
    ctx.status = 303;
    ctx.redirect('/notices');
  });
}
