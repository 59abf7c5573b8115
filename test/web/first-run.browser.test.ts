import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { makeDocx, makePdf, para } from '../ingest/build-fixtures.js';
import { ARTIFACTS, browserSuite, browserTitle, HAVE_CHROMIUM } from './browser.js';

/**
 * Issue #44, the web library's part: the first run leads to an upload, names do not break mid-word, the document
 * page has its actions at the top and a page-by-page preview, uploads say what happened (with and without script),
 * and the pages' sentences and counts read right.
 */

const DESK = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const FILLER = Array.from({ length: 40 }, (_, i) => `Clause ${i + 1} sets out how the survey team records rainfall, soil depth and grasses on transect ${i + 1}.`);

async function login(context: BrowserContext, user: TestUser, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${url}/login`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  return page;
}

async function upload(url: string, user: TestUser, files: { name: string; body: Buffer | string }[], wait = true): Promise<{ id: string; filename: string; status: string }[]> {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([f.body]), f.name);
  const res = await fetch(`${url}/api/v1/upload${wait ? '?wait=true' : ''}`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  expect(res.status).toBeLessThan(300);
  return ((await res.json()) as { documents: { id: string; filename: string; status: string }[] }).documents;
}

/** Line breaks inside a run of letters and digits ("handbook.epu|b") in the element's text, as rendered. */
function midWordBreaks(page: Page, selector: string): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const out = [];
    for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
      const node = el.firstChild;
      if (!node || node.nodeType !== 3) continue;
      const text = node.textContent || '';
      const range = document.createRange();
      let lastTop = null;
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        if (lastTop !== null && rect.top > lastTop + 2 && /[\\p{L}\\p{N}]/u.test(text[i - 1]) && /[\\p{L}\\p{N}]/u.test(text[i])) out.push(text.slice(0, i) + '|' + text.slice(i));
        lastTop = rect.top;
      }
    }
    return out;
  })()`);
}

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('issue #44: the first run, uploads, names, the document page and the wording'), () => {
  const suite = browserSuite();

  it('first run: setup link → account → the first page has the upload area: one click to a chosen folder, then search finds it', async () => {
    const { d, browser } = suite;
    const context = await browser.newContext({ viewport: DESK });
    const page = await context.newPage();
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-first-run-'));
    try {
      mkdirSync(join(dir, 'notes'));
      writeFileSync(join(dir, 'notes/lighthouse.txt'), 'The lighthouse keeper trimmed the wick at dusk and logged the passing schooners.\n');
      writeFileSync(join(dir, 'notes/harbour.txt'), 'Fishing boats tie up along the harbour wall at low tide.\n');
      await page.goto(d.setupUrl!);
      await page.fill('input[name=email]', 'first@example.com');
      await page.fill('input[name=password]', 'correct horse battery staple');
      await page.fill('input[name=password2]', 'correct horse battery staple');
      await page.click('button[type=submit]');
      await page.waitForURL((u) => !u.pathname.startsWith('/setup'));
      const firstPage = page.url();

      // The search page, with the library still empty, says so and leads to the upload.
      await page.goto(`${d.url}/search?q=lighthouse`);
      expect(await page.locator('#empty-library').textContent()).toContain('Your library is empty');
      expect(await page.locator('#empty-library a[href="/documents#upload"]').count()).toBe(1);
      await page.goto(`${d.url}/`);
      expect(await page.locator('#empty-library').count()).toBe(1);

      // The walk: from the first page, the clicks a person makes on it to a chosen folder, each one made and counted.
      // The folder input itself is visually hidden (1 px, clipped) inside its label, which is the control a person
      // sees and clicks; a click aimed at the input never lands (Playwright finds the label "intercepts pointer events"
      // and retries until its timeout, so no chooser opens). The chooser is awaited from before the click: Playwright
      // only intercepts a chooser that opens while something listens for it. The browser's own dialog is replaced by
      // fileChooser.setFiles, with the folder as a person would pick it there.
      await page.goto(firstPage);
      let clicks = 0;
      const click = async (target: Locator) => {
        await target.click();
        clicks++;
      };
      const folderButton = page.locator('#upload label').filter({ hasText: 'Choose a folder' });
      expect(await folderButton.isVisible(), 'the first page has an upload area with a folder picker').toBe(true);
      const [fileChooser] = await Promise.all([page.waitForEvent('filechooser', { timeout: 10_000 }), click(folderButton)]);
      expect(await fileChooser.element().getAttribute('id'), 'the chooser is the folder picker\'s').toBe('pick-folder');
      expect(await fileChooser.element().evaluate((el) => el.hasAttribute('webkitdirectory')), 'it picks a folder').toBe(true);
      await fileChooser.setFiles(join(dir, 'notes'));
      expect(clicks, 'clicks on the page from the first page to a chosen folder').toBe(1);
      await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 60_000 }).toBe(2);
      // The list on the page follows the new documents until they are ready.
      await expect.poll(() => page.locator('#documents tbody tr[data-status=ready]').count(), { timeout: 120_000, interval: 500 }).toBe(2);
      // Once there are documents the page no longer asks for the "first" ones (#62 Low).
      expect(await page.locator('#upload-heading').textContent()).toBe('Upload more documents');
      expect(await page.locator('#no-documents').count()).toBe(0);
      await page.screenshot({ path: join(ARTIFACTS, 'first-run-uploaded.png'), fullPage: true });

      await page.click('nav.top >> text=Search');
      await page.fill('main input[name=q]', 'lighthouse keeper');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/search\?q=/);
      expect(await page.locator('li.result a.filename').first().textContent()).toBe('lighthouse.txt');
      expect(await page.locator('#empty-library').count()).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await context.close();
    }
  }, 240_000);

  it('uploads without script: an empty folder picker is no phantom file; Upload with nothing chosen says so', async () => {
    const { d, browser } = suite;
    const user = await addUser(d, { email: 'nojs@example.com' });
    const context = await browser.newContext({ viewport: DESK, javaScriptEnabled: false });
    const page = await login(context, user, d.url);
    try {
      const projects = (await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects as { id: string }[];
      await page.goto(`${d.url}/projects/${projects[0]!.id}`);
      await page.setInputFiles('#pick-files', [{ name: 'tide-table.txt', mimeType: 'text/plain', buffer: Buffer.from('High water at six, low water at noon.\n') }]);
      await page.click('#upload button[type=submit]');
      await page.waitForURL(`${d.url}/projects/${projects[0]!.id}`);
      expect(await page.locator('.flash').textContent()).toBe('Uploaded 1 file; it is being indexed.');
      await page.click('#upload button[type=submit]');
      await page.waitForURL(`${d.url}/projects/${projects[0]!.id}`);
      expect(await page.locator('.flash').textContent()).toBe('Nothing was uploaded: choose one or more files or a folder first.');

      // The API reads the same body the same way: a browser's empty picker part (no name, no bytes) is no file.
      const body =
        '--b\r\nContent-Disposition: form-data; name="file"; filename="tides.txt"\r\nContent-Type: text/plain\r\n\r\nSpring tides at the new moon.\n\r\n' +
        '--b\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n';
      const res = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'multipart/form-data; boundary=b' }, body });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { documents: { filename: string }[] }).documents.map((x) => x.filename)).toEqual(['tides.txt']);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('uploads with script: choosing starts them (no Upload button to press in vain); a refused file shows a failed state, not a full bar', async () => {
    const { d, browser } = suite;
    const user = await addUser(d, { email: 'feedback@example.com' });
    const context = await browser.newContext({ viewport: DESK });
    const page = await login(context, user, d.url);
    try {
      const projects = (await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects as { id: string }[];
      await page.goto(`${d.url}/projects/${projects[0]!.id}`);
      expect(await page.locator('#upload button[type=submit]').isVisible()).toBe(false);
      expect(await page.locator('#upload').textContent()).toContain('Uploading starts as soon as you choose');
      await page.setInputFiles('#pick-files', [
        { name: 'program.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0]) },
        { name: 'ok.txt', mimeType: 'text/plain', buffer: Buffer.from('A file that is fine.\n') },
      ]);
      await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 30_000 }).toBe(1);
      const failed = page.locator('#upload-list li.error');
      expect(await failed.textContent()).toContain('"program.bin" is not a type docsearch reads');
      expect(await failed.locator('progress').count()).toBe(0);
      expect(await failed.locator('.state').textContent()).toBe('Not uploaded');
      expect(await page.locator('#upload-list li.ok progress').evaluate((b) => (b as unknown as { value: number }).value)).toBe(100);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('names keep their words whole at desk width (the status column stays compact); a phone gives them the width', async () => {
    const { d, browser } = suite;
    const user = await addUser(d, { email: 'names@example.com' });
    await upload(d.url, user, [
      { name: 'handbook.txt', body: 'The staff handbook covers leave, travel and expenses.\n' },
      { name: 'StaffHandbookRevised2024.txt', body: 'The revised handbook covers leave and travel.\n' },
      { name: 'mammoth-tables-trackchanges.docx', body: makeDocx(para('Tables with tracked changes.')) },
      { name: 'quarterly-report-2024-final.pdf', body: makePdf([[{ lines: ['Quarterly report.'] }]]) },
      { name: 'broken-scan-of-the-lease.pdf', body: Buffer.from('%PDF-1.4\nthis is not really a pdf at all\n%%EOF\n') },
    ]);
    const context = await browser.newContext({ viewport: DESK });
    const page = await login(context, user, d.url);
    try {
      await page.goto(`${d.url}/documents`);
      expect(await page.locator('#documents tbody tr').count()).toBe(5);
      expect(await page.locator('#documents tbody tr[data-status=failed]').count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'names-desk.png'), fullPage: true });
      expect(await midWordBreaks(page, '#documents a.filename')).toEqual([]);
      const nameWidth = await page.locator('#documents thead th').nth(1).evaluate((th) => th.getBoundingClientRect().width);
      const statusWidth = await page.locator('#documents thead th', { hasText: 'Status' }).evaluate((th) => th.getBoundingClientRect().width);
      expect(statusWidth).toBeLessThanOrEqual(nameWidth);
      expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      // The project page's table, too.
      const projects = (await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects as { id: string }[];
      await page.goto(`${d.url}/projects/${projects[0]!.id}`);
      expect(await midWordBreaks(page, '#documents a.filename')).toEqual([]);
      await page.setViewportSize(PHONE);
      for (const path of ['/documents', `/projects/${projects[0]!.id}`]) {
        await page.goto(d.url + path);
        expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'), path).toBe(true);
        expect(await midWordBreaks(page, '#documents a.filename'), path).toEqual([]);
        expect(await page.locator('#documents td.name-cell').first().evaluate((td) => td.getBoundingClientRect().width), path).toBeGreaterThan(300);
      }
      await page.screenshot({ path: join(ARTIFACTS, 'names-phone.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }, 180_000);

  it('a document page: actions at the top, a page-by-page preview, and the text folded so the page stays short', async () => {
    const { d, browser } = suite;
    const user = await addUser(d, { email: 'pages@example.com' });
    const pdf = makePdf(Array.from({ length: 14 }, (_, p) => [{ lines: [`Page ${p + 1} of the tenancy agreement.`, ...FILLER] }]));
    const [doc] = await upload(d.url, user, [{ name: 'tenancy-agreement.pdf', body: pdf }]);
    expect(doc!.status).toBe('ready');
    const context = await browser.newContext({ viewport: DESK });
    const page = await login(context, user, d.url);
    try {
      await page.goto(`${d.url}/documents/${doc!.id}`);
      await page.screenshot({ path: join(ARTIFACTS, 'document-top.png'), fullPage: true });
      for (const control of ['input[name=filename]', 'button:has-text("Rename")', 'a:has-text("Delete")']) {
        const box = await page.locator(`main ${control}`).first().boundingBox();
        expect(box, control).not.toBeNull();
        expect(box!.y, control).toBeLessThan(DESK.height);
      }
      expect(await page.evaluate<number>('document.documentElement.scrollHeight')).toBeLessThan(3000);
      // The text is there, one click away.
      await page.click('summary:has-text("Text")');
      expect(await page.locator('.chunk-text').first().isVisible()).toBe(true);

      // The preview, page by page.
      const thumb = page.locator('img.thumb');
      const loaded = () => thumb.evaluate((el) => ((img) => img.complete && img.naturalWidth)(el as unknown as { complete: boolean; naturalWidth: number }));
      await expect.poll(loaded, { timeout: 30_000 }).toBe(320);
      expect(await page.locator('#preview-where').textContent()).toBe('Page 1 of 14');
      expect(await page.locator('#preview a[rel=prev]').isVisible()).toBe(false);
      await page.evaluate('window.samePage = true'); // the script turns pages in place
      await page.click('#preview a[rel=next]');
      await expect.poll(() => page.locator('#preview-where').textContent()).toBe('Page 2 of 14');
      expect(await thumb.getAttribute('src')).toContain('page=2');
      await expect.poll(loaded, { timeout: 30_000 }).toBe(320);
      expect(await page.evaluate('window.samePage')).toBe(true);
      expect(page.url()).toContain('?page=2');
      // The image opens the PDF larger, in the browser's viewer, at the page shown.
      expect(await page.locator('#preview a.enlarge').getAttribute('href')).toBe(`/documents/${doc!.id}/file#page=2`);
      await page.click('#preview a[rel=prev]');
      await expect.poll(() => page.locator('#preview-where').textContent()).toBe('Page 1 of 14');
      expect(await page.locator('#preview a[rel=prev]').isVisible()).toBe(false);

      // Without script the same links load the page at that page of the preview.
      const bare = await browser.newContext({ viewport: DESK, javaScriptEnabled: false });
      const plain = await login(bare, user, d.url);
      await plain.goto(`${d.url}/documents/${doc!.id}?page=13`);
      await plain.click('#preview a[rel=next]');
      expect(await plain.locator('#preview-where').textContent()).toBe('Page 14 of 14');
      expect(await plain.locator('#preview a[rel=next]').isVisible()).toBe(false);
      expect(await plain.locator('img.thumb').getAttribute('src')).toBe(`/documents/${doc!.id}/thumbnail.webp?page=14`);
      expect(await plain.locator('#preview a.enlarge').getAttribute('href')).toBe(`/documents/${doc!.id}/file#page=14`);
      await bare.close();

      // The API's thumbnail takes the page too.
      const p14 = await fetch(`${d.url}/api/v1/documents/${doc!.id}/thumbnail?page=14`, { headers: { authorization: `Bearer ${user.apiKey}` } });
      expect(p14.status).toBe(200);
      expect(p14.headers.get('content-type')).toBe('image/webp');
      const p15 = await fetch(`${d.url}/api/v1/documents/${doc!.id}/thumbnail?page=15`, { headers: { authorization: `Bearer ${user.apiKey}` } });
      expect(p15.status).toBe(404);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('sentences and counts: indexing note, deleting a failed document, the bulk retry button, weak answers', async () => {
    const { d, browser } = suite;
    const user = await addUser(d, { email: 'words@example.com' });
    const [bad] = await upload(d.url, user, [{ name: 'broken.pdf', body: Buffer.from('%PDF-1.4\nthis is not really a pdf at all\n%%EOF\n') }]);
    expect(bad!.status).toBe('failed');
    await upload(d.url, user, [{ name: 'gulls.txt', body: 'Gulls follow the ferry across the bay.\n' }]);
    const context = await browser.newContext({ viewport: DESK });
    const page = await login(context, user, d.url);
    try {
      // A document still being indexed: the note is a sentence of its own.
      const long = Array.from({ length: 3000 }, (_, i) => `Line ${i + 1} of the ship's log records wind, sea state and bearing.`).join('\n');
      await upload(d.url, user, [{ name: 'ships-log.txt', body: long }], false);
      await page.goto(`${d.url}/documents`);
      const intro = await page.locator('main h1 + p').textContent();
      // 3000 lines take the worker many seconds: the page is read long before they are ready.
      expect(intro).toMatch(/^Every document in your library \(deleted ones wait in the Trash\)\. Still indexing 1 document/);

      await page.goto(`${d.url}/documents/${bad!.id}/delete`);
      expect(await page.locator('main').textContent()).not.toContain('0 chunks');
      expect(await page.locator('main').textContent()).toContain('Search stops finding it at once. It goes to the Trash, where it can be restored as it was for 30 days.');

      // Its sibling: an empty project's deletion names no zero counts.
      const empty = (await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Empty shelf' } })).body.id as string;
      await page.goto(`${d.url}/projects/${empty}/delete`);
      expect(await page.locator('main').textContent()).toContain('This deletes the project. It has no documents.');
      expect(await page.locator('main').textContent()).not.toMatch(/\b0 (chunks|documents)/);

      await page.goto(`${d.url}/documents`);
      expect(await page.locator('button[value=retry]').textContent()).toBe('Retry selected');
      await page.click('summary:has-text("With the selected documents")'); // folded until a document is picked
      await page.click('button[value=retry]');
      expect(await page.locator('.flash').textContent()).toBe('Select one or more documents first.');

      await page.goto(`${d.url}/search?q=${encodeURIComponent('xyzzyplugh frobnicate')}`);
      expect(await page.locator('.weak').first().textContent()).toMatch(/^No close matches/);
      const results = await page.locator('li.result').count();
      expect(results).toBeGreaterThan(0);
      expect(await page.locator('li.result .weak-label').count()).toBe(results);
      await page.goto(`${d.url}/search?q=${encodeURIComponent('xyzzyplugh frobnicate')}&view=passages`);
      expect(await page.locator('li.result .weak-label').count()).toBe(await page.locator('li.result').count());
    } finally {
      await context.close();
    }
  }, 180_000);
});
