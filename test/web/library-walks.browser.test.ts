import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { authorizePath, getCode, post } from '../auth/oauth-flow.js';
import { api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, watchCsp } from './browser.js';
import { loggedIn } from './library-client.js';

const SCAN = readFileSync(join(REPO, 'test/fixtures/ocr/scan-300dpi.pdf'));
/** Names as long as people make them: a 201-character file name without a space, a 100-character project name. */
const LONG_FILE = `${'field-survey-of-the-northern-alpine-meadows-'.repeat(4).slice(0, 197)}.txt`;
const LONG_PROJECT = 'Hydrological-and-glaciological-observations-of-the-upper-valley-catchment-during-the-winter-seasons';
const WIDTHS = { desk: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('the library pages people expect (#21), walked at desk and phone width'), () => {
  const suite = browserSuite();
  let d: Daemon;
  let ada: TestUser;
  let context: BrowserContext;
  let page: Page;
  let field: string;
  let longProject: string;
  let scanId: string;
  let longId: string;
  let clientId: string;
  const cspErrors: string[] = [];
  let setupPath = '';

  beforeAll(() => {
    d = suite.d;
    setupPath = new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search;
  });

  const open = async (ctx: BrowserContext): Promise<Page> => watchCsp(await ctx.newPage(), cspErrors);

  it('first setup lands in the library, which says it is empty', async () => {
    context = await suite.browser.newContext({ viewport: WIDTHS.desk });
    page = await open(context);
    await page.goto(d.url + setupPath);
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=password]', 'correct horse battery staple');
    await page.fill('input[name=password2]', 'correct horse battery staple');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/documents$/);
    expect(await page.locator('#no-documents').textContent()).toContain('Your library is empty.');
    await page.goto(d.url + '/search?q=lighthouse');
    // Ada's API key for the fixtures below.
    await page.goto(d.url + '/settings/keys');
    await page.fill('input[name=name]', `${'Nightly CI upload key for the hydrology group '.repeat(2).trim()}`);
    await page.click('button:has-text("Generate new API key")');
    const key = await page.locator('#new-key').inputValue();
    ada = { email: 'ada@example.com', password: 'correct horse battery staple', apiKey: key };

    field = (await api(d, '/api/v1/projects', { token: key, body: { name: 'Field notes' } })).body.id;
    longProject = (await api(d, '/api/v1/projects', { token: key, body: { name: LONG_PROJECT, description: 'Notes '.repeat(60) } })).body.id;
    const form = new FormData();
    form.append('project_id', field);
    form.append('file', new Blob([SCAN]), 'lighthouse logbook (scan).pdf');
    form.append('file', new Blob(['The glacier tongue retreated forty metres; crevasses opened along the margin.\n']), LONG_FILE);
    form.append('file', new Blob(['Marmots whistle when eagles circle over the scree.\n']), 'marmots.txt');
    form.append('file', new Blob(['Edelweiss grows on limestone ledges.\n']), 'edelweiss.txt');
    form.append('file', new Blob(['Ibex herds graze the upper pastures in summer.\n']), 'ibex.txt');
    form.append('file', new Blob([makePdf([[{ lines: ['Snow depth survey of the pass, with a table of readings.'] }]])]), 'snow-survey.pdf');
    const up = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const docs = ((await up.json()) as { documents: { id: string; filename: string; status: string }[] }).documents;
    expect(docs.map((x) => x.status)).toEqual(['ready', 'ready', 'ready', 'ready', 'ready', 'ready']);
    scanId = docs[0]!.id;
    longId = docs[1]!.id;

    // An application, connected through the consent screen (WebClient speaks the same forms).
    const web = await loggedIn(d, ada);
    await web.get('/settings/applications');
    const redirect = `https://notes.example.com/oauth/callback/${'very-long-path-segment-'.repeat(6)}`;
    const registered = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Hydrology field notebook synchroniser', redirect_uris: redirect });
    clientId = /id="new-client-id" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const secret = /id="new-client-secret" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const code = await getCode(web, { client_id: clientId, redirect_uri: redirect });
    expect((await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, client_secret: secret, redirect_uri: redirect })).status).toBe(200);
    await page.goto(d.url + authorizePath({ client_id: clientId, redirect_uri: redirect, response_type: 'code', state: 'x' }));
    expect(await page.locator('h1').textContent()).toContain('Hydrology field notebook synchroniser');
  }, 240_000);

  it('walks the library: Documents → filter → select → delete with a confirmation → told what went', async () => {
    await page.goto(d.url + '/projects');
    await page.click('nav.top >> text=Documents');
    await page.waitForURL(/\/documents$/);
    expect(await page.locator('#documents tbody tr').count()).toBe(6);
    await page.selectOption('select[name=type]', 'txt');
    await page.click('.filters button:has-text("Show")');
    await page.waitForURL(/type=txt/);
    expect((await page.locator('#documents a.filename').allTextContents()).sort()).toEqual(['edelweiss.txt', 'ibex.txt', LONG_FILE, 'marmots.txt'].sort());
    // The bulk actions stay folded until a document is picked (#62 Low). Select all (script) then narrow it by hand.
    expect(await page.locator('#bulk details.fold').evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(false);
    await page.check('#select-all');
    expect(await page.locator('#bulk details.fold').evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(true);
    expect(await page.locator('input[name=ids]:checked').count()).toBe(4);
    await page.uncheck('#select-all');
    await page.check('tr:has-text("edelweiss.txt") input[name=ids]');
    await page.check('tr:has-text("ibex.txt") input[name=ids]');
    expect(await page.locator('#select-all').evaluate((el) => (el as unknown as { indeterminate: boolean }).indeterminate)).toBe(true);
    await page.click('button:has-text("Delete selected")');
    // Asked after a 303, at the list's own address (Post/Redirect/Get: a reload shows the list and posts nothing).
    await page.waitForSelector('h1:text-is("Delete 2 documents?")');
    expect(page.url()).toMatch(/\/documents\?type=txt$/);
    expect((await page.locator('ul.doomed li').allTextContents()).sort()).toEqual(['edelweiss.txt', 'ibex.txt']);
    // Both still there until confirmed.
    expect((await api(d, '/api/v1/documents?filename=ibex', { token: ada.apiKey })).body.documents).toHaveLength(1);
    await page.click('#confirm');
    await page.waitForURL(/\/documents\?type=txt$/);
    expect(await page.locator('.flash').textContent()).toBe('Deleted 2 documents: the Trash keeps them for 30 days. Undo');
    expect((await page.locator('#documents a.filename').allTextContents()).sort()).toEqual([LONG_FILE, 'marmots.txt'].sort());
    expect((await api(d, '/api/v1/documents?filename=ibex', { token: ada.apiKey })).body.documents).toHaveLength(0);
    // Undo puts both back, on the same page of the list.
    await page.click('.flash button:has-text("Undo")');
    await page.waitForURL(/\/documents\?type=txt$/);
    expect(await page.locator('.flash').textContent()).toBe('Restored 2 documents: search finds them again.');
    expect((await page.locator('#documents a.filename').allTextContents()).sort()).toEqual([LONG_FILE, 'edelweiss.txt', 'ibex.txt', 'marmots.txt'].sort());
  }, 120_000);

  it('previews a scanned PDF: its first page and the text OCR read from it, marked as OCR', async () => {
    await page.goto(`${d.url}/documents/${scanId}`);
    const thumb = page.locator('img.thumb');
    await expect
      .poll(() => thumb.evaluate((el) => ((img) => img.complete && img.naturalWidth)(el as unknown as { complete: boolean; naturalWidth: number })), { timeout: 30_000 })
      .toBe(320);
    expect(await page.locator('.text-page h3').first().textContent()).toBe('Page 1');
    expect(await page.locator('.chunk .badge.ocr').count()).toBeGreaterThan(0);
    expect((await page.locator('.chunk-text').allTextContents()).join(' ')).toMatch(/lighthouse keeper/i);
    // Rename and move from the page, each saying what it did.
    await page.fill('input[name=filename]', 'Lighthouse logbook 1898.pdf');
    await page.click('button:has-text("Rename")');
    await page.waitForURL(`${d.url}/documents/${scanId}`);
    expect(await page.locator('.flash').textContent()).toBe('Renamed to “Lighthouse logbook 1898.pdf”.');
    await page.selectOption('select[name=project_id]', longProject);
    await page.click('button:has-text("Move")');
    await page.waitForURL(`${d.url}/documents/${scanId}`);
    expect(await page.locator('.flash').textContent()).toBe(`Moved to “${LONG_PROJECT}”: search finds it there now.`);
    await page.goto(`${d.url}/search?q=${encodeURIComponent('lighthouse keeper logbook')}&project=${longProject}`);
    expect(await page.locator('li.result a.filename').first().textContent()).toBe('Lighthouse logbook 1898.pdf');
    await page.goto(`${d.url}/search?q=${encodeURIComponent('xyzzyplugh frobnicate')}`);
    await page.goto(`${d.url}/search?q=${encodeURIComponent('xyzzyplugh frobnicate')}&mode=keyword`);
    await page.goto(`${d.url}/`);
    await page.goto(`${d.url}/documents/${longId}`);
    await page.goto(`${d.url}/documents/${longId}/delete`);
  }, 120_000);

  it('uploads a folder from the picker and by dropping it, keeping each file’s path inside it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-folder-'));
    try {
      mkdirSync(join(dir, 'trip/day 2'), { recursive: true });
      writeFileSync(join(dir, 'trip/arrival.txt'), 'Arrival at the hut in fog.\n');
      writeFileSync(join(dir, 'trip/day 2/summit.txt'), 'Summit reached at noon; the cornice was unstable.\n');
      writeFileSync(join(dir, 'trip/.DS_Store'), 'hidden');
      await page.goto(`${d.url}/projects/${longProject}`);
      await page.setInputFiles('#pick-folder', join(dir, 'trip'));
      await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 60_000 }).toBe(2);
      expect(await page.locator('#upload-list li.skipped').textContent()).toBe('Left out 1 hidden file (names starting with “.”)');
      expect((await page.locator('#upload-list li.ok .name').allTextContents()).sort()).toEqual(['trip/arrival.txt', 'trip/day 2/summit.txt']);

      // A dropped folder, read through the File and Directory Entries API (entries made in the page, as Chromium hands them over).
      await page.evaluate(`(() => {
        const file = (name, text) => ({ isFile: true, isDirectory: false, name, fullPath: '', file: (ok) => ok(new File([text], name, { type: 'text/plain' })) });
        const dir = (name, children) => ({ isFile: false, isDirectory: true, name, fullPath: '', children,
          createReader() { let done = false; return { readEntries: (ok) => { const batch = done ? [] : children; done = true; setTimeout(() => ok(batch)); } }; } });
        const place = (e, parent) => { e.fullPath = parent + '/' + e.name; (e.children || []).forEach((c) => place(c, e.fullPath)); return e; };
        const root = place(dir('dropped', [file('moraine.txt', 'The moraine ridge holds boulders.'), dir('deep', [file('cirque.txt', 'A cirque lake below the ridge.')])]), '');
        const loose = place(file('loose note.txt', 'A note dropped on its own.'), '');
        const event = new Event('drop', { bubbles: true, cancelable: true });
        Object.defineProperty(event, 'dataTransfer', { value: { items: [root, loose].map((e) => ({ webkitGetAsEntry: () => e })), files: [] } });
        document.getElementById('dropzone').dispatchEvent(event);
      })()`);
      await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 60_000 }).toBe(5);
      const listed = await api(d, `/api/v1/documents?project_id=${longProject}&limit=100`, { token: ada.apiKey });
      const paths = Object.fromEntries(listed.body.documents.map((x: { filename: string; path: string | null }) => [x.filename, x.path]));
      expect(paths).toMatchObject({
        'arrival.txt': 'trip/arrival.txt',
        'summit.txt': 'trip/day 2/summit.txt',
        'moraine.txt': 'dropped/moraine.txt',
        'cirque.txt': 'dropped/deep/cirque.txt',
        'loose note.txt': null,
      });
      await expect.poll(() => page.locator('#documents tbody tr[data-status=ready]').count(), { timeout: 120_000, interval: 500 }).toBe(6);
      expect(await page.locator('#documents .path').allTextContents()).toEqual(expect.arrayContaining(['trip/day 2/summit.txt', 'dropped/deep/cirque.txt']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('on a phone the Documents page opens on its documents: filters and bulk actions start folded', async () => {
    const phone = await open(await suite.browser.newContext({ viewport: WIDTHS.phone, storageState: await context.storageState() }));
    try {
      await phone.goto(`${d.url}/documents`);
      const first = await phone.locator('#documents tbody tr').first().boundingBox();
      expect(first!.y).toBeLessThan(WIDTHS.phone.height);
      expect(await phone.locator('input[name=filename]').isVisible()).toBe(false);
      expect(await phone.locator('button[value=move]').isVisible()).toBe(false);
      await phone.click('summary:has-text("Filter and sort")');
      expect(await phone.locator('input[name=filename]').isVisible()).toBe(true);
      await phone.click('summary:has-text("With the selected documents")');
      expect(await phone.locator('button[value=move]').isVisible()).toBe(true);
      // At desk width the filters are open, as they are without script; the bulk actions unfold once a document is picked.
      await page.goto(`${d.url}/documents`);
      expect(await page.locator('input[name=filename]').isVisible()).toBe(true);
      expect(await page.locator('button[value=move]').isVisible()).toBe(false);
      await page.locator('input[name=ids]').first().check();
      expect(await page.locator('button[value=move]').isVisible()).toBe(true);
    } finally {
      await phone.context().close();
    }
  });

  it('the upload list wraps a 201-character name; on a phone a document row is a card with its delete on screen', async () => {
    await page.goto(`${d.url}/projects/${field}`);
    await page.setInputFiles('#pick-files', [{ name: LONG_FILE.replace('.txt', '-2.txt'), mimeType: 'text/plain', buffer: Buffer.from('A second long-named note.\n') }]);
    await expect.poll(() => page.locator('#upload-list li.ok').count(), { timeout: 60_000 }).toBe(1);
    // On a phone each document is a card: its name gets the width, and the delete link stays on screen.
    await page.setViewportSize(WIDTHS.phone);
    const row = page.locator('#documents tbody tr', { hasText: 'marmots.txt' });
    expect(await row.locator('td.name-cell').evaluate((td) => td.getBoundingClientRect().width)).toBeGreaterThan(300);
    const del = await row.locator('a:has-text("Delete")').boundingBox();
    expect(del!.x + del!.width).toBeLessThanOrEqual(390);
    await page.setViewportSize(WIDTHS.desk);
    // Every page's layout, light and dark, at both widths: test/web/every-page.browser.test.ts.
  }, 240_000);

  it('"/" focuses search from any page; the header box searches the library', async () => {
    await page.goto(`${d.url}/documents`);
    await page.locator('h1').click();
    await page.keyboard.press('/');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('site-search');
    await page.keyboard.type('marmots eagles');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/search\?q=marmots\+eagles/);
    expect(await page.locator('li.result a.filename').first().textContent()).toBe('marmots.txt');
    // On the search page "/" goes to its own box; typing "/" inside a field types it.
    await page.locator('h1').click();
    await page.keyboard.press('/');
    expect(await page.evaluate<string>('document.activeElement.getAttribute("name")')).toBe('q');
    await page.goto(`${d.url}/documents`);
    await page.fill('input[name=filename]', '');
    await page.focus('input[name=filename]');
    await page.keyboard.type('a/b');
    expect(await page.inputValue('input[name=filename]')).toBe('a/b');
  });

  it('no Content-Security-Policy violation on the way', () => {
    expect(cspErrors).toEqual([]);
  });
});
