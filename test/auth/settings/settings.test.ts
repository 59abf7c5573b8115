import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';
import { getCode, loggedIn, post } from '../oauth-flow.js';

const REDIRECT = 'http://127.0.0.1:9/settings-cb';

const issued = (page: string) => ({
  clientId: /id="new-client-id" readonly value="([^"]+)"/.exec(page)?.[1],
  secret: /id="new-client-secret" readonly value="([^"]+)"/.exec(page)?.[1],
});

describe('Settings → Applications and Connected apps', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob] = [await addUser(d), await addUser(d)];
    web = await loggedIn(d, alice);
  });

  async function register(name: string, uris = REDIRECT) {
    await web.get('/settings/applications');
    const res = await web.submit('/settings/applications', { _csrf: web.csrf, name, redirect_uris: uris });
    // Post/Redirect/Get: the form redirects, and the page it leads to shows the secret.
    expect(res.redirectedFrom).toMatchObject({ status: 303, location: '/settings/applications' });
    expect(res.status).toBe(200);
    const { clientId, secret } = issued(res.text);
    return { clientId: clientId!, secret: secret!, page: res.text };
  }
  const exchange = async (clientId: string, secret: string) =>
    post(d, '/api/oauth/token', { grant_type: 'authorization_code', code: await getCode(web, { client_id: clientId, redirect_uri: REDIRECT }), client_id: clientId, client_secret: secret, redirect_uri: REDIRECT });

  it('registers an application and shows its secret once', async () => {
    const { clientId, secret, page } = await register('Page App', `${REDIRECT}\r\nhttps://page.example.com/cb`);
    expect(clientId).toMatch(/^app_/);
    expect(secret).toMatch(/^dscs_[0-9A-Za-z]{43}$/);
    expect(page).toContain('Copy the client secret now: it will not be shown again.');
    expect(page).toContain('data-copy-target="new-client-secret"');
    const again = await web.get('/settings/applications');
    expect(again.text).toContain(clientId);
    // The redirect URI reads whole, and may wrap (a phone's width) only after its separators, never inside a word.
    expect(again.text).toContain('<code class="url">https:<wbr>/<wbr>/<wbr>page.example.com/<wbr>cb</code>');
    expect(again.text).not.toContain(secret);
    expect(again.text).not.toContain('new-client-secret');
    // The secret never travels in a URL, and the page the redirect leads to is the only one that shows it.
    expect(page).toContain(secret);
    expect((await exchange(clientId, secret)).status).toBe(200);
    // Bob does not see Alice's applications.
    const bobWeb = await loggedIn(d, bob);
    expect((await bobWeb.get('/settings/applications')).text).not.toContain(clientId);
  });

  it('refuses unsafe redirect URIs and forms without the CSRF token', async () => {
    await web.get('/settings/applications');
    const http = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Bad', redirect_uris: 'http://app.example.com/cb' });
    // Refused after a 303 to the page (Post/Redirect/Get), its status kept.
    expect(http.redirectedFrom).toMatchObject({ status: 303, location: '/settings/applications' });
    expect(http.status).toBe(400);
    expect(http.text).toContain('redirect URI &quot;http://app.example.com/cb&quot; must use https (http is allowed only for 127.0.0.1, [::1] and localhost)');
    const fragment = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Bad', redirect_uris: 'https://app.example.com/cb#x' });
    expect(fragment.text).toContain('must not contain a fragment (#)');
    // The value is quoted, so a sentence about it reads as one.
    const words = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Bad', redirect_uris: 'not a url' });
    expect(words.status).toBe(400);
    expect(words.text).toContain('redirect URI &quot;not a url&quot; is not an absolute URL');
    const noCsrf = await web.post('/settings/applications', { name: 'Bad', redirect_uris: REDIRECT });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.text).toContain('the form expired or did not come from this site');
  });

  it('rotates the secret: the old one stops working at once', async () => {
    const { clientId, secret } = await register('Rotating App');
    const rotated = await web.submit(`/settings/applications/${clientId}/rotate`, { _csrf: web.csrf });
    expect(rotated.redirectedFrom).toMatchObject({ status: 303, location: '/settings/applications' });
    const fresh = issued(rotated.text).secret!;
    expect(fresh).toMatch(/^dscs_/);
    expect(fresh).not.toBe(secret);
    const old = await exchange(clientId, secret);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    expect((await exchange(clientId, fresh)).status).toBe(200);
  });

  it('lists connected apps with their scopes, and revoking ends their tokens', async () => {
    const { clientId, secret } = await register('Connected App');
    const tokens = await exchange(clientId, secret);
    const page = await web.get('/settings/connected');
    expect(page.text).toContain(`data-client-id="${clientId}"`);
    expect(page.text).toContain('Connected App');
    expect(page.text).toContain('Upload, change and delete your documents and projects');
    const res = await web.post(`/settings/connected/${clientId}/revoke`, { _csrf: web.csrf });
    expect(res.status).toBe(302);
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(401);
    const refresh = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId, client_secret: secret });
    expect(refresh.body).toEqual({ error: 'invalid_grant', error_description: 'refresh token has been revoked' });
    expect((await web.get('/settings/connected')).text).not.toContain(`data-client-id="${clientId}"`);
  });

  it('deleting an application revokes all its tokens', async () => {
    const { clientId, secret } = await register('Doomed App');
    const tokens = await exchange(clientId, secret);
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(200);
    await web.get('/settings/applications');
    const res = await web.post(`/settings/applications/${clientId}/delete`, { _csrf: web.csrf });
    expect(res.status).toBe(302);
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(401);
    const token = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId, client_secret: secret });
    expect(token.status).toBe(401);
    expect(token.body).toEqual({ error: 'invalid_client', error_description: 'client authentication failed: unknown client_id' });
    // Another user cannot delete or rotate someone else's application.
    const { clientId: kept } = await register('Kept App');
    const bobWeb = await loggedIn(d, bob);
    await bobWeb.get('/settings/applications');
    expect((await bobWeb.post(`/settings/applications/${kept}/delete`, { _csrf: bobWeb.csrf })).status).toBe(404);
    await bobWeb.get('/settings/applications');
    expect((await bobWeb.post(`/settings/applications/${kept}/rotate`, { _csrf: bobWeb.csrf })).status).toBe(404);
    expect((await web.get('/settings/applications')).text).toContain(kept);
  });

  it('the theme: Settings → Account → Appearance draws every page of this browser light or dark, or as the system says', async () => {
    const opening = (text: string) => /^<!doctype html>\n<html lang="en"(?: data-theme="(\w+)")?>/.exec(text)?.[1] ?? 'system';
    const theme = async () => opening((await web.get('/settings/account')).text);
    expect(await theme()).toBe('system');
    expect((await web.get('/settings/account')).text).toMatch(/<input type="radio" name="theme" value="system" checked>/);
    const dark = await web.post('/settings/appearance', { _csrf: web.csrf, theme: 'dark' });
    expect(dark.status).toBe(303);
    expect(dark.location).toBe('/settings/account#appearance-heading');
    const page = (await web.get('/settings/account')).text;
    expect(opening(page)).toBe('dark');
    expect(page).toContain('The pages are now dark.');
    expect(page).toMatch(/<input type="radio" name="theme" value="dark" checked>/);
    // Every page of this browser, not only the settings: the search page, and a page of an error too.
    expect(opening((await web.get('/')).text)).toBe('dark');
    const missing = await web.get('/documents/doc_none');
    expect(missing.status).toBe(404);
    expect(opening(missing.text)).toBe('dark');
    const refused = await web.post('/settings/appearance', { theme: 'light' });
    expect(refused.status).toBe(403);
    expect(opening(refused.text)).toBe('dark');
    // Another browser of the same account keeps its own.
    expect(opening((await (await loggedIn(d, alice)).get('/')).text)).toBe('system');
    // Refused (above: a form without the CSRF token, answered in the theme too): a theme that is not one.
    expect(await theme()).toBe('dark');
    const bad = await web.submit('/settings/appearance', { _csrf: web.csrf, theme: 'x" onload="alert(1)' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Choose System, Light or Dark.');
    expect(await theme()).toBe('dark');
    await web.post('/settings/appearance', { _csrf: web.csrf, theme: 'light' });
    expect(await theme()).toBe('light');
    await web.post('/settings/appearance', { _csrf: web.csrf, theme: 'system' });
    expect(await theme()).toBe('system');
  });

  it('shows the Applications and Connected apps links in the navigation', async () => {
    const page = await web.get('/settings/keys');
    expect(page.text).toContain('href="/settings/applications"');
    expect(page.text).toContain('href="/settings/connected"');
    const anon = new WebClient(d);
    expect((await anon.get('/settings/applications')).location).toBe('/login?return_to=%2Fsettings%2Fapplications');
  });
});
