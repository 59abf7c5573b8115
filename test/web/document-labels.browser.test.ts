/**
 * A document page's label editor, in Chromium: each of the project's labels is a box to tick or untick, beside a field
 * for new names. Its one field of names separated by commas with a datalist completed the whole field, so once one
 * label was typed the project's others were no longer offered. The route still takes `labels` typed as scripts send it.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { FOLD_LABELS_PAST } from '../../src/web/pages/document.js';
import { loggedIn } from '../server/web-client.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

// Spaces, accents, an emoji and `&`: names a person types, each one label (a label has no comma); one of 64 characters
// without a space, which must wrap on a phone; one a JSON array would start with, which the typed field reads as JSON.
const CARRIED = ['to do', 'unpaid'];
const OTHERS = ['café crème', '🎉 fête', 'Q&A', '[draft]', `Hafenbehörde-${'Sitzungsprotokoll'.repeat(2)}-Protokoll-26`];

describe.skipIf(!HAVE_CHROMIUM)(browserTitle("a document's labels: the project's labels to tick, new ones to type"), () => {
  const suite = browserSuite();
  let ada: TestUser;
  let project: string;
  beforeAll(async () => {
    ada = await addUser(suite.d);
    project = ((await api(suite.d, '/api/v1/projects', { token: ada.apiKey })).body.projects as { id: string; is_default: boolean }[]).find((p) => p.is_default)!.id;
  });

  /** A new document in Ada's project carrying CARRIED, the project's labels being those and OTHERS. */
  async function labelled(name: string): Promise<string> {
    const { d } = suite;
    for (const n of OTHERS) expect([201, 409]).toContain((await api(d, `/api/v1/projects/${project}/labels`, { token: ada.apiKey, body: { name: n } })).status);
    const up = await uploadFiles(d, ada.apiKey, [{ name, bytes: Buffer.from('The spring tides reach the quay twice a month.') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = up.body.documents[0].id as string;
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: ada.apiKey, body: { labels: CARRIED } })).status).toBe(200);
    return id;
  }

  const labelsOf = async (id: string) => ((await api(suite.d, `/api/v1/documents/${id}`, { token: ada.apiKey })).body.labels as string[]).toSorted();
  const box = (page: Page, name: string) => page.getByRole('checkbox', { name, exact: true });
  /** Does `act` (which submits the labels form) and waits for the page the form's answer leads back to. */
  async function saved(page: Page, act: Promise<void>): Promise<void> {
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/labels'));
    await act;
    expect((await posted).status()).toBe(303);
    // The page it leads back to is the same address: its flash says it is there.
    await expect.poll(() => page.locator('main').textContent()).toMatch(/is labelled|has no labels now/);
  }

  it('an editor adds two of the project\'s labels and a new one and takes one off, from the keyboard; the document carries exactly those', async () => {
    const id = await labelled('tides.txt');
    const page = await (await suite.browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    try {
      await signIn(page, suite.d.url, ada);
      await page.goto(`${suite.d.url}/documents/${id}`);
      // Every label of the project is offered at once, those it carries ticked.
      for (const n of [...CARRIED, ...OTHERS]) expect(await box(page, n).isChecked(), n).toBe(CARRIED.includes(n));
      await box(page, 'unpaid').press('Space');
      await box(page, 'café crème').press('Space');
      await box(page, '🎉 fête').press('Space');
      // After the last box, Tab reaches the field for new names; Enter there saves.
      await page.locator('#labels input[type=checkbox]').last().focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | null>(`document.activeElement?.getAttribute('name') ?? null`)).toBe('labels');
      await page.keyboard.type('Zoë & Co');
      await saved(page, page.keyboard.press('Enter'));
      const expected = ['café crème', 'to do', 'Zoë & Co', '🎉 fête'].toSorted();
      expect(await labelsOf(id)).toEqual(expected);
      expect((await page.$$eval('#doc-labels a', (as) => as.map((a) => a.textContent ?? ''))).toSorted()).toEqual(expected);
      // The new name is one of the project's labels now, a box of its own, ticked.
      expect(await box(page, 'Zoë & Co').isChecked()).toBe(true);
      expect(await box(page, 'unpaid').isChecked()).toBe(false);
      // With the mouse: a click on a label's name ticks its box.
      await page.locator('#labels label.check', { hasText: 'unpaid' }).click();
      await saved(page, page.getByRole('button', { name: 'Save labels' }).click());
      expect(await labelsOf(id)).toEqual([...expected, 'unpaid'].toSorted());
    } finally {
      await page.context().close();
    }
  });

  it('on a phone, a tap on a label ticks it, nothing is wider than the screen; a viewer sees the labels and no boxes', async () => {
    const id = await labelled('quay.txt');
    const page = await (await suite.browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })).newPage();
    try {
      await signIn(page, suite.d.url, ada);
      await page.goto(`${suite.d.url}/documents/${id}`);
      expect(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= document.documentElement.clientWidth`)).toBe(true);
      // The long label wraps, and its box keeps its size (flex shrank it).
      expect(new Set(await page.locator('#labels input[type=checkbox]').evaluateAll((boxes) => boxes.map((b) => Math.round(b.getBoundingClientRect().width))))).toEqual(new Set([18]));
      await page.locator('#labels label.check', { hasText: 'Q&A' }).tap();
      await page.locator('#labels label.check', { hasText: '[draft]' }).tap();
      await page.locator('#labels label.check', { hasText: 'to do' }).tap();
      await saved(page, page.getByRole('button', { name: 'Save labels' }).tap());
      expect(await labelsOf(id)).toEqual(['Q&A', '[draft]', 'unpaid'].toSorted());
    } finally {
      await page.context().close();
    }
    const bob = await addUser(suite.d);
    expect((await api(suite.d, `/api/v1/projects/${project}/members`, { token: ada.apiKey, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
    const viewed = (await (await loggedIn(suite.d, bob)).get(`/documents/${id}`)).text;
    expect(viewed).toContain('title="Documents labelled Q&amp;A"');
    expect(viewed).not.toContain('id="labels"');
    expect(viewed).not.toContain('type="checkbox"');
  });

  it('a script posts `labels` separated by commas as before; ticked `label`s and typed `labels` together; a refusal keeps both', async () => {
    const id = await labelled('pier.txt');
    const web = await loggedIn(suite.d, ada);
    await web.get(`/documents/${id}`);
    expect((await web.post(`/documents/${id}/labels`, { _csrf: web.csrf, labels: 'Q&A, café crème' })).status).toBe(303);
    expect(await labelsOf(id)).toEqual(['Q&A', 'café crème'].toSorted());
    expect((await web.post(`/documents/${id}/labels`, { _csrf: web.csrf, label: ['to do', '[draft]'], labels: 'TO DO, pier' })).status).toBe(303);
    expect(await labelsOf(id)).toEqual(['[draft]', 'pier', 'to do'].toSorted());
    const long = 'l'.repeat(65);
    const refused = await web.submit(`/documents/${id}/labels`, { _csrf: web.csrf, label: ['Q&A'], labels: `quay, ${long}` });
    // Shown after a 303 to the document's page (Post/Redirect/Get), its status kept.
    expect(refused.redirectedFrom).toMatchObject({ status: 303, location: `/documents/${id}` });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(`Labels not changed: The label “${long}” must be at most 64 characters.`);
    expect(refused.text).toContain(`<input type="checkbox" name="label" value="Q&amp;A" checked>`);
    expect(refused.text).toContain(`<input type="checkbox" name="label" value="[draft]">`);
    expect(refused.text).toMatch(new RegExp(`<input type="text" name="labels"[^>]* value="quay, ${long}"`));
    expect(await labelsOf(id)).toEqual(['[draft]', 'pier', 'to do'].toSorted());
    expect((await web.post(`/documents/${id}/labels`, { _csrf: web.csrf })).status).toBe(303);
    expect(await labelsOf(id)).toEqual([]);
  });

  it("a project of many labels folds those the document does not carry under a summary, open when one of them is ticked", async () => {
    const { d } = suite;
    const many = ((await api(d, '/api/v1/projects', { token: ada.apiKey, body: { name: 'Harbour archive' } })).body as { id: string }).id;
    const names = Array.from({ length: FOLD_LABELS_PAST + 2 }, (_, i) => `berth ${String(i).padStart(2, '0')}`);
    for (const name of names) expect((await api(d, `/api/v1/projects/${many}/labels`, { token: ada.apiKey, body: { name } })).status).toBe(201);
    const up = await uploadFiles(d, ada.apiKey, [{ name: 'berths.txt', bytes: Buffer.from('Berths are assigned by the harbour master.') }], { query: '?wait=true', projectId: many });
    const id = up.body.documents[0].id as string;
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: ada.apiKey, body: { labels: ['berth 00', 'customs'] } })).status).toBe(200);
    const web = await loggedIn(d, ada);
    const page = (await web.get(`/documents/${id}`)).text;
    const [carried, folded] = page.split('<details class="more-labels">');
    expect(folded, 'the other labels are folded').toBeDefined();
    expect(folded).toMatch(new RegExp(`^<summary>The project's ${FOLD_LABELS_PAST + 1} other labels</summary>`));
    for (const n of ['berth 00', 'customs']) expect(carried).toContain(`value="${n}" checked>`);
    for (const n of names.slice(1)) expect(folded).toContain(`value="${n}">`);
    // Refused with a folded label ticked: the fold comes back open, the box ticked.
    const refused = await web.submit(`/documents/${id}/labels`, { _csrf: web.csrf, label: ['berth 07'], labels: 'l'.repeat(65) });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<details class="more-labels" open>');
    expect(refused.text).toContain('value="berth 07" checked>');
  });
});
