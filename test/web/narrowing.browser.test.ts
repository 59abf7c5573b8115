/**
 * Labelling a selection on the Documents page from the keyboard alone, in Chromium: a document picked with Space, its
 * labels typed, Enter labels it — the form's first button is "Delete selected…", which Enter pressed before. Its field
 * and the list's label filter are found by their names, which tell them apart.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('labelling a selection from the keyboard'), () => {
  const suite = browserSuite();

  it('Enter in the labels field of the actions on a selection labels it, and asks to delete nothing', async () => {
    const { d, browser } = suite;
    const ada = await addUser(d);
    const up = await uploadFiles(d, ada.apiKey, [{ name: 'tides.txt', bytes: Buffer.from('The spring tides reach the quay twice a month.') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = up.body.documents[0].id as string;
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, d.url, ada);
      await page.goto(`${d.url}/documents`);
      await page.focus(`input[name=ids][value="${id}"]`);
      await page.keyboard.press('Space');
      // Two fields take label names: each has a name of its own, the filter's and the selection's.
      const filter = page.getByRole('textbox', { name: 'With labels', exact: true });
      const bulk = page.getByRole('textbox', { name: 'Labels to add or remove', exact: true });
      expect([await filter.count(), await bulk.count()]).toEqual([1, 1]);
      expect(await filter.evaluate((e) => e.closest('form')?.getAttribute('aria-label'))).toBe('Filter documents');
      expect(await bulk.evaluate((e) => e.closest('[role=group]')?.getAttribute('aria-label'))).toBe('With the selected documents');
      await bulk.focus();
      await page.keyboard.type('Q&A, café ☕');
      // The page is /documents before and after: the form's own answer says which button Enter pressed.
      const posted = page.waitForResponse((r) => r.url().endsWith('/documents/bulk'));
      await page.keyboard.press('Enter');
      expect((await posted).status(), 'labelled and sent back to the list (a delete asks on a page of its own)').toBe(303);
      await expect.poll(() => page.locator('main').textContent()).toContain('Labelled 1 document “Q&A”, “café ☕”.');
      expect(await page.locator('h1').textContent()).toBe('Documents');
      expect((await api(d, `/api/v1/documents/${id}`, { token: ada.apiKey })).body.labels).toEqual(['café ☕', 'Q&A']);
    } finally {
      await context.close();
    }
  }, 60_000);
});
