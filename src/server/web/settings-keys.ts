import type Router from '@koa/router';
import { isScope, type Scope } from '../../auth/scopes.js';
import { toIso } from '../../core/clock.js';
import { html } from '../../web/html.js';
import { confirmPage } from '../../web/pages/confirm.js';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, keyLabel, settingsKeysPage, type SettingsKeysData } from '../../web/pages/settings-keys.js';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { renderNotFound } from './library-common.js';
import { answerAsPage } from './answer-as-page.js';
import { requireFormUser } from './csrf.js';
import { flash } from './flash.js';
import { formBody, formField, formFields } from './form.js';
import { redirectWithOnce, requireUser, takeOnce, type WebContext, type WebUser } from './session.js';
import { isAppError } from '../../core/errors.js';
import { render } from './render.js';
import { KeyName } from '../api/keys/create.js';
import { plainMessage } from '../api/validate.js';
import { requireRecentProof } from './sudo.js';
import { compareNames } from '../../core/name-order.js';

async function showKeys(ctx: WebContext, s: Services, user: WebUser, extra: { newKey?: { key: string; name: string | null }; error?: string; form?: SettingsKeysData['form'] } = {}) {
  // A refusal (only a form has one) is the page after a 303 to it: a reload posts nothing again.
  if (extra.error) answerAsPage(ctx, '/settings/keys');
  const keys = await s.apiKeys.list(user.id);
  const readable = (await Promise.all((await s.access.readable(user.actor)).map((id) => s.projects.get(id)))).filter((p) => p !== null);
  const names = new Map(readable.map((p) => [p.id, p.name]));
  render(
    ctx,
    settingsKeysPage({
      user,
      csrfToken: ctx.state.session!.csrfToken,
      now: s.now(),
      projects: readable.map((p) => ({ id: p.id, name: p.name })).sort((a, b) => compareNames(a.name, b.name)),
      keys: keys.map((k) => ({ ...k, projectNames: k.projectIds ? k.projectIds.map((id) => names.get(id) ?? id) : null, createdAt: toIso(k.createdAt), lastUsedAt: k.lastUsedAt === null ? null : toIso(k.lastUsedAt), expired: s.apiKeys.expired(k) })),
      ...extra,
    }),
    extra.error ? 400 : 200,
  );
}

export function settingsKeysRoutes(router: Router<AppState>, s: Services): void {
  router.get('settings.keys', '/settings/keys', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const fresh = await takeOnce(ctx, s, 'api-key');
    await showKeys(ctx, s, user, fresh ? { newKey: { key: fresh.key, name: fresh.name } } : {});
  });

  router.post('settings.keys.create', '/settings/keys', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user || !(await requireRecentProof(ctx, s, user, 'make a new API key', '/settings/keys'))) return;
    const scopes = formFields(ctx, 'scopes').filter(isScope) as Scope[];
    // A refusal shows the form as it was sent: re-ticking every scope (the default) would make a key broader than chosen.
    const form = { name: formField(ctx, 'name'), scopes, projects: formFields(ctx, 'projects'), expires: formField(ctx, 'expires') };
    if (scopes.length === 0) return showKeys(ctx, s, user, { error: 'Choose at least one scope.', form });
    // The API's rule (KeyName): a name too long is refused with the form kept, not cut (a cut could split an emoji).
    const named = form.name.trim() === '' ? null : KeyName.safeParse(form.name);
    if (named && !named.success) return showKeys(ctx, s, user, { error: `The name ${plainMessage(named.error.issues[0]!)}.`, form });
    const name = named ? named.data : null;
    const choice = EXPIRY_CHOICES.find((c) => c.value === (formField(ctx, 'expires') || DEFAULT_EXPIRY));
    if (!choice) return showKeys(ctx, s, user, { error: 'Choose when the key expires.', form });
    // Ticked projects limit the key; each must be one the person may read (a forged id is refused, not ignored).
    const ticked = formFields(ctx, 'projects');
    let projectIds: string[] | null = null;
    if (ticked.length > 0) {
      try {
        projectIds = await s.access.scope(user.actor, ticked);
      } catch (err) {
        if (!isAppError(err) || err.status !== 404) throw err;
        return showKeys(ctx, s, user, { error: 'A project you ticked is not one you may read: reload the page and tick again.', form });
      }
    }
    const issued = await s.apiKeys.issue(user.id, name, { scopes, projectIds, expires: choice.days === null ? 'never' : { days: choice.days } });
    await redirectWithOnce(ctx, s, { kind: 'api-key', key: issued.key, name }, '/settings/keys');
  });

  router.get('settings.keys.revoke.confirm', '/settings/keys/:id/revoke', async (ctx) => {
    const user = await requireUser(ctx, s);
    if (!user) return;
    const key = (await s.apiKeys.list(user.id)).find((k) => k.id === ctx.params.id);
    if (!key) return renderNotFound(ctx, user, 'API key');
    const name = key.name ?? keyLabel(key);
    render(
      ctx,
      confirmPage({
        user,
        csrfToken: ctx.state.session!.csrfToken,
        active: 'keys',
        title: `Revoke the key “${name}”?`,
        body: html`<p>The key <code>${keyLabel(key)}</code> stops working at once: scripts and CI jobs that use it get
          <code>401</code> from their next request. This can't be undone; you can generate a new key.</p>`,
        action: `/settings/keys/${key.id}/revoke`,
        confirm: 'Revoke key',
        cancel: '/settings/keys',
      }),
    );
  });

  router.post('settings.keys.revoke', '/settings/keys/:id/revoke', formBody(), async (ctx) => {
    const user = await requireFormUser(ctx, s);
    if (!user) return;
    const key = (await s.apiKeys.list(user.id)).find((k) => k.id === ctx.params.id);
    if (key && (await s.apiKeys.revoke(user.id, key.id))) flash(ctx, `Revoked the key “${key.name ?? keyLabel(key)}”.`);
    ctx.redirect('/settings/keys');
  });
}
