import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

/**
 * A refused Admin form, in Chromium: the page says why with what was typed, at the form's own address; reloading it
 * sends no POST (the browser asked to send the form again, and sent it), and shows the page afresh.
 */
describe.skipIf(!HAVE_CHROMIUM)(browserTitle('reloading after a refused Admin form posts nothing'), () => {
  const suite = browserSuite();
  let admin: TestUser;

  beforeAll(async () => {
    admin = await addUser(suite.d); // the first account: the admin
    await api(suite.d, '/api/v1/admin/groups', { token: admin.apiKey, body: { name: 'crew' } });
  });

  /** Fills and sends a form from `path`, then reloads: the POSTs the browser sent, and the page before and after. */
  async function refuseThenReload(page: Page, path: string, fill: (page: Page) => Promise<void>) {
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(new URL(r.url()).pathname);
    });
    await page.goto(suite.d.url + path);
    await fill(page);
    await page.waitForSelector('p.error[role=alert]');
    const refused = { url: page.url(), error: await page.locator('p.error[role=alert]').first().textContent() };
    const sent = [...posts];
    await page.reload();
    return { refused, sent, afterReload: posts.slice(sent.length), errorsAfter: await page.locator('p.error[role=alert]').count() };
  }

  it('Groups → New group, a name taken: said at /admin/groups; the reload posts nothing and the page is afresh', { timeout: 60_000 }, async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, admin);
      const seen = await refuseThenReload(page, '/admin/groups', async (p) => {
        await p.fill('input[name=name]', 'Crew');
        await p.click('button:has-text("Create group")');
      });
      expect(seen.sent).toEqual(['/admin/groups']);
      expect(seen.refused).toEqual({ url: `${suite.d.url}/admin/groups`, error: 'A group named "Crew" exists already.' });
      expect(seen.afterReload).toEqual([]);
      expect(seen.errorsAfter).toBe(0);
      expect(await page.inputValue('input[name=name]')).toBe('');
    } finally {
      await context.close();
    }
  });

  it('Users → Invite, an address without a dot in its domain: said at /admin/users#invite; the reload posts nothing', { timeout: 60_000 }, async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, admin);
      const seen = await refuseThenReload(page, '/admin/users', async (p) => {
        await p.fill('form[action="/admin/users/invite"] [name=email]', 'carol@example');
        await p.click('form[action="/admin/users/invite"] button[type=submit]');
      });
      expect(seen.sent).toEqual(['/admin/users/invite']);
      expect(seen.refused.url).toBe(`${suite.d.url}/admin/users#invite`);
      expect(seen.refused.error).toBe('"carol@example" is not an e-mail address: the domain after the @, "example", has no dot (as in example.com).');
      expect(seen.afterReload).toEqual([]);
      expect(seen.errorsAfter).toBe(0);
      expect((await api(suite.d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
