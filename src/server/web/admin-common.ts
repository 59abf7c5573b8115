import { actingAsAdmin } from '../../core/audit.js';
import { messagePage } from '../../web/pages/message.js';
import type { Services } from '../services.js';
import { requireFormUser } from './csrf.js';
import { render } from './render.js';
import { requireUser, type WebContext, type WebUser } from './session.js';

/** Anyone signed in who is not an admin: a 403 page (the Admin pages are no secret, only their use). */
function refuse(ctx: WebContext, user: WebUser): null {
  render(ctx, messagePage({ title: 'Admins only', message: 'Only an administrator of this docsearch can open the Admin pages.', user, csrfToken: ctx.state.session?.csrfToken }), 403);
  return null;
}

/** The signed-in admin for an Admin page; the login redirect when signed out, the 403 page for anyone else. */
export async function requireAdmin(ctx: WebContext, s: Services): Promise<WebUser | null> {
  const user = await requireUser(ctx, s);
  return user && (user.isAdmin ? user : refuse(ctx, user));
}

/**
 * The admin sending an Admin form, its CSRF token checked first (as every signed-in form's). What the form changes
 * is an admin's work: audited `by: admin`, as through the admin API.
 */
export async function requireAdminForm(ctx: WebContext, s: Services): Promise<WebUser | null> {
  const user = await requireFormUser(ctx, s);
  if (!user) return null;
  if (!user.isAdmin) return refuse(ctx, user);
  actingAsAdmin();
  return user;
}
