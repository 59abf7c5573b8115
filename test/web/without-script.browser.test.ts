/**
 * Controls that only script makes work (Copy, Print, a sheet's sort buttons) are not offered without it, and work
 * with it; "Select all on this page" is offered only when the page has something to select.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { totpCode } from '../auth/two-factor/totp.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

const CSV = `vessel,berth\n${Array.from({ length: 5 }, (_, i) => `Vessel ${5 - i},${i + 1}`).join('\n')}\n`;

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('controls that need script'), () => {
  const suite = browserSuite();
  let owner: TestUser;
  let viewer: TestUser;
  let editor: TestUser;
  let sheet: string;

  async function generateKey(page: Page): Promise<void> {
    await page.goto(`${suite.d.url}/settings/keys`);
    await page.fill('input[name=name]', 'nightly');
    await page.click('button:has-text("Generate new API key")');
    await page.waitForSelector('#new-key');
  }

  /** Turns on an authenticator app, which shows the recovery codes. */
  async function recoveryCodes(page: Page): Promise<void> {
    await page.goto(`${suite.d.url}/settings/security`);
    await page.click('button:has-text("Set up an authenticator app")');
    const secret = (await page.locator('#totp-secret').textContent())!;
    await page.fill('input[name=code]', totpCode(secret));
    await page.click('button:has-text("Turn on")');
    await page.waitForSelector('#recovery-codes');
  }

  it('without script: no Copy or Print button, the sort buttons disabled (their column names shown)', async () => {
    const { d, browser } = suite;
    owner = await addUser(d);
    viewer = await addUser(d);
    editor = await addUser(d);
    const project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'Harbour' } })).body.id as string;
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { email: viewer.email, role: 'viewer' } })).status).toBe(201);
    expect((await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { email: editor.email, role: 'editor' } })).status).toBe(201);
    const up = await uploadFiles(d, owner.apiKey, [{ name: 'berths.csv', bytes: Buffer.from(CSV) }], { projectId: project, query: '?wait=true' });
    sheet = up.body.documents[0].id as string;

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await signIn(page, d.url, owner);
      await generateKey(page);
      expect(await page.locator('#new-key').isVisible()).toBe(true);
      expect(await page.locator('button.copy').count()).toBe(1);
      expect(await page.locator('button.copy').isVisible()).toBe(false);
      await page.goto(`${d.url}/documents/${sheet}/view`);
      expect(await page.locator('table.sheet-table thead th').allTextContents()).toEqual(['Row', 'vessel', 'berth']);
      expect(await page.locator('button.sort').count()).toBe(2);
      expect(await page.locator('button.sort:disabled').count()).toBe(2);
      await recoveryCodes(page);
      expect(await page.locator('button[data-print]').count()).toBe(1);
      expect(await page.locator('button[data-print]').isVisible()).toBe(false);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('with script: Copy, Print and sort work; Select all only for someone who may select', async () => {
    const { d, browser } = suite;
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      // The owner has an authenticator app now: the editor uses the page.
      await signIn(page, d.url, editor);
      await generateKey(page);
      expect(await page.locator('button.copy').isVisible()).toBe(true);
      await page.click('button.copy');
      await expect.poll(() => page.locator('button.copy').textContent()).toBe('Copied');
      await page.goto(`${d.url}/documents/${sheet}/view`);
      await page.click('button.sort[data-column="1"]');
      expect(await page.locator('table.sheet-table tbody tr td').first().textContent()).toBe('Vessel 1');
      await page.goto(`${d.url}/documents`);
      expect(await page.locator('label:has(#select-all)').isVisible()).toBe(true);
    } finally {
      await context.close();
    }
    const viewing = await browser.newContext();
    const viewerPage = await viewing.newPage();
    try {
      await signIn(viewerPage, d.url, viewer);
      await recoveryCodes(viewerPage);
      expect(await viewerPage.locator('button[data-print]').isVisible()).toBe(true);
      await viewerPage.goto(`${d.url}/documents`);
      expect(await viewerPage.locator('table.documents tbody tr').count()).toBe(1);
      // Nothing on the page is theirs to change: neither Select all nor the actions on a selection are there.
      expect(await viewerPage.locator('#select-all').count()).toBe(0);
      expect(await viewerPage.locator('.bulk-actions').count()).toBe(0);
    } finally {
      await viewing.close();
    }
  }, 120_000);
});
