import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM } from './browser.js';

/**
 * Every form that creates something answers with a redirect (Post/Redirect/Get): reloading the page it leads to
 * creates nothing more, and a secret it issued is shown on that page once, then never again.
 */
describe.skipIf(!HAVE_CHROMIUM)(browserTitle('reloading after a create form creates nothing more'), () => {
  const suite = browserSuite();
  let user: TestUser;

  beforeAll(async () => {
    user = await addUser(suite.d);
  });

  async function logIn(page: Page): Promise<void> {
    await page.goto(suite.d.url + '/login');
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${suite.d.url}/`);
  }

  it('a new API key: one key after a reload, its secret shown once', async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await logIn(page);
      await page.goto(suite.d.url + '/settings/keys');
      await page.fill('input[name=name]', 'laptop CLI');
      await page.click('button:has-text("Generate new API key")');
      await page.waitForSelector('#new-key');
      const shown = await page.inputValue('#new-key');
      expect(shown).toMatch(/^dsk_/);
      expect(page.url()).toBe(`${suite.d.url}/settings/keys`);
      await page.reload();
      expect(await page.locator('#new-key').count()).toBe(0);
      expect(await page.content()).not.toContain(shown);
      expect(await page.locator('tr', { hasText: 'laptop CLI' }).count()).toBe(1);
      expect((await api(suite.d, '/api/v1/projects', { token: shown })).status).toBe(200);
    } finally {
      await context.close();
    }
  });

  it('a new application and a rotated secret: one application after a reload, each secret shown once', async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await logIn(page);
      await page.goto(suite.d.url + '/settings/applications');
      await page.fill('input[name=name]', 'Reload App');
      await page.fill('textarea[name=redirect_uris]', 'http://127.0.0.1:9/cb');
      await page.click('button:has-text("Register application")');
      await page.waitForSelector('#new-client-secret');
      const secret = await page.inputValue('#new-client-secret');
      const clientId = await page.inputValue('#new-client-id');
      await page.reload();
      expect(await page.locator('#new-client-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);
      expect(await page.locator('tr', { hasText: 'Reload App' }).count()).toBe(1);

      await page.locator(`tr[data-client-id="${clientId}"] a:has-text("Rotate secret")`).click();
      await page.click('#confirm');
      await page.waitForSelector('#new-client-secret');
      const rotated = await page.inputValue('#new-client-secret');
      expect(rotated).not.toBe(secret);
      expect(await page.locator('.notice').first().textContent()).toContain('New secret for Reload App');
      await page.reload();
      expect(await page.locator('#new-client-secret').count()).toBe(0);
      expect(await page.content()).not.toContain(rotated);
      // The reload did not rotate it again: the shown secret still authenticates the client (the made-up code
      // is refused after that, as invalid_grant).
      const token = await fetch(`${suite.d.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: 'http://127.0.0.1:9/cb', client_id: clientId, client_secret: rotated }),
      });
      expect(((await token.json()) as { error: string }).error).toBe('invalid_grant');
    } finally {
      await context.close();
    }
  });

  it('a new project and a no-script upload: one of each after a reload', async () => {
    const context = await suite.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await logIn(page);
      await page.goto(suite.d.url + '/projects');
      await page.fill('input[name=name]', 'Reloaded');
      await page.click('button:has-text("Create project")');
      await page.waitForURL(/\/projects\/[^/]+$/);
      await page.reload();
      const projects = await api(suite.d, '/api/v1/projects', { token: user.apiKey });
      expect(projects.body.projects.filter((p: { name: string }) => p.name === 'Reloaded')).toHaveLength(1);

      await page.setInputFiles('#pick-files', { name: 'once.txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded once, not twice\n') });
      await page.click('#upload button[type=submit]');
      await page.waitForSelector('.flash');
      expect(await page.locator('.flash').textContent()).toContain('Uploaded 1 file');
      await page.reload();
      expect(await page.locator('.flash').count()).toBe(0);
      const docs = await api(suite.d, '/api/v1/documents?limit=50', { token: user.apiKey });
      expect(docs.body.documents.filter((d: { filename: string }) => d.filename === 'once.txt')).toHaveLength(1);
      // Counts agree with their nouns, and the size is in the CLI's units ("1 chunk", "1.5 KiB").
      await expect
        .poll(async () => (await page.reload(), page.locator('#project-summary').textContent()), { timeout: 25_000 })
        .toBe('1 document · 1 chunk · 25 B');
      await page.setInputFiles('#pick-files', { name: 'sized.txt', mimeType: 'text/plain', buffer: Buffer.from('a few words that fill the file. '.repeat(48)) });
      await page.click('#upload button[type=submit]');
      await page.waitForSelector('.flash');
      await expect
        .poll(async () => (await page.reload(), page.locator('#project-summary').textContent()), { timeout: 25_000 })
        .toMatch(/^2 documents · \d+ chunks · 1\.5 KiB$/);
      const others = await api(suite.d, '/api/v1/projects', { token: user.apiKey });
      const reloaded = others.body.projects.find((p: { name: string }) => p.name === 'Reloaded');
      expect(reloaded).toMatchObject({ document_count: 2, size_bytes: 25 + 1536 });
    } finally {
      await context.close();
    }
  });
});
