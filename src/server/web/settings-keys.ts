import type Router from '@koa/router';
import { isScope, type Scope } from '../../auth/scopes.js';
import { toIso } from '../../core/clock.js';
import { settingsKeysPage } from '../../web/pages/settings-keys.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkCsrf, formBody, formField, formFields, render, requireUser, type WebContext } from './session.js';

async function showKeys(ctx: WebContext, s: Services, user: { id: string; email: string }, extra: { newKey?: { key: string; name: string | null }; error?: string } = {}) {
  const keys = await s.apiKeys.list(user.id);
  render(
    ctx,
    settingsKeysPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      keys: keys.map((k) => ({ ...k, createdAt: toIso(k.createdAt), lastUsedAt: k.lastUsedAt === null ? null : toIso(k.lastUsedAt) })),
      ...extra,
    }),
    extra.error ? 400 : 200,
  );
}

export function settingsKeysRoutes(router: Router<AppState>, s: Services): void {
  router.get('settings.keys', '/settings/keys', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (user) await showKeys(ctx, s, user);
  });

  router.post('settings.keys.create', '/settings/keys', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    const name = formField(ctx, 'name').trim().slice(0, 100) || null;
    const scopes = formFields(ctx, 'scopes').filter(isScope) as Scope[];
    if (scopes.length === 0) return showKeys(ctx, s, user, { error: 'Choose at least one scope.' });
    const issued = await s.apiKeys.issue(user.id, name, scopes);
    await showKeys(ctx, s, user, { newKey: { key: issued.key, name } });
  });

  router.post('settings.keys.revoke', '/settings/keys/:id/revoke', formBody(), async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    checkCsrf(ctx, s);
    await s.apiKeys.revoke(user.id, ctx.params.id!);
    ctx.redirect('/settings/keys');
  });
}
