import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('Settings → API Keys, generate, copy, use'), () => {
  const suite = browserSuite();
  let user: TestUser;

  beforeAll(async () => {
    user = await addUser(suite.d);
  });

  it('logs in, generates a key, copies it with the Copy button, and the key works against /api/v1/projects', async () => {
    const { d, browser } = suite;
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
    const page = await context.newPage();
    try {
      // Sign in.
      await page.goto(d.url + '/');
      await page.waitForURL(/\/login/);
      await page.fill('input[name=email]', user.email);
      await page.fill('input[name=password]', user.password);
      await page.click('button[type=submit]');
      await page.waitForURL(`${d.url}/`);

      // Settings → API Keys through the navigation.
      await page.click('nav.top >> text=Settings');
      await page.waitForURL(/\/settings\/keys$/);
      await page.click('nav.sub >> text=API Keys');
      await expect.poll(() => page.locator('h1').textContent()).toBe('API Keys');
      expect(await page.locator('#new-key').count()).toBe(0);

      // Generate.
      await page.fill('input[name=name]', 'browser key');
      // 30 days unless changed; the control is found by its label.
      expect(await page.getByLabel('Expiration').inputValue()).toBe('30');
      await page.getByLabel('Expiration').selectOption({ label: '90 days' });
      await page.click('button:has-text("Generate new API key")');
      await page.waitForSelector('#new-key');
      expect(await page.locator('.notice').textContent()).toContain('It will not be shown again.');
      const shown = await page.inputValue('#new-key');
      expect(shown).toMatch(/^dsk_[0-9A-Za-z]{43}$/);

      // Copy: the button writes the key to the clipboard and says so.
      await page.evaluate("navigator.clipboard.writeText('clipboard before copy')");
      const button = page.locator('button.copy[data-copy-target="new-key"]');
      await button.click();
      await expect.poll(() => button.textContent()).toBe('Copied');
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      expect(copied).toBe(shown);
      // The input is selected too, so Ctrl+C works where the clipboard API is unavailable.
      const selected = await page.evaluate<string>("(() => { const el = document.getElementById('new-key'); return el.value.slice(el.selectionStart, el.selectionEnd); })()");
      expect(selected).toBe(shown);

      // The copied key works against the API.
      const res = await api(d, '/api/v1/projects', { token: copied });
      expect(res.status).toBe(200);
      expect(res.body.projects.map((p: { name: string }) => p.name)).toEqual(['default']);

      // Shown once: after a reload only prefix…last4 remains, and the row shows its use.
      await page.goto(d.url + '/settings/keys');
      expect(await page.locator('#new-key').count()).toBe(0);
      const html = await page.content();
      expect(html).not.toContain(shown);
      const row = page.locator('tr', { hasText: 'browser key' });
      expect(await row.locator('code').textContent()).toBe(`${shown.slice(0, 8)}…${shown.slice(-4)}`);
      expect(await row.textContent()).not.toContain('never');
      expect(await row.locator('td[data-label=Expires]').textContent()).toMatch(/^in 90 days \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)$/);

      // Revoke from the page, after saying yes on the confirmation: the key stops working at once.
      await row.locator('a:has-text("Revoke")').click();
      await page.waitForURL(/\/settings\/keys\/[^/]+\/revoke$/);
      expect(await page.locator('h1').textContent()).toBe('Revoke the key “browser key”?');
      expect((await api(d, '/api/v1/projects', { token: copied })).status).toBe(200);
      await page.click('#confirm');
      await page.waitForURL(/\/settings\/keys$/);
      expect(await page.locator('.flash').textContent()).toBe('Revoked the key “browser key”.');
      expect(await page.locator('tr', { hasText: 'browser key' }).count()).toBe(0);
      expect((await api(d, '/api/v1/projects', { token: copied })).status).toBe(401);
    } finally {
      await context.close();
    }
  });
});
