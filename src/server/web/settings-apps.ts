import type Router from '@koa/router';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import { toIso } from '../../core/clock.js';
import { isAppError } from '../../core/errors.js';
import { type SettingsApplicationsData, settingsApplicationsPage } from '../../web/pages/settings-applications.js';
import { settingsConnectedPage } from '../../web/pages/settings-connected.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf, formBody, formField, render, requireUser, type WebContext } from './session.js';

type User = { id: string; email: string };

async function showApps(ctx: WebContext, oauth: OAuthProvider, user: User, extra: Partial<SettingsApplicationsData> = {}) {
  const apps = await oauth.clients.listOwned(user.id);
  render(
    ctx,
    settingsApplicationsPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      apps: apps.map((a) => ({ id: a.id, name: a.name, isPublic: a.isPublic, redirectUris: a.redirectUris, createdAt: toIso(a.createdAt) })),
      ...extra,
    }),
    extra.error ? 400 : 200,
  );
}

async function showConnected(ctx: WebContext, oauth: OAuthProvider, user: User, notice?: string) {
  const apps = await oauth.connectedApps(user.id);
  render(
    ctx,
    settingsConnectedPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      apps: apps.map((a) => ({ clientId: a.clientId, name: a.clientName, scopes: a.scopes, grantedAt: toIso(a.grantedAt), lastIssuedAt: toIso(a.lastIssuedAt) })),
      notice,
    }),
  );
}

/** Settings → Applications (register, rotate secret, delete) and Settings → Connected apps (revoke). */
export function settingsAppsRoutes(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.get('settings.applications', '/settings/applications', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showApps(ctx, oauth, user);
  });

  router.post('settings.applications.register', '/settings/applications', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    const form = { name: formField(ctx, 'name'), redirectUris: formField(ctx, 'redirect_uris'), isPublic: formField(ctx, 'public') === '1' };
    try {
      const { client, secret } = await oauth.clients.register({ name: form.name, redirectUris: form.redirectUris.split(/\r?\n/), isPublic: form.isPublic, userId: user.id });
      await showApps(ctx, oauth, user, { issued: { name: client.name, clientId: client.id, secret, rotated: false } });
    } catch (err) {
      if (isAppError(err) && err.status < 500) return showApps(ctx, oauth, user, { error: err.message, form });
      throw err;
    }
  });

  router.post('settings.applications.rotate', '/settings/applications/:id/rotate', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    const secret = await oauth.clients.rotateSecret(user.id, ctx.params.id!);
    const client = (await oauth.clients.find(ctx.params.id!))!;
    await showApps(ctx, oauth, user, { issued: { name: client.name, clientId: client.id, secret, rotated: true } });
  });

  router.post('settings.applications.delete', '/settings/applications/:id/delete', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    await oauth.clients.delete(user.id, ctx.params.id!);
    ctx.redirect('/settings/applications');
  });

  router.get('settings.connected', '/settings/connected', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showConnected(ctx, oauth, user);
  });

  router.post('settings.connected.revoke', '/settings/connected/:clientId/revoke', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    await oauth.revokeConnected(user.id, ctx.params.clientId!);
    ctx.redirect('/settings/connected');
  });
}
