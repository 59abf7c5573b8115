import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM, signIn } from './browser.js';

/**
 * A refused Admin form, in Chromium: the page says why with what was typed, at the form's own address; reloading it
 * sends no POST (the browser asked to send the form again, and sent it), and shows the page afresh. So too the forms of
 * the signed-in pages (Settings → Account, a new project, a source, a label, a saved search, the Documents bulk form),
 * refused and done: each POST is answered with a 303 to a page, and a reload asks for that page again, posting nothing.
 */
describe.skipIf(!HAVE_CHROMIUM)(browserTitle('reloading after a refused Admin form posts nothing'), () => {
  // Folder sources may be added under this folder alone.
  const roots = mkdtempSync(join(tmpdir(), 'docsearch-prg-'));
  const suite = browserSuite(['--source-roots', roots]);
  let admin: TestUser;

  beforeAll(async () => {
    admin = await addUser(suite.d); // the first account: the admin
    await api(suite.d, '/api/v1/admin/groups', { token: admin.apiKey, body: { name: 'crew' } });
  });

  /** Fills and sends a form from `path`, then reloads: the POSTs the browser sent, and the page before and after. */
  async function refuseThenReload(page: Page, path: string, fill: (page: Page) => Promise<void>) {
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(new URL(r.url()).pathname);
    });
    await page.goto(suite.d.url + path);
    await fill(page);
    await page.waitForSelector('p.error[role=alert]');
    const refused = { url: page.url(), error: await page.locator('p.error[role=alert]').first().textContent() };
    const sent = [...posts];
    await page.reload();
    return { refused, sent, afterReload: posts.slice(sent.length), errorsAfter: await page.locator('p.error[role=alert]').count() };
  }

  it('Groups → New group, a name taken: said at /admin/groups; the reload posts nothing and the page is afresh', { timeout: 60_000 }, async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, admin);
      const seen = await refuseThenReload(page, '/admin/groups', async (p) => {
        await p.fill('input[name=name]', 'Crew');
        await p.click('button:has-text("Create group")');
      });
      expect(seen.sent).toEqual(['/admin/groups']);
      expect(seen.refused).toEqual({ url: `${suite.d.url}/admin/groups`, error: 'A group named "Crew" exists already.' });
      expect(seen.afterReload).toEqual([]);
      expect(seen.errorsAfter).toBe(0);
      expect(await page.inputValue('input[name=name]')).toBe('');
    } finally {
      await context.close();
    }
  });

  it('Users → Invite, an address without a dot in its domain: said at /admin/users#invite; the reload posts nothing', { timeout: 60_000 }, async () => {
    const context = await suite.browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, suite.d.url, admin);
      const seen = await refuseThenReload(page, '/admin/users', async (p) => {
        await p.fill('form[action="/admin/users/invite"] [name=email]', 'carol@example');
        await p.click('form[action="/admin/users/invite"] button[type=submit]');
      });
      expect(seen.sent).toEqual(['/admin/users/invite']);
      expect(seen.refused.url).toBe(`${suite.d.url}/admin/users#invite`);
      expect(seen.refused.error).toBe('"carol@example" is not an e-mail address: the domain after the @, "example", has no dot (as in example.com).');
      expect(seen.afterReload).toEqual([]);
      expect(seen.errorsAfter).toBe(0);
      expect((await api(suite.d, '/api/v1/admin/invitations', { token: admin.apiKey })).body.invitations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  /**
   * The pages the browser asked for (method, path and query, status) while `send` sent a form from `path`, then while
   * it reloaded the page it ended on; and what the page said (its alert, or its notice) before and after the reload.
   */
  async function sendThenReload(page: Page, path: string, send: (page: Page) => Promise<void>) {
    const asked: string[] = [];
    page.on('response', (r) => {
      if (r.request().resourceType() !== 'document') return;
      const url = new URL(r.url());
      asked.push(`${r.request().method()} ${url.pathname}${url.search} ${r.status()}`);
    });
    await page.goto(suite.d.url + path);
    asked.length = 0;
    await send(page);
    await page.waitForSelector('main');
    const said = async () => (await page.locator('p.error[role=alert], .flash[role=status]').allTextContents()).join(' ');
    const sent = { asked: [...asked], said: await said(), url: page.url(), heading: await page.locator('h1').textContent() };
    asked.length = 0;
    await page.reload();
    return { sent, reloaded: { asked: [...asked], said: await said() }, heading: await page.locator('h1').textContent() };
  }

  describe('the forms of the signed-in pages, refused and done', () => {
    let ann: TestUser;
    let project: string;
    let doc: string;
    let page: Page;

    beforeAll(async () => {
      ann = await addUser(suite.d);
      project = (await api(suite.d, '/api/v1/projects', { token: ann.apiKey, body: { name: 'Harbour' } })).body.id as string;
      const up = await uploadFiles(suite.d, ann.apiKey, [{ name: 'tides.txt', bytes: Buffer.from('The spring tides reach the quay twice a month.') }], { projectId: project, query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      doc = up.body.documents[0].id as string;
      page = await (await suite.browser.newContext()).newPage();
      await signIn(page, suite.d.url, ann);
    });

    it('Settings → Account: a wrong current password (401), then a change made; each reload posts nothing', { timeout: 60_000 }, async () => {
      const change = (current: string) => async (p: Page) => {
        await p.fill('[name=current_password]', current);
        await p.fill('[name=new_password]', ann.password);
        await p.fill('[name=new_password_again]', ann.password);
        await p.click('button:has-text("Change password")');
      };
      const refused = await sendThenReload(page, '/settings/account', change('not my password'));
      expect(refused.sent.asked).toEqual(['POST /settings/account/password 303', 'GET /settings/account 401']);
      expect(refused.sent.said).toBe('The current password is not right.');
      expect(refused.reloaded).toEqual({ asked: ['GET /settings/account 200'], said: '' });
      const done = await sendThenReload(page, '/settings/account', change(ann.password));
      expect(done.sent.asked).toEqual(['POST /settings/account/password 303', 'GET /settings/account 200']);
      expect(done.sent.said).toBe('Password changed.');
      expect(done.reloaded).toEqual({ asked: ['GET /settings/account 200'], said: '' });
    });

    it('a new project: a name taken (409), then one made; each reload posts nothing', { timeout: 60_000 }, async () => {
      const create = (name: string) => async (p: Page) => {
        await p.fill('form[action="/projects"] [name=name]', name);
        await p.click('button:has-text("Create project")');
      };
      const refused = await sendThenReload(page, '/projects', create('harbour'));
      expect(refused.sent.asked).toEqual(['POST /projects 303', 'GET /projects 409']);
      expect(refused.sent.said).toBe('A project named “harbour” already exists.');
      expect(refused.reloaded).toEqual({ asked: ['GET /projects 200'], said: '' });
      expect(await page.inputValue('form[action="/projects"] [name=name]')).toBe('');
      const done = await sendThenReload(page, '/projects', create('Quay'));
      const made = new URL(done.sent.url).pathname;
      expect(made).toMatch(/^\/projects\/prj_/);
      expect(done.sent.asked).toEqual(['POST /projects 303', `GET ${made} 200`]);
      expect(done.reloaded.asked).toEqual([`GET ${made} 200`]);
      const names = ((await api(suite.d, '/api/v1/projects', { token: ann.apiKey })).body.projects as { name: string }[]).map((x) => x.name);
      expect(names.filter((n) => n === 'Quay')).toHaveLength(1);
    });

    it('a source: a folder outside the roots (400), then one inside; each reload posts nothing', { timeout: 60_000 }, async () => {
      const inside = join(roots, 'notes');
      mkdirSync(inside, { recursive: true });
      const base = `/projects/${project}/sources`;
      const add = (url: string) => async (p: Page) => {
        await p.fill('#add-form [name=url]', url);
        await p.click('button:has-text("Add source")');
      };
      const refused = await sendThenReload(page, `${base}?kind=folder`, add('file:///etc'));
      expect(refused.sent.asked).toEqual([`POST ${base} 303`, `GET ${base}?kind=folder 400`]);
      expect(refused.sent.said).toMatch(/^The source was not added: /);
      expect(refused.reloaded).toEqual({ asked: [`GET ${base}?kind=folder 200`], said: '' });
      const done = await sendThenReload(page, `${base}?kind=folder`, add(`file://${inside}`));
      expect(done.sent.asked).toEqual([`POST ${base} 303`, `GET ${base} 200`]);
      expect(done.sent.said).toBe(`Added file://${inside}: its first pass is under way.`);
      expect(done.reloaded).toEqual({ asked: [`GET ${base} 200`], said: '' });
    });

    it('a label: one added, then the same name again (409); each reload posts nothing', { timeout: 60_000 }, async () => {
      const base = `/projects/${project}/labels`;
      const add = async (p: Page) => {
        await p.fill(`form[action="${base}"] [name=name]`, 'urgent');
        await p.click('button:has-text("Add label")');
      };
      const done = await sendThenReload(page, base, add);
      expect(done.sent.asked).toEqual([`POST ${base} 303`, `GET ${base} 200`]);
      expect(done.sent.said).toBe('Added the label “urgent”.');
      expect(done.reloaded).toEqual({ asked: [`GET ${base} 200`], said: '' });
      const refused = await sendThenReload(page, base, add);
      expect(refused.sent.asked).toEqual([`POST ${base} 303`, `GET ${base} 409`]);
      expect(refused.sent.said).toMatch(/urgent/);
      expect(refused.reloaded).toEqual({ asked: [`GET ${base} 200`], said: '' });
    });

    it('a saved search: saved, then the same name again (409); each reload posts nothing', { timeout: 60_000 }, async () => {
      const save = async (p: Page) => {
        await p.click('#save-search summary');
        await p.fill('#save-search [name=name]', 'Tide watch');
        await p.click('#save-search button[type=submit]');
      };
      const done = await sendThenReload(page, '/search?q=tides', save);
      expect(done.sent.asked).toEqual(['POST /search/save 303', 'GET /search?q=tides 200']);
      expect(done.sent.said).toBe('Saved “Tide watch”.');
      expect(done.reloaded).toEqual({ asked: ['GET /search?q=tides 200'], said: '' });
      const refused = await sendThenReload(page, '/search?q=tides', save);
      expect(refused.sent.asked).toEqual(['POST /search/save 303', 'GET /search?q=tides 409']);
      expect(refused.sent.said).toMatch(/^Not saved: /);
      expect(refused.reloaded).toEqual({ asked: ['GET /search?q=tides 200'], said: '' });
    });

    it('the Documents bulk form: labels refused (400), labels added, a delete asked; each reload posts nothing', { timeout: 60_000 }, async () => {
      const bulk = (button: string, labels = '') => async (p: Page) => {
        await p.check(`input[name=ids][value="${doc}"]`);
        await p.fill('#bulk [name=labels]', labels);
        await p.click(`#bulk button:has-text("${button}")`);
      };
      const refused = await sendThenReload(page, '/documents', bulk('Add labels'));
      expect(refused.sent.asked).toEqual(['POST /documents/bulk 303', 'GET /documents 400']);
      expect(refused.sent.said).toBe('Name the labels to add or remove.');
      expect(refused.reloaded).toEqual({ asked: ['GET /documents 200'], said: '' });
      const done = await sendThenReload(page, '/documents', bulk('Add labels', 'quay'));
      expect(done.sent.asked).toEqual(['POST /documents/bulk 303', 'GET /documents 200']);
      expect(done.sent.said).toBe('Labelled 1 document “quay”.');
      expect(done.reloaded).toEqual({ asked: ['GET /documents 200'], said: '' });
      const asked = await sendThenReload(page, '/documents', bulk('Delete selected…'));
      // The confirmation, at the list's address; its reload is the list.
      expect(asked.sent.asked).toEqual(['POST /documents/bulk 303', 'GET /documents 200']);
      expect(asked.sent.heading).toBe('Delete “tides.txt”?');
      expect(asked.reloaded.asked).toEqual(['GET /documents 200']);
      expect(asked.heading).toBe('Documents');
      expect((await api(suite.d, `/api/v1/documents/${doc}`, { token: ann.apiKey })).body.labels).toEqual(['quay']);
    });
  });
});
