import type Router from '@koa/router';
import { isSharingPolicy } from '../../access/sharing.js';
import { invalidRequest } from '../../core/errors.js';
import { adminSharingPage } from '../../web/pages/admin-sharing.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { requireAdmin, requireAdminForm } from './admin-common.js';
import { redirectWithOutcome } from './flash.js';
import { formBody, formField } from './form.js';
import { render } from './render.js';

/** Admin → Sharing: the instance's sharing policy. */
export function adminSharingRoutes(router: Router<AppState>, s: Services): void {
  router.get('admin.sharing', '/admin/sharing', async (ctx) => {
    const admin = await requireAdmin(ctx, s);
    if (admin) render(ctx, adminSharingPage({ user: admin, csrfToken: ctx.state.session!.csrfToken, policy: await s.sharing.policy() }));
  });

  router.post('admin.sharing.save', '/admin/sharing', formBody(), async (ctx) => {
    const admin = await requireAdminForm(ctx, s);
    if (!admin) return;
    await redirectWithOutcome(ctx, '/admin/sharing', async () => {
      const policy = formField(ctx, 'policy');
      if (!isSharingPolicy(policy)) throw invalidRequest('choose a sharing policy: anyone, groups or admins');
      await s.sharing.setPolicy(policy);
      s.log.info({ admin: admin.id, policy }, 'sharing policy changed on Admin → Sharing');
      return 'Saved the sharing policy.';
    });
  });
}
