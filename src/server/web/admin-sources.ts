import type Router from '@koa/router';
import { formatEvery } from '../../sources/every.js';
import { adminSourcesPage } from '../../web/pages/admin-sources.js';
import { pausedReason, sourceStatus } from '../api/sources/wire.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin } from './admin-common.js';
import { render } from './render.js';

/** Admin → Sources (`/admin/sources`): every source's state, for admins; never a source's documents. */
export function adminSourceRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin.sources', '/admin/sources', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (!admin) return;
    const sources = (await s.sources.listAll()).map((x) => ({
      id: x.id,
      projectId: x.projectId,
      projectName: x.projectName,
      ownerEmail: x.ownerEmail,
      kind: x.kind,
      url: x.url,
      every: formatEvery(x.everyMs),
      status: sourceStatus(x),
      why: pausedReason(x) ?? x.error,
      held: x.heldDeletions?.count ?? 0,
      failures: x.failures,
      lastSync: x.lastSyncAt,
    }));
    render(ctx, adminSourcesPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, sources }));
  });
}
