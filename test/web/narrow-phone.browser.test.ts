/**
 * A 360 px phone in Chromium: long unbroken text (a project name without spaces, a URL in a passage) wraps inside
 * the screen on the search results, the document page (its breadcrumb) and the API keys page (the project's name
 * beside its checkbox), instead of widening the page.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

// The longest name a project takes (100 characters), without a space.
const PROJECT = `Glacier${'x'.repeat(93)}`;
const URL_TEXT = `https://example.org/${'moraine'.repeat(40)}`;

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('long unbroken text on a 360 px phone'), () => {
  const suite = browserSuite();

  it('keeps the search results, the document page and the API keys page within the screen', async () => {
    const { d, browser } = suite;
    const user = await addUser(d);
    const created = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: PROJECT } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const project = created.body.id as string;
    const up = await uploadFiles(d, user.apiKey, [{ name: 'moraine.txt', bytes: Buffer.from(`The moraine survey is filed at ${URL_TEXT} for the team.\n`) }], { projectId: project, query: '?wait=true' });
    const docId = up.body.documents[0].id as string;
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const page = await context.newPage();
    try {
      await signIn(page, d.url, user);
      const widths: Record<string, number> = {};
      for (const path of ['/search?q=moraine+survey', `/documents/${docId}`, '/settings/keys']) {
        await page.goto(d.url + path);
        widths[path] = await page.evaluate<number>('document.documentElement.scrollWidth');
      }
      expect(widths).toEqual({ '/search?q=moraine+survey': 360, [`/documents/${docId}`]: 360, '/settings/keys': 360 });
      // A snippet clips what overflows it: the URL must wrap, not be cut off unseen.
      await page.goto(d.url + '/search?q=moraine+survey');
      expect(await page.locator('a.project').textContent()).toBe(PROJECT);
      const snippet = page.locator('.snippet').first();
      expect(await snippet.textContent()).toContain(URL_TEXT);
      expect(await snippet.evaluate((e) => e.scrollWidth - e.clientWidth)).toBe(0);
    } finally {
      await context.close();
    }
  }, 120_000);
});
