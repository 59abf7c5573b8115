/**
 * Results open at the match (#53 item 2), in Chromium: a result links to its passage on the document page
 * (`/documents/{id}?page=N#chunk-K`); clicking it shows the passage in view and marked, with the text unfolded and
 * the preview on the passage's page. A passage past the first window of text (a long text file, no pages) loads the
 * window that holds it.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

const filler = (page: number) => Array.from({ length: 30 }, (_, i) => `Page ${page} line ${i + 1} of the survey log lists the weather and the tides.`);

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('a result opens at its passage'), () => {
  const suite = browserSuite();
  let user: TestUser;

  /** Whether the element is inside the viewport (its box at least partly visible). */
  const inView = (page: Page, selector: string) =>
    page.evaluate<boolean>(`(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight && r.height > 0; })()`);

  it('clicks a result: the passage is in view and marked, and the preview shows its page', { timeout: 300_000 }, async () => {
    user = await addUser(suite.d);
    const pdf = makePdf([[{ lines: filler(1) }], [{ lines: filler(2) }], [{ lines: [...filler(3).slice(0, 12), 'The lighthouse keeper logged the narwhalite sighting at dawn.', ...filler(3).slice(12)] }], [{ lines: filler(4) }]]);
    // Some 150 chunks: the last is past the document page's first window of 100.
    const long = `${Array.from({ length: 2000 }, (_, i) => `Paragraph ${i + 1} of the manual explains one routine of the workshop in plain words.`).join('\n\n')}\n\nThe last paragraph names the quasarlute valve.`;
    const up = await uploadFiles(suite.d, user.apiKey, [{ name: 'survey.pdf', bytes: pdf }, { name: 'manual.txt', bytes: Buffer.from(long) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const context = await suite.browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    try {
      const top = (await api(suite.d, '/api/v1/search', { token: user.apiKey, body: { query: 'narwhalite sighting', limit: 1 } })).body.results[0];
      const at = top.page_start as number;
      expect(at).toBeGreaterThan(1);
      await signIn(page, suite.d.url, user);
      await page.goto(`${suite.d.url}/search?q=narwhalite+sighting`);
      const link = page.locator('ol.results > li.result').first().locator('a.at-match').first();
      expect(await link.getAttribute('href')).toBe(`/documents/${top.document.id}?page=${at}#chunk-${top.chunk_id.split(':')[1]}`);
      await link.click();
      await page.waitForURL(/#chunk-\d+$/);
      const chunk = `#${new URL(page.url()).hash.slice(1)}`;
      expect(await page.locator('details#text').getAttribute('open')).not.toBeNull();
      expect(await page.locator(chunk).textContent()).toContain('narwhalite');
      expect(await inView(page, chunk)).toBe(true);
      expect(await page.locator(chunk).evaluate((el) => el.classList.contains('match') && el.matches(':target'))).toBe(true);
      expect(await page.locator('#preview img').getAttribute('src')).toMatch(new RegExp(`thumbnail\\.webp\\?page=${at}$`));
      expect(await page.locator('#preview-where').textContent()).toBe(`Page ${at} of 4`);

      // A passage past the first 100 chunks of a file without pages.
      await page.goto(`${suite.d.url}/search?q=quasarlute+valve`);
      const far = page.locator('ol.results > li.result').first().locator('a.at-match').first();
      expect(await far.getAttribute('href')).toMatch(/^\/documents\/doc_[0-9A-Za-z]+#chunk-\d+$/);
      await far.click();
      await page.waitForURL(/\?text=.+#chunk-\d+$/);
      const farChunk = `#${new URL(page.url()).hash.slice(1)}`;
      await page.locator(farChunk).waitFor();
      expect(await page.locator(farChunk).textContent()).toContain('quasarlute');
      expect(await inView(page, farChunk)).toBe(true);
    } finally {
      await context.close();
    }
  });
});
