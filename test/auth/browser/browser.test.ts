import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, CHROMIUM, CHROMIUM_ARGS, type Daemon, removeDir, startDaemon, type TestUser } from '../../helpers/daemon.js';
import { addClient, type RegisteredClient } from '../oauth-flow.js';
import { HAVE_CHROMIUM } from '../../web/browser.js';

/**
 * A real browser from a third-party page to the client's callback: a tiny "client app" on
 * 127.0.0.1 links to the authorize URL; chromium logs in, approves, and lands on the app's
 * redirect URI with the code and the same state.
 */
const STATE = 'st@te with spaces & symbols/?=+';

describe.skipIf(!HAVE_CHROMIUM)('browser: login and consent from a third-party redirect', () => {
  let d: Daemon;
  let alice: TestUser;
  let clientApp: Server;
  let appUrl: string;
  let app: RegisteredClient;
  let browser: Browser;

  beforeAll(async () => {
    // The client app: a start page linking to the authorize URL, and a callback page.
    clientApp = createServer((req, res) => {
      const url = new URL(req.url!, appUrl);
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (url.pathname === '/callback') {
        res.end(`<!doctype html><title>callback</title><h1 id="done">Signed in</h1>`);
        return;
      }
      const authorize = new URL('/api/oauth/authorize', d.url);
      authorize.search = new URLSearchParams({ client_id: app.clientId, redirect_uri: `${appUrl}/callback`, response_type: 'code', scope: 'read:documents', state: STATE }).toString();
      res.end(`<!doctype html><title>Client app</title><a id="signin" href="${authorize.href.replace(/&/g, '&amp;')}">Sign in with docsearch</a>`);
    });
    clientApp.listen(0, '127.0.0.1');
    await new Promise((r) => clientApp.once('listening', r));
    appUrl = `http://127.0.0.1:${(clientApp.address() as AddressInfo).port}`;

    d = await startDaemon();
    alice = await addUser(d);
    app = await addClient(d, { name: 'Browser Client App', redirectUris: [`${appUrl}/callback`] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    clientApp?.close();
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  it('clicks through login and consent and ends at the redirect URI with code and state', async () => {
    const page = await browser.newPage();
    await page.goto(appUrl);
    await page.click('#signin');
    await page.waitForURL(/\/login\?return_to=/);
    await page.fill('input[name=email]', alice.email);
    await page.fill('input[name=password]', alice.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/api\/oauth\/authorize\?/);
    expect(await page.textContent('h1')).toContain('Browser Client App');
    expect(await page.textContent('ul.scopes')).toContain('Search and read your documents and projects');
    await page.click('#approve');
    await page.waitForURL(`${appUrl}/callback?**`);
    const landed = new URL(page.url());
    expect(landed.origin + landed.pathname).toBe(`${appUrl}/callback`);
    expect(landed.searchParams.get('code')).toMatch(/^[0-9A-Za-z]{64}$/);
    expect(landed.searchParams.get('state')).toBe(STATE);
    expect(await page.textContent('#done')).toBe('Signed in');

    // Deny from the same session: no login again, back with access_denied and the state.
    await page.goto(appUrl);
    await page.click('#signin');
    await page.click('#deny');
    await page.waitForURL(`${appUrl}/callback?**`);
    const denied = new URL(page.url());
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe(STATE);
    expect(denied.searchParams.has('code')).toBe(false);
    await page.close();
  });
});
