/**
 * "Open at this passage" (#62 item 2, #58 item 6), in Chromium: a search result's one link opens the viewer (or, for a
 * PDF, the document page) scrolled to the passage, with the answer sentence marked — for a PDF, HTML, Markdown, an
 * e-mail, a Word file, a CSV file (its row marked in a table) and slides, each with the passage far down, so landing on
 * it means the page scrolled there. The mark is checked in light and dark: its own background, readable text on it.
 * A passage past the document page's first window of text (a long text file) loads the window that holds it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, REPO, type TestUser } from '../helpers/daemon.js';
import { makeDocx, makePdf, para } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn, watchCsp } from './browser.js';

const filler = (n: number, what: string) => Array.from({ length: n }, (_, i) => `Paragraph ${i + 1} of the ${what} records the weather, the tides and the traffic in the harbour.`);
const ANSWER = (what: string) => `The ${what} logged the narwhalite beacon relit at dawn.`;

/** Documents with one answer sentence deep inside, each under its own rare word. */
function fixtures(): { name: string; bytes: Buffer; query: string; answer: string; marked?: string }[] {
  const html = `<!doctype html><html><body><h1>Harbour log</h1>${filler(60, 'log').map((p, i) => `<p>${p}</p>${i === 45 ? `<p>${ANSWER('harbour master')}</p>` : ''}`).join('\n')}</body></html>`;
  const md = `# Tide book\n\n${filler(60, 'tide book').map((p, i) => `${p}\n\n${i === 45 ? `Some **words** first. ${ANSWER('tide warden')}\n\n` : ''}`).join('')}`;
  const eml = [
    'From: Harbour Office <office@example.org>',
    'To: Crew <crew@example.org>',
    'Subject: Beacon report',
    'Date: Tue, 3 Mar 2026 09:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    ...filler(60, 'report').flatMap((p, i) => [p, '', ...(i === 45 ? [ANSWER('night watch'), ''] : [])]),
  ].join('\r\n');
  const docx = makeDocx(filler(60, 'manual').map((p, i) => para(p) + (i === 45 ? para(ANSWER('lamp keeper')) : '')).join(''));
  const csv = ['vessel,berth,cargo', ...Array.from({ length: 300 }, (_, i) => (i === 240 ? 'Quasarlute,west,saffron crates' : `Vessel ${i + 1},berth ${(i % 12) + 1},general cargo`))].join('\n');
  const pdf = makePdf([1, 2, 3, 4].map((page) => [{ lines: page === 3 ? [...filler(12, 'survey'), ANSWER('keeper')] : filler(30, 'survey') }]));
  return [
    { name: 'harbour.html', bytes: Buffer.from(html), query: 'narwhalite beacon harbour master', answer: ANSWER('harbour master') },
    // "Some words first." is too short to stand alone (answer-units.ts): it is the start of the answer's unit.
    { name: 'tides.md', bytes: Buffer.from(md), query: 'narwhalite beacon tide warden', answer: ANSWER('tide warden'), marked: `Some words first. ${ANSWER('tide warden')}` },
    { name: 'beacon.eml', bytes: Buffer.from(eml), query: 'narwhalite beacon night watch', answer: ANSWER('night watch') },
    { name: 'manual.docx', bytes: docx, query: 'narwhalite beacon lamp keeper', answer: ANSWER('lamp keeper') },
    { name: 'berths.csv', bytes: Buffer.from(csv), query: 'quasarlute saffron crates', answer: 'Quasarlute' },
    { name: 'briefing.pptx', bytes: readFileSync(join(REPO, 'test/fixtures/formats/briefing.pptx')), query: 'deckhands double mooring lines gale', answer: 'Deckhands double the mooring lines before a gale.' },
    { name: 'survey.pdf', bytes: pdf, query: 'narwhalite beacon keeper survey', answer: ANSWER('keeper') },
  ];
}

/** Where the marked answer is: in the window, and what it says; the scroll position; its colours in this scheme. */
const MARKED = `(() => {
  const el = document.querySelector('mark.answer') || document.querySelector('tr.match');
  if (!el) return null;
  const r = el.getBoundingClientRect();
  const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number).slice(0, 3);
  const lum = (c) => c.map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const cell = el.matches('tr') ? el.querySelector('td') : el;
  const s = getComputedStyle(cell);
  const card = getComputedStyle(document.querySelector('.card')).backgroundColor;
  const marks = el.matches('tr') ? [el] : [...document.querySelectorAll('mark.answer')];
  return { text: marks.map((m) => m.textContent).join('').replace(/\\s+/g, ' ').trim(), top: r.top, bottom: r.bottom, height: innerHeight, scrolled: scrollY,
    background: s.backgroundColor, card, textContrast: ratio(rgb(s.color), rgb(s.backgroundColor)), marked: s.backgroundColor !== card };
})()`;

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('"Open at this passage" lands on the passage, its answer marked'), () => {
  const suite = browserSuite();
  let user: TestUser;
  let page: Page;
  const csp: string[] = [];
  const docs = fixtures();

  beforeAll(async () => {
    user = await addUser(suite.d);
    const up = await uploadFiles(suite.d, user.apiKey, docs.map((x) => ({ name: x.name, bytes: x.bytes })), { query: '?wait=true&wait_timeout=300' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect((up.body.documents as { status: string }[]).map((x) => x.status)).toEqual(docs.map(() => 'ready'));
    page = watchCsp(await (await suite.browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage(), csp);
    await signIn(page, suite.d.url, user);
  }, 300_000);

  for (const doc of fixtures()) {
    it(`${doc.name}: the first result's passage opens scrolled to it, the answer marked in light and dark`, async () => {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${suite.d.url}/search?q=${encodeURIComponent(doc.query)}`);
      const first = page.locator('ol.results > li.result').first();
      expect(await first.locator('a.filename').textContent()).toBe(doc.name);
      // One link per passage, and the download is not among them.
      expect(await first.locator('.passage-result').first().locator('a').allTextContents()).toEqual(['Open at this passage']);
      await first.locator('a.at-match').first().click();
      await page.waitForLoadState('load');
      expect(new URL(page.url()).pathname).toMatch(doc.name.endsWith('.pdf') ? /^\/documents\/doc_\w+$/ : /^\/documents\/doc_\w+\/view$/);
      const light = await page.evaluate<any>(MARKED);
      expect(light, 'a marked answer').not.toBeNull();
      // The answer's unit, no more (a CSV row's cells are the row: its answer is one of them). Compared by letters and
      // digits: a mark ends at a text node, and the spaces between inline elements stay outside them.
      const letters = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, '').toLowerCase();
      if (doc.name.endsWith('.csv')) expect(light.text).toContain(doc.answer);
      else expect(letters(light.text)).toBe(letters(doc.marked ?? doc.answer));
      // Scrolled there: the page moved, and the mark is inside the window.
      expect(light.scrolled).toBeGreaterThan(100);
      expect(light.top).toBeGreaterThanOrEqual(0);
      expect(light.bottom).toBeLessThanOrEqual(light.height);
      expect(light.marked).toBe(true);
      expect(light.textContrast).toBeGreaterThanOrEqual(4.5);
      await page.emulateMedia({ colorScheme: 'dark' });
      const dark = await page.evaluate<any>(MARKED);
      expect(dark.marked).toBe(true);
      expect(dark.background).not.toBe(light.background);
      expect(dark.textContrast).toBeGreaterThanOrEqual(4.5);
      await page.emulateMedia({ colorScheme: 'light' });
    }, 60_000);
  }

  it('the CSV viewer is a table: every row, its columns, sortable by a column', async () => {
    const csv = (await api(suite.d, '/api/v1/documents?filename=berths', { token: user.apiKey })).body.documents[0].id;
    await page.goto(`${suite.d.url}/documents/${csv}/view`);
    expect(await page.locator('table.sheet-table thead th').allTextContents()).toEqual(['Row', 'vessel', 'berth', 'cargo']);
    expect(await page.locator('table.sheet-table tbody tr').count()).toBe(300);
    await page.click('table.sheet-table button.sort[data-column="1"]');
    expect(await page.locator('table.sheet-table thead th').nth(1).getAttribute('aria-sort')).toBe('ascending');
    expect(await page.locator('table.sheet-table tbody tr').first().locator('td').first().textContent()).toBe('Quasarlute');
    await page.click('table.sheet-table button.sort[data-column="1"]');
    expect(await page.locator('table.sheet-table tbody tr').first().locator('td').first().textContent()).toBe('Vessel 300');
  });

  it('slides are slides: one card each, in order, the opened one outlined', async () => {
    await page.goto(`${suite.d.url}/search?q=${encodeURIComponent('deckhands double mooring lines gale')}`);
    await page.locator('ol.results > li.result').first().locator('a.at-match').first().click();
    await page.waitForLoadState('load');
    expect(await page.locator('ol.slides > li.slide .slide-number').allTextContents()).toEqual(['Slide 1', 'Slide 2', 'Slide 3']);
    expect(await page.locator('li.slide[data-opened] .slide-number').textContent()).toBe('Slide 3');
  });

  it('a passage past the document page’s first window of text loads the window that holds it, marked', async () => {
    const long = `${Array.from({ length: 2000 }, (_, i) => `Paragraph ${i + 1} of the manual explains one routine of the workshop in plain words.`).join('\n\n')}\n\nThe last paragraph names the quasarlute valve.`;
    const up = await uploadFiles(suite.d, user.apiKey, [{ name: 'workshop.txt', bytes: Buffer.from(long) }], { query: '?wait=true&wait_timeout=300' });
    expect(up.status).toBe(200);
    const id = up.body.documents[0].id as string;
    // The text viewer shows the first 500 chunks; from the document page the same passage loads its window.
    const top = (await api(suite.d, '/api/v1/search', { token: user.apiKey, body: { query: 'quasarlute valve', limit: 1 } })).body.results[0];
    const chunk = (top.chunk_id as string).split(':')[1]!;
    expect(Number(chunk)).toBeGreaterThan(100);
    await page.goto(`${suite.d.url}/documents/${id}#chunk-${chunk}`);
    await page.waitForURL(/\?text=.+#chunk-\d+$/);
    await page.locator(`#chunk-${chunk}`).waitFor();
    expect(await page.locator(`#chunk-${chunk}`).textContent()).toContain('quasarlute');
    await page.goto(`${suite.d.url}/search?q=quasarlute+valve`);
    await page.locator('ol.results > li.result').first().locator('a.at-match').first().click();
    await page.waitForLoadState('load');
    expect((await page.evaluate<any>(MARKED)).text).toContain('The last paragraph names the quasarlute valve.');
    expect(csp).toEqual([]);
  }, 120_000);
});
