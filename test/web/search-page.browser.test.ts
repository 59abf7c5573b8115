/**
 * The search page in Chromium, as a person uses it: search, the documents found with their best passages, Next
 * and Previous, the passages view, a nonsense query answered in words, documents still being indexed; at desktop
 * and phone width, light and dark. axe-core finds no serious or critical issue on any of these states.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, CHROMIUM, CHROMIUM_ARGS, type Daemon, REPO, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { HAVE_CHROMIUM } from './browser.js';

const TITLE = HAVE_CHROMIUM ? 'browser: the search page' : `browser: the search page (skipped: ${CHROMIUM} is missing — install it with \`apt-get install -y chromium\`)`;
const ARTIFACTS = join(REPO, 'test-artifacts/web');
const AXE = readFileSync(join(REPO, 'node_modules/axe-core/axe.min.js'), 'utf8');
const WORD = 'zorblax';
const NOTES = 45;
const txt = (s: string) => Buffer.from(s, 'utf8');

/** Serious and critical axe findings on the page, or only within the `within` selectors. */
async function axeViolations(page: Page, within?: string[]): Promise<string[]> {
  await page.evaluate(AXE);
  const context = within ? JSON.stringify({ include: within.map((s) => [s]) }) : 'document';
  const found = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(
    `axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))`,
  );
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}

describe.skipIf(!HAVE_CHROMIUM)(TITLE, () => {
  let d: Daemon;
  let user: TestUser;
  let browser: Browser;
  const audited: Record<string, string[]> = {};

  beforeAll(async () => {
    d = await startDaemon({ timeoutMs: 60_000 });
    user = await addUser(d);
    const files = Array.from({ length: NOTES }, (_, i) => ({
      name: `note-${i + 1}.txt`,
      bytes: txt(`Specimen note ${i + 1}. The ${WORD} sample ${i + 1} rests on shelf ${(i % 7) + 1} of the cold room, beside the mineral drawers and the long glass cabinet of the east wing.`),
      path: `cold room/a rather long folder name for the specimen notes of the east wing/note-${i + 1}.txt`,
    }));
    for (let i = 0; i < files.length; i += 20) {
      const batch = files.slice(i, i + 20);
      const res = await uploadFiles(d, user.apiKey, batch, { query: '?wait=true', fields: { paths: JSON.stringify(batch.map((f) => f.path)) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  async function login(page: Page): Promise<void> {
    await page.goto(`${d.url}/login`);
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await page.click('button[type=submit]');
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  }

  async function capture(page: Page, name: string, within?: string[]): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    audited[name] = await axeViolations(page, within);
  }

  const status = (page: Page) => page.locator('main [role=status]').last().textContent();

  it('search → documents with their passages → Next → Previous → passages → nonsense → still indexing', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    try {
      await login(page);
      await page.goto(`${d.url}/search`);
      await page.fill('input[name=q]', `${WORD} cabinet`);
      await page.selectOption('select[name=mode]', 'keyword');
      await page.click('form.search button[type=submit]');
      await page.waitForURL(/\/search\?q=/);
      expect(await status(page)).toBe(`1–20 of ${NOTES} documents for “${WORD} cabinet”`);
      expect(await page.locator('ol.results > li.result').count()).toBe(20);
      expect(await page.locator('ol.results > li.result').first().locator('ol.passages > li').count()).toBe(1);
      expect(await page.locator('ol.results > li.result .path').first().textContent()).toMatch(/^cold room\/.+\/note-\d+\.txt$/);
      expect(await page.locator('a[rel=prev]').count()).toBe(0);
      await capture(page, 'search-01-documents');

      await page.click('a[rel=next]');
      expect(await status(page)).toBe(`21–40 of ${NOTES} documents for “${WORD} cabinet”`);
      expect(await page.locator('ol.results').getAttribute('start')).toBe('21');
      await page.click('a[rel=next]');
      expect(await status(page)).toBe(`41–45 of ${NOTES} documents for “${WORD} cabinet”`);
      expect(await page.locator('a[rel=next]').count()).toBe(0);
      await capture(page, 'search-02-last-page');
      await page.click('a[rel=prev]');
      expect(await status(page)).toBe(`21–40 of ${NOTES} documents for “${WORD} cabinet”`);

      // Keyboard: the page links are reachable and named.
      await page.focus('a[rel=prev]');
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Next');

      await page.selectOption('select[name=view]', 'passages');
      await page.click('form.search button[type=submit]');
      expect(await status(page)).toBe(`1–20 of ${NOTES} passages for “${WORD} cabinet”`);
      await capture(page, 'search-03-passages');

      await page.fill('input[name=q]', 'xyzzyplugh frobnicate');
      await page.selectOption('select[name=mode]', 'hybrid');
      await page.click('form.search button[type=submit]');
      expect(await status(page)).toMatch(/^No close matches for “xyzzyplugh frobnicate”/);
      expect(await page.locator('a[rel=next]').count()).toBe(0);
      await capture(page, 'search-04-weak');

      const long = Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of the inventory lists one more jar of preserved samples.`).join('\n');
      expect((await uploadFiles(d, user.apiKey, [{ name: 'inventory.txt', bytes: txt(long) }])).status).toBe(202);
      await page.goto(`${d.url}/search?q=${WORD}`);
      expect(await page.locator('.notice.indexing').textContent()).toBe('Still indexing 1 document: results may be incomplete until it is ready.');
      await capture(page, 'search-05-indexing');

      // A phone: nothing wider than the screen, long paths included.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${d.url}/search?q=${WORD}&mode=keyword`);
      expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await capture(page, 'search-06-phone');
    } finally {
      await context.close();
    }
    // Dark mode: the results, their status lines and the page links (the primary buttons' dark colours are the
    // shared stylesheet's, issue #21 item 6).
    const results = ['main [role=status]', 'main ol.results', 'main nav.pager'];
    const dark = await browser.newContext({ viewport: { width: 1200, height: 900 }, colorScheme: 'dark' });
    const darkPage = await dark.newPage();
    try {
      await login(darkPage);
      await darkPage.goto(`${d.url}/search?q=${WORD}&mode=keyword`);
      await capture(darkPage, 'search-07-dark', results);
      await darkPage.goto(`${d.url}/search?q=xyzzyplugh+frobnicate`);
      await capture(darkPage, 'search-08-dark-weak', results.slice(0, 2));
    } finally {
      await dark.close();
    }
    expect(audited).toEqual(Object.fromEntries(Object.keys(audited).map((k) => [k, []])));
  }, 300_000);
});
