import type Router from '@koa/router';
import { adminAuditPage } from '../../web/pages/admin-audit.js';
import { AuditQuery, auditCursorFits, findAuditEvents } from '../api/audit-events.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin } from './admin-common.js';
import { render } from './render.js';

const FILTERS = ['type', 'actor', 'target', 'client_ip', 'since', 'until'] as const;

/** Admin → Audit log (`/admin/audit`): what `GET /api/v1/audit-events` lists (same filters, same check), as a page. */
export function adminAuditRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin.audit', '/admin/audit', async (ctx) => {
    const user = await requireAdmin(ctx, s);
    if (!user) return;
    const given = Object.fromEntries(FILTERS.map((k) => [k, typeof ctx.query[k] === 'string' ? (ctx.query[k] as string).trim() : '']).filter(([, v]) => v !== ''));
    // A page link altered, cut short or of other filters starts again from the newest, saying so, as the Documents page does.
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    const base = { user, csrfToken: ctx.state.session!.csrfToken, filters: given };
    const parsed = AuditQuery.safeParse(given);
    if (!parsed.success) {
      const error = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ');
      return render(ctx, adminAuditPage({ ...base, events: [], older: null, error }), 400);
    }
    const stale = cursor !== undefined && !auditCursorFits({ ...parsed.data, cursor });
    const { events, nextCursor } = await findAuditEvents(s, { ...parsed.data, ...(cursor && !stale ? { cursor } : {}) });
    render(
      ctx,
      adminAuditPage({
        ...base,
        events,
        older: nextCursor ? new URLSearchParams({ ...given, cursor: nextCursor }).toString() : null,
        ...(stale ? { error: 'That page link is out of date; showing the newest events.' } : {}),
      }),
    );
  });
}
