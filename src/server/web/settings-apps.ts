import type Router from '@koa/router';
import type { OAuthProvider } from '../../auth/oauth/provider.js';
import { toIso } from '../../core/clock.js';
import { isAppError } from '../../core/errors.js';
import { html } from '../../web/html.js';
import { confirmPage } from '../../web/pages/confirm.js';
import { type SettingsApplicationsData, settingsApplicationsPage } from '../../web/pages/settings-applications.js';
import { settingsConnectedPage } from '../../web/pages/settings-connected.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { renderNotFound } from './library-common.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField } from './form.js';
import { redirectWithOnce, requireUser, takeOnce, type WebContext } from './session.js';
import { render } from './render.js';
import { requireRecentProof } from './sudo.js';

type User = { id: string; email: string };

async function showApps(ctx: WebContext, oauth: OAuthProvider, user: User, extra: Partial<SettingsApplicationsData> = {}) {
  // A refusal (only a form has one) is the page after a 303 to it: a reload posts nothing again.
  if (extra.error) answerAsPage(ctx, '/settings/applications');
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

async function showConnected(ctx: WebContext, oauth: OAuthProvider, user: User) {
  const apps = await oauth.connectedApps(user.id);
  render(
    ctx,
    settingsConnectedPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      apps: apps.map((a) => ({ clientId: a.clientId, name: a.clientName, scopes: a.scopes, grantedAt: toIso(a.grantedAt), lastIssuedAt: toIso(a.lastIssuedAt) })),
    }),
  );
}

/** Settings → Applications (register, rotate secret, delete) and Settings → Connected apps (revoke). */
export function settingsAppsRoutes(router: Router<AppState>, s: Services, oauth: OAuthProvider): void {
  router.get('settings.applications', '/settings/applications', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const fresh = await takeOnce(ctx, s, 'client-secret');
    await showApps(ctx, oauth, user, fresh ? { issued: { name: fresh.name, clientId: fresh.clientId, secret: fresh.secret, rotated: fresh.rotated } } : {});
  });

  router.post('settings.applications.register', '/settings/applications', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user || !(await requireRecentProof(ctx, s, user, 'register an application', '/settings/applications'))) return;
    const form = { name: formField(ctx, 'name'), redirectUris: formField(ctx, 'redirect_uris'), isPublic: formField(ctx, 'public') === '1' };
    try {
      const { client, secret } = await oauth.clients.register({ name: form.name, redirectUris: form.redirectUris.split(/\r?\n/), isPublic: form.isPublic, userId: user.id });
      await redirectWithOnce(ctx, s, { kind: 'client-secret', name: client.name, clientId: client.id, secret, rotated: false }, '/settings/applications');
    } catch (err) {
      if (isAppError(err) && err.status < 500) return showApps(ctx, oauth, user, { error: err.message, form });
      throw err;
    }
  });

  // Rotating and deleting end what the application holds now: each asks first, on a page of its own.
  for (const verb of ['rotate', 'delete'] as const) {
    router.get(`settings.applications.${verb}.confirm`, `/settings/applications/:id/${verb}`, async (ctx) => {
      const user = await requireUser(ctx, s);
      if (!user) return;
      const app = (await oauth.clients.listOwned(user.id)).find((a) => a.id === ctx.params.id);
      if (!app || (verb === 'rotate' && app.isPublic)) return renderNotFound(ctx, user, 'application');
      render(
        ctx,
        confirmPage({
          user,
          csrfToken: ctx.state.session!.csrfToken,
          active: 'applications',
          ...(verb === 'rotate'
            ? {
                title: `Rotate the secret of “${app.name}”?`,
                body: html`<p>A new client secret is shown once on the next page. The current secret stops working at once:
                  the application can't get or refresh tokens until it is given the new one.</p>`,
                confirm: 'Rotate secret',
              }
            : {
                title: `Delete the application “${app.name}”?`,
                body: html`<p>Every token it holds is revoked at once and its users are signed out of it. Its client ID
                  <code>${app.id}</code> stops working; this can't be undone.</p>`,
                confirm: 'Delete application',
              }),
          action: `/settings/applications/${app.id}/${verb}`,
          cancel: '/settings/applications',
        }),
      );
    });
  }

  router.post('settings.applications.rotate', '/settings/applications/:id/rotate', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user || !(await requireRecentProof(ctx, s, user, 'make a new client secret', '/settings/applications'))) return;
    const secret = await oauth.clients.rotateSecret(user.id, ctx.params.id!);
    const client = (await oauth.clients.find(ctx.params.id!))!;
    await redirectWithOnce(ctx, s, { kind: 'client-secret', name: client.name, clientId: client.id, secret, rotated: true }, '/settings/applications');
  });

  router.post('settings.applications.delete', '/settings/applications/:id/delete', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const app = await oauth.clients.find(ctx.params.id!);
    await oauth.clients.delete(user.id, ctx.params.id!);
    flash(ctx, `Deleted the application “${app!.name}”; its tokens no longer work.`);
    ctx.redirect('/settings/applications');
  });

  router.get('settings.connected', '/settings/connected', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showConnected(ctx, oauth, user);
  });

  router.get('settings.connected.revoke.confirm', '/settings/connected/:clientId/revoke', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const app = (await oauth.connectedApps(user.id)).find((a) => a.clientId === ctx.params.clientId);
    if (!app) return renderNotFound(ctx, user, 'connected app');
    render(
      ctx,
      confirmPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        active: 'connected',
        title: `Revoke access of “${app.clientName}”?`,
        body: html`<p>Its tokens stop working at once. To use it again you will have to allow it again on its consent screen.</p>`,
        action: `/settings/connected/${app.clientId}/revoke`,
        confirm: 'Revoke access',
        cancel: '/settings/connected',
      }),
    );
  });

  router.post('settings.connected.revoke', '/settings/connected/:clientId/revoke', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const app = (await oauth.connectedApps(user.id)).find((a) => a.clientId === ctx.params.clientId);
    if ((await oauth.revokeConnected(user.id, ctx.params.clientId!)) > 0 && app) flash(ctx, `Revoked the access of “${app.clientName}”.`);
    ctx.redirect('/settings/connected');
  });
}
