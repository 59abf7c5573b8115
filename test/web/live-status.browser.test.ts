/**
 * Live status (#53 item 4), in Chromium: a document's page and the Documents list follow the server while documents
 * are in work — a retried document's page shows its final state (failed again, Retry back, Move enabled) without a
 * reload, and a row of /documents turns ready — through the one poll every page uses (/documents/status.json).
 * The Documents page keeps its uploader (#53 item 5); the folder picker reads as one (item 8).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('status follows the server without a reload'), () => {
  // One document at a time: with the default eight, a retried document finds a free worker and fails again before
  // its page has loaded, and the queued state this test watches never shows.
  const suite = browserSuite(['--ingest-workers', '1']);
  let user: TestUser;
  beforeAll(async () => {
    user = await addUser(suite.d);
  });

  /** Files that keep the worker busy for a while, so what is uploaded or retried after them waits in the queue. */
  const backlog = (tag: string) =>
    Array.from({ length: 6 }, (_, i) => ({ name: `${tag}-${i}.txt`, bytes: Buffer.from(Array.from({ length: 300 }, (_, j) => `Line ${j} of ${tag} file ${i} keeps the model busy for a moment.`).join('\n')) }));

  it("a retried document's page shows it failed again, without a reload; a /documents row turns ready", { timeout: 300_000 }, async () => {
    // A second project, so the page offers Move.
    expect((await api(suite.d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Elsewhere' } })).status).toBe(201);
    const bad = await uploadFiles(suite.d, user.apiKey, [{ name: 'bad.pdf', bytes: Buffer.from('%PDF-1.7\nnot really a PDF after all\n') }], { query: '?wait=true' });
    const id = bad.body.documents[0].id as string;
    expect(bad.body.documents[0].status).toBe('failed');
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, user);
      await page.goto(`${suite.d.url}/documents/${id}`);
      expect(await page.locator('.live-status').getAttribute('data-status')).toBe('failed');
      // Work ahead of it in the queue, then Retry: the page comes back with it queued.
      expect((await uploadFiles(suite.d, user.apiKey, backlog('first'))).status).toBe(202);
      await page.click('form[action$="/retry"] button');
      await page.waitForURL(`${suite.d.url}/documents/${id}`);
      expect(await page.locator('.live-status').getAttribute('data-status')).not.toBe('failed');
      expect(await page.locator('[data-shown-when="failed"]').isHidden()).toBe(true);
      expect(await page.locator('button[data-enabled-when="settled"]').isDisabled()).toBe(true);
      await page.evaluate('window.__sameDocument = true');
      await page.locator('.live-status[data-status="failed"]').waitFor({ timeout: 120_000 });
      expect(await page.evaluate('window.__sameDocument')).toBe(true);
      expect(await page.locator('.live-status').textContent()).toContain('failed');
      expect(await page.locator('[data-shown-when="failed"]').isVisible()).toBe(true);
      expect(await page.locator('button[data-enabled-when="settled"]').isDisabled()).toBe(false);

      const up = await uploadFiles(suite.d, user.apiKey, [...backlog('second'), { name: 'late.txt', bytes: Buffer.from('A note that waits its turn in the queue.') }]);
      const late = (up.body.documents as { id: string; filename: string }[]).find((x) => x.filename === 'late.txt')!.id;
      await page.goto(`${suite.d.url}/documents`);
      const row = page.locator(`tr[data-document-id="${late}"] .live-status`);
      expect(await row.getAttribute('data-status')).not.toBe('ready');
      await page.evaluate('window.__sameDocument = true');
      await page.locator(`tr[data-document-id="${late}"] .live-status[data-status="ready"]`).waitFor({ timeout: 120_000 });
      expect(await page.evaluate('window.__sameDocument')).toBe(true);
    } finally {
      await context.close();
    }
  });
  it('the Documents page keeps its uploader once the library holds documents; the folder picker says it picks a folder', async () => {
    // Its own document, so the page is the one a library with documents shows, whatever ran before.
    expect((await uploadFiles(suite.d, user.apiKey, [{ name: 'already-here.txt', bytes: Buffer.from('A note already in the library.') }], { query: '?wait=true' })).body.documents[0].status).toBe('ready');
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, user);
      await page.goto(`${suite.d.url}/documents`);
      expect(await page.locator('tr[data-document-id]').count()).toBeGreaterThan(0);
      await page.click('details.upload-more > summary');
      const folder = page.locator('label:has(#pick-folder)');
      expect((await folder.innerText()).trim()).toBe('Choose a folder');
      // The native control ("Choose Files") is there for the label to open, but not what a person sees.
      expect((await page.locator('#pick-folder').boundingBox())!.width).toBeLessThanOrEqual(1);
      await page.setInputFiles('#pick-files', { name: 'from-documents.txt', mimeType: 'text/plain', buffer: Buffer.from('Uploaded from the Documents page.') });
      await page.click('#upload-submit');
      await page.waitForLoadState();
      const listed = await api(suite.d, '/api/v1/documents?filename=from-documents&limit=5', { token: user.apiKey });
      expect(listed.body.documents.map((x: { filename: string }) => x.filename)).toEqual(['from-documents.txt']);
    } finally {
      await context.close();
    }
  });
});
