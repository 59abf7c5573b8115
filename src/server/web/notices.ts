import type Router from '@koa/router';
import { noticesPage } from '../../web/pages/notices.js';
import type { NoticePosition } from '../../store/sql/notices.js';
import { isListId } from '../api/pagination.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireFormUser } from './csrf.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';
import { requireUser } from './session.js';

/** Notices a page lists (the store keeps a few hundred per person): older ones are on the next pages. */
const SHOWN = 100;

/**
 * An older page's place: after the last notice shown (when it was last told, and its id), in the list begun when
 * the newest notice had been told at `since`. A notice told again moves to the top of the list, so one told since
 * the list was begun is on its first page, not on the older ones: they say how many there are.
 */
interface NoticeCursor extends NoticePosition {
  since: number;
}

const isTime = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

const encodeNoticeCursor = (c: NoticeCursor): string => Buffer.from(JSON.stringify([c.at, c.id, c.since]), 'utf8').toString('base64url');

/** The cursor's place, or undefined when it is not one this page issued (altered, cut short, another list's). */
function decodeNoticeCursor(cursor: string): NoticeCursor | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [at, id, since] = value as unknown[];
  if (!isTime(at) || !isTime(since) || !isListId(id, 'ntc')) return undefined;
  return { at, id, since };
}

/** The bell's page (`/notices`): a person's own notices, a page at a time, and marking them read. */
export function noticeRoutes(router: Router<AppState>, s: Services): void {
  router.get('notices', '/notices', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    // A page link altered or cut short starts again from the newest, saying so, as the Documents page does.
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    const after = cursor === undefined ? undefined : decodeNoticeCursor(cursor);
    const page = await s.notices.list(user.id, SHOWN + 1, after);
    const notices = page.slice(0, SHOWN);
    // The newest notice when this list was begun: "Mark all read" marks up to it, the older pages count those since.
    const since = after?.since ?? notices[0]?.createdAt;
    const last = notices.at(-1);
    render(
      ctx,
      noticesPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        notices: notices.map((n) => ({ id: n.id, message: n.message, link: n.link, createdAt: n.createdAt, read: n.readAt !== null })),
        // Every unread one, shown on this page or not: "Mark all read" marks them all, up to the newest shown.
        unread: ctx.state.unreadNotices ?? 0,
        through: since ?? null,
        toldSince: after ? await s.notices.toldSince(user.id, after.since) : 0,
        older: page.length > SHOWN && last && since !== undefined ? `/notices?cursor=${encodeNoticeCursor({ at: last.createdAt, id: last.id, since })}` : null,
        newest: after === undefined ? null : '/notices',
        ...(cursor !== undefined && after === undefined ? { error: 'That page link is out of date; showing the newest notices.' } : {}),
      }),
    );
  });

  router.post('notices.read', '/notices/read', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    // Up to the newest notice the page showed; a form without it (a page served before it was sent) marks them all.
    const given = formField(ctx, 'through');
    const through = /^\d+$/.test(given) ? Number(given) : undefined;
    await s.notices.markRead(user.id, isTime(through) ? through : undefined);
    ctx.status = 303;
    ctx.redirect('/notices');
  });
}
