import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { addUser, type TestUser } from '../helpers/daemon.js';
import { makeDocx, makePdf, para } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { ARTIFACTS, axeViolations, browserSuite, browserTitle, HAVE_CHROMIUM, watchCsp } from './browser.js';

const XSS = '<img src=x onerror=alert(1)>';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

const FILLER = Array.from({ length: 40 }, (_, i) => `Section ${i + 1} records rainfall, soil depth and the grasses sampled on transect ${i + 1}.`);
const FILES = {
  pdf: makePdf([
    [{ lines: ['Alpine meadow survey, summer field season.', ...FILLER] }],
    [{ lines: FILLER.map((l) => l.replace('Section', 'Appendix')) }],
    [{ lines: ['The marmot colonies hibernate under the scree slopes from October to April.', 'Marmots whistle a warning when golden eagles circle overhead.'] }],
  ]),
  txt: Buffer.from('Glacier notes. The ice tongue retreated forty metres since the last survey; crevasses opened along the eastern margin.\n'),
  docx: makeDocx(para('Botany log', { style: 'Heading1' }) + para('Edelweiss grows on limestone ledges above two thousand metres, sheltered from grazing ibex.')),
};

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('the library as a person uses it'), () => {
  const suite = browserSuite();
  let bob: TestUser;
  const audited: Record<string, string[]> = {};
  const cspErrors: string[] = [];
  const dialogs: string[] = [];

  async function open(context: BrowserContext): Promise<Page> {
    const page = watchCsp(await context.newPage(), cspErrors);
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    return page;
  }

  /** Screenshot (a test artifact) and accessibility audit of the page as it is now. */
  async function capture(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    audited[name] = await axeViolations(page);
  }

  it('set up an account → project → upload (picker ×2, drag-and-drop ×1) → ready → search → open at the page → delete → gone', async () => {
    const { d, browser } = suite;
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await open(context);
    try {
      // Set up the first account through the one-time link the daemon printed.
      await page.goto(d.setupUrl!);
      await capture(page, '01-setup');
      await page.fill('input[name=email]', EMAIL);
      await page.fill('input[name=password]', PASSWORD);
      await page.fill('input[name=password2]', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForURL(/\/documents$/); // the library, empty for now

      // Projects, through the navigation; create one.
      await page.click('nav.top >> text=Projects');
      await page.waitForURL(/\/projects$/);
      await page.fill('input[name=name]', 'Field notes');
      await page.fill('textarea[name=description]', 'Alpine survey 2026');
      await page.click('button:has-text("Create project")');
      await page.waitForURL(/\/projects\/prj_[^/]+$/);
      const projectUrl = page.url();
      expect(await page.locator('h1').textContent()).toBe('Field notes');

      // The project's Sources tab: a source added through its form is listed with its state.
      await page.click('nav.tabs >> text=Sources');
      await page.waitForURL(/\/sources$/);
      // The kind first: only its fields, and the schedule picker (another interval typed when chosen).
      await page.click('.kind-choices >> text=S3 bucket');
      await page.waitForURL(/\?kind=s3/);
      expect(await page.locator('#add-form input[name=secret_password]').count()).toBe(0);
      expect(await page.locator('[data-schedule-other]').isHidden()).toBe(true);
      await page.selectOption('select[name=every]', 'other');
      expect(await page.locator('[data-schedule-other]').isVisible()).toBe(true);
      await page.fill('input[name=every_other]', '2h');
      await page.fill('input[name=url]', 's3://field-notes-bucket/survey/');
      await page.click('button:has-text("Add source")');
      await page.waitForURL(/\/sources$/);
      await expect.poll(() => page.locator('.sources .source').count()).toBe(1);
      expect(await page.locator('.sources .source').textContent()).toContain('s3://field-notes-bucket/survey/');
      expect(await page.locator('.sources .source').textContent()).toContain('every 2h');
      await capture(page, '03-sources');
      await page.goto(projectUrl);

      // Two files through the picker (the page's script uploads on change, one request per file).
      await page.setInputFiles('input[type=file]', [
        { name: 'meadow-survey.pdf', mimeType: 'application/pdf', buffer: FILES.pdf },
        { name: 'glacier-notes.txt', mimeType: 'text/plain', buffer: FILES.txt },
      ]);
      // One dropped on the drop zone.
      const dropped = await page.evaluateHandle(
        `(() => { const dt = new DataTransfer(); dt.items.add(new File([new Uint8Array(${JSON.stringify([...FILES.docx])})], 'botany-log.docx', ` +
          `{ type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' })); return dt; })()`,
      );
      await page.dispatchEvent('#dropzone', 'drop', { dataTransfer: dropped });
      // An unsupported file gets the API's error in words, next to its name.
      await page.setInputFiles('input[type=file]', [{ name: 'program.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0]) }]);
      await expect.poll(() => page.locator('#upload-list li.error').textContent(), { timeout: 30_000 }).toContain('"program.bin" is not a type docsearch reads');
      // The uploads run side by side: the small refused one may answer before a larger one has finished.
      await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 30_000 }).toBe(3);
      expect(await page.locator('#upload-list li.ok progress').evaluateAll((bars) => bars.map((b) => (b as unknown as { value: number }).value))).toEqual([100, 100, 100]);

      // Watch them become ready without reloading: the rows appear and their status changes live.
      await expect.poll(() => page.locator('#documents tbody tr').count(), { timeout: 30_000 }).toBe(3);
      await expect.poll(() => page.locator('#documents tbody tr[data-status=ready]').count(), { timeout: 150_000, interval: 500 }).toBe(3);
      expect(await page.locator('#documents .status-ready').allTextContents()).toEqual(['ready', 'ready', 'ready']);
      await expect.poll(() => page.locator('#project-summary').textContent()).toMatch(/^3 documents · \d+ chunks · /);
      await capture(page, '03-project');
      await page.click('nav.top >> text=Projects');
      await expect.poll(() => page.locator('tr', { hasText: 'Field notes' }).locator('td.num').first().textContent()).toBe('3');
      await capture(page, '02-projects');

      // Search from the home page.
      await page.click('nav.top >> text=Search');
      await page.waitForURL(`${d.url}/`);
      await page.fill('input[name=q]', 'where do marmots hibernate');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/search\?q=/);
      const first = page.locator('li.result').first();
      expect(await first.locator('a.filename').textContent()).toBe('meadow-survey.pdf');
      expect(await first.locator('.project').textContent()).toBe('Field notes');
      expect(await first.locator('mark').allTextContents()).toEqual(expect.arrayContaining(['marmot', 'hibernate']));
      await capture(page, '04-search');

      // A PDF's passage opens on the document page at its page (?page=N); the browser (with its session) gets the PDF.
      const href = (await first.locator('a.at-match').first().getAttribute('href'))!;
      const page0 = /[?&]page=(\d+)/.exec(href)?.[1];
      expect(page0).toBeDefined();
      expect(await first.locator('.page').first().textContent()).toMatch(new RegExp(`^pp?\\. ${page0}`));
      const original = await page.request.get(`${d.url}${href.replace(/\?.*$/, '')}/file`);
      expect(original.status()).toBe(200);
      expect(original.headers()['content-type']).toBe('application/pdf');
      expect(original.headers()['content-disposition']).toContain(`filename*=UTF-8''meadow-survey.pdf`);
      expect((await original.body()).equals(FILES.pdf)).toBe(true);

      // The document page, then delete the document from it.
      await first.locator('a.filename').click();
      await page.waitForURL(/\/documents\/doc_/);
      expect(await page.locator('h1').textContent()).toBe('meadow-survey.pdf');
      expect(await page.locator('dl.facts').textContent()).toContain('Pages3');
      const docUrl = page.url().replace(/[?#].*$/, ''); // the result opened it at its passage (?page=N#chunk-K)
      await capture(page, '05-document');
      await page.click('a:has-text("Delete this document")');
      await page.waitForURL(`${docUrl}/delete`);
      await page.click('#confirm');
      await page.waitForURL(projectUrl);
      expect(await page.locator('.flash').textContent()).toBe('Deleted “meadow-survey.pdf”: the Trash keeps it for 30 days. Undo');
      expect(await page.locator('#documents tbody tr').count()).toBe(2);

      // It leaves the results.
      await page.goto(`${d.url}/search?q=${encodeURIComponent('where do marmots hibernate')}`);
      expect(await page.locator('a.filename', { hasText: 'meadow-survey.pdf' }).count()).toBe(0);
      expect((await page.goto(docUrl))!.status()).toBe(404);

      // Readable on a phone: nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${d.url}/search?q=${encodeURIComponent('glacier crevasses')}`);
      expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await capture(page, '06-search-phone');
      await page.goto(projectUrl);
      expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);

      // Keyboard: the skip link comes first and focus is visible (the search page focuses its box instead).
      await page.setViewportSize({ width: 1200, height: 900 });
      await page.goto(d.url + '/projects');
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to content');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      expect(outline).toBe('solid');
      await page.goto(`${projectUrl}/delete`);
      await capture(page, '07-project-delete');
      await page.goto(d.url + '/settings/keys');
      await capture(page, '08-settings-keys');
    } finally {
      await context.close();
    }
  }, 300_000);

  it('a second user sees none of it, and markup in names and text renders as text', async () => {
    const { d, browser } = suite;
    bob = await addUser(d, { email: 'bob@example.com' });
    const context = await browser.newContext();
    const page = await open(context);
    try {
      await page.goto(d.url + '/projects');
      await page.waitForURL(/\/login\?return_to=%2Fprojects$/);
      await capture(page, '09-login');
      await page.fill('input[name=email]', bob.email);
      await page.fill('input[name=password]', bob.password);
      await page.click('button[type=submit]');
      await page.waitForURL(/\/projects$/);
      expect(await page.locator('a.project-name').allTextContents()).toEqual(['default']);
      // A note of his own, so the search runs (an empty library shows no search at all) and finds his, not Ada's.
      const own = await uploadFiles(d, bob.apiKey, [{ name: 'bob-glacier.txt', bytes: Buffer.from('Bob walked along the glacier and counted the crevasses on the ice.\n') }], { query: '?wait=true' });
      expect(own.body.documents[0].status).toBe('ready');
      await page.goto(`${d.url}/search?q=${encodeURIComponent('glacier crevasses')}`);
      expect(await page.locator('#empty-library').count()).toBe(0);
      expect(await page.locator('li.result a.filename').allTextContents()).toEqual(['bob-glacier.txt']);

      // Ada's project and a document of hers: 404 pages for Bob.
      const ada = await browser.newContext();
      const adaPage = await ada.newPage();
      await adaPage.goto(d.url + '/login');
      await adaPage.fill('input[name=email]', EMAIL);
      await adaPage.fill('input[name=password]', PASSWORD);
      await adaPage.click('button[type=submit]');
      await adaPage.goto(d.url + '/projects');
      const projectHref = (await adaPage.locator('a.project-name', { hasText: 'Field notes' }).getAttribute('href'))!;
      await adaPage.goto(d.url + projectHref);
      const docHref = (await adaPage.locator('#documents a.filename').first().getAttribute('href'))!;
      await ada.close();
      for (const path of [projectHref, docHref, `${docHref}/file`]) {
        const res = await page.goto(d.url + path);
        expect(res!.status(), path).toBe(404);
        expect(await page.locator('h1').textContent()).toBe('Not found');
      }
      await capture(page, '10-not-found');

      // Markup in a project name, a filename and the text.
      await page.goto(d.url + '/projects');
      await page.fill('input[name=name]', `Notes ${XSS}`);
      await page.click('button:has-text("Create project")');
      await page.waitForURL(/\/projects\/prj_/);
      await page.setInputFiles('input[type=file]', [{ name: `${XSS}.txt`, mimeType: 'text/plain', buffer: Buffer.from(`Moraine ridges hold ${XSS} boulders.\n`) }]);
      await expect.poll(() => page.locator('#documents tbody tr[data-status=ready]').count(), { timeout: 120_000, interval: 500 }).toBe(1);
      await page.goto(`${d.url}/search?q=moraine+boulders`);
      expect(await page.locator('a.filename').first().textContent()).toBe(`${XSS}.txt`);
      expect(await page.locator('.snippet').first().textContent()).toContain(XSS);
      expect(await page.locator('.project').first().textContent()).toBe(`Notes ${XSS}`);
      await page.click('a.filename');
      await page.waitForURL(/\/documents\//);
      expect(await page.locator('main img').count()).toBe(0);
      await page.goto(d.url + '/projects');
      expect(await page.locator('main img').count()).toBe(0);
      expect(dialogs).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('no serious or critical accessibility violation on any page, and no CSP violation', () => {
    expect(Object.keys(audited).length).toBeGreaterThanOrEqual(10);
    expect(Object.entries(audited).filter(([, v]) => v.length > 0)).toEqual([]);
    expect(cspErrors).toEqual([]);
  });
});
