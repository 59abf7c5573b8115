/**
 * WCAG 2.1 A and AA on every page a person reaches, as axe-core judges it in Chromium (every impact, not only the
 * serious ones every-page.browser.test.ts fails on; no rule turned off), light and dark, and what axe does not judge:
 * a field's edge against what is behind it (1.4.11), a button's words under the pointer (1.4.3), a document's text in
 * its own language (3.1.2), what script says after an action inside a live region (4.1.3), a one-key shortcut a person
 * can turn off (2.1.4); and the main flows done with the keyboard alone, the focus visible at each step.
 * One daemon, one browser, one tab per person, pages visited in one go.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizePath } from '../auth/oauth-flow.js';
import { enrolTotp } from '../auth/two-factor/totp.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { addUser, api, CHROMIUM, CHROMIUM_ARGS, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { loggedIn, type WebClient } from '../server/web-client.js';
import { componentsPage } from '../../src/web/pages/components.js';
import { axeViolations, browserTitle, HAVE_CHROMIUM } from './browser.js';

const WCAG21_AA = { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } as const;
const PASSWORD = 'correct horse battery staple';
const GERMAN =
  'Der Leuchtturmwärter schrieb jeden Morgen das Wetter in sein Buch. Bei Sturm blieb er die ganze Nacht wach und ' +
  'hielt die Lampe am Brennen, damit die Schiffe sicher in den Hafen fanden. Im Winter war das Eis auf der Treppe ' +
  'gefährlich, und er streute Sand, bevor er hinaufstieg.\n';

type Who = 'ada' | 'bob' | 'nobody' | 'carol';

interface World {
  d: Daemon;
  base: string;
  ada: TestUser;
  bob: TestUser;
  project: string;
  /** A second project of Ada's (the first, her default, can't be deleted). */
  other: string;
  pdf: string;
  txt: string;
  md: string;
  /** A text and a Markdown file in German. */
  deTxt: string;
  deMd: string;
  trashed: string;
  labelId: string;
  sourceId: string;
  keyId: string;
  clientId: string;
  redirect: string;
  groupId: string;
  bobId: string;
  savedId: string;
  inviteToken: string;
  resetToken: string;
}

/** A page: who opens it, where, the status it answers, and what a person does on it before it is judged. */
interface PageCase {
  name: string;
  as: Who;
  path: (w: World) => string;
  status?: number;
  then?: (page: Page, w: World) => Promise<void>;
}

const PAGES: PageCase[] = [
  { name: 'sign-in', as: 'nobody', path: () => '/login' },
  { name: 'sign-in refused', as: 'nobody', path: () => '/login', then: async (page) => {
    await page.fill('input[name=email]', 'nobody@example.com');
    await page.fill('input[name=password]', 'not the password');
    await page.click('form[action="/login"] button[type=submit]');
    await page.waitForSelector('.error');
  } },
  { name: 'sign-in second step', as: 'carol', path: () => '/login/verify' },
  { name: 'forgot password', as: 'nobody', path: () => '/forgot-password' },
  { name: 'reset password', as: 'nobody', path: (w) => `/reset-password?token=${w.resetToken}` },
  { name: 'reset password refused', as: 'nobody', path: (w) => `/reset-password?token=${w.resetToken}`, then: async (page) => {
    await page.fill('input[name=password]', 'a long new password for the keeper');
    await page.fill('input[name=password2]', 'another long password, not the same');
    await page.click('form[action="/reset-password"] button[type=submit]');
    await page.waitForSelector('.error');
  } },
  { name: 'invitation', as: 'nobody', path: (w) => `/invite?token=${w.inviteToken}` },
  { name: 'not found, signed out', as: 'nobody', path: () => '/reset-password?token=nope', status: 404 },
  { name: 'search, nothing asked', as: 'ada', path: () => '/' },
  { name: 'search with results and facets', as: 'ada', path: () => '/search?q=lighthouse+keeper' },
  { name: 'search with a filter chip, saving it', as: 'ada', path: () => '/search?q=lighthouse+keeper&labels=unpaid', then: (page) => page.click('#save-search summary') },
  { name: 'search by passages', as: 'ada', path: () => '/search?q=lighthouse&view=passages' },
  { name: 'search without results', as: 'ada', path: () => '/search?q=xyzzyplugh+frobnicate&mode=keyword' },
  { name: 'search, weak matches', as: 'ada', path: () => '/search?q=xyzzyplugh+frobnicate' },
  { name: 'saved search delete', as: 'ada', path: (w) => `/search/saved/${w.savedId}/delete?back=%2Fsearch` },
  { name: 'documents', as: 'ada', path: () => '/documents' },
  { name: 'documents, filtered by label', as: 'ada', path: () => '/documents?labels=unpaid&type=txt' },
  { name: 'documents, none match', as: 'ada', path: () => '/documents?filename=nothing-is-called-this' },
  { name: 'documents, two selected', as: 'ada', path: () => '/documents', then: async (page) => {
    for (const box of (await page.$$('#bulk input[name=ids]')).slice(0, 2)) await box.check();
    await page.click('#bulk summary');
  } },
  { name: 'documents as a viewer', as: 'bob', path: () => '/documents' },
  { name: 'documents, upload unfolded', as: 'ada', path: () => '/documents', then: (page) => page.click('details.upload-more > summary') },
  { name: 'document (PDF)', as: 'ada', path: (w) => `/documents/${w.pdf}` },
  { name: 'document as a viewer', as: 'bob', path: (w) => `/documents/${w.txt}` },
  { name: 'viewer (text)', as: 'ada', path: (w) => `/documents/${w.txt}/view` },
  { name: 'viewer (Markdown)', as: 'ada', path: (w) => `/documents/${w.md}/view` },
  { name: 'document in German', as: 'ada', path: (w) => `/documents/${w.deTxt}`, then: (page) => page.click('#text summary') },
  { name: 'viewer (German text)', as: 'ada', path: (w) => `/documents/${w.deTxt}/view` },
  { name: 'viewer (German Markdown)', as: 'ada', path: (w) => `/documents/${w.deMd}/view` },
  { name: 'document delete', as: 'ada', path: (w) => `/documents/${w.txt}/delete` },
  { name: 'trash', as: 'ada', path: () => '/trash' },
  { name: 'trash purge', as: 'ada', path: (w) => `/trash/${w.trashed}/purge` },
  { name: 'projects', as: 'ada', path: () => '/projects' },
  { name: 'project, uploading', as: 'ada', path: (w) => `/projects/${w.project}`, then: async (page) => {
    await page.setInputFiles('#pick-files', [
      { name: 'tide table.txt', mimeType: 'text/plain', buffer: Buffer.from('High water at the pier at noon.\n') },
      { name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) },
    ]);
    await page.waitForSelector('#upload-list li:nth-child(2)');
  } },
  { name: 'project as a viewer', as: 'bob', path: (w) => `/projects/${w.project}` },
  { name: 'project members', as: 'ada', path: (w) => `/projects/${w.project}/sharing` },
  { name: 'project settings', as: 'ada', path: (w) => `/projects/${w.project}/settings` },
  { name: 'project delete', as: 'ada', path: (w) => `/projects/${w.other}/delete` },
  { name: 'sources', as: 'ada', path: (w) => `/projects/${w.project}/sources` },
  { name: 'source add (S3)', as: 'ada', path: (w) => `/projects/${w.project}/sources?kind=s3` },
  { name: 'source edit', as: 'ada', path: (w) => `/projects/${w.project}/sources/${w.sourceId}/edit` },
  { name: 'labels', as: 'ada', path: (w) => `/projects/${w.project}/labels` },
  { name: 'labels as a viewer', as: 'bob', path: (w) => `/projects/${w.project}/labels` },
  { name: 'label delete', as: 'ada', path: (w) => `/projects/${w.project}/labels/${w.labelId}/delete` },
  { name: 'notices', as: 'ada', path: () => '/notices' },
  { name: 'settings: API keys', as: 'ada', path: () => '/settings/keys' },
  { name: 'settings: a new API key, copied', as: 'ada', path: () => '/settings/keys', then: async (page) => {
    await page.fill('input[name=name]', 'Copied once');
    await page.click('form[action="/settings/keys"] button[type=submit]');
    await page.waitForSelector('#new-key');
    await page.click('button.copy');
    await page.waitForSelector('button.copy:has-text("Copied")');
  } },
  { name: 'settings: key revoke', as: 'ada', path: (w) => `/settings/keys/${w.keyId}/revoke` },
  { name: 'settings: applications', as: 'ada', path: () => '/settings/applications' },
  { name: 'settings: connected apps', as: 'ada', path: () => '/settings/connected' },
  { name: 'settings: account', as: 'ada', path: () => '/settings/account' },
  { name: 'settings: security (2FA, passkeys, sessions)', as: 'ada', path: () => '/settings/security', then: (page) => page.click('#passkeys summary') },
  { name: 'settings: setting up an authenticator app', as: 'ada', path: () => '/settings/security', then: async (page) => {
    await page.click('form[action="/settings/security/totp/start"] button');
    await page.waitForSelector('img.qr');
  } },
  { name: 'settings: confirm access', as: 'ada', path: () => '/settings/confirm?return_to=/settings/security' },
  { name: 'consent', as: 'ada', path: (w) => authorizePath({ client_id: w.clientId, redirect_uri: w.redirect, response_type: 'code', state: 'x' }) },
  { name: 'admin: users', as: 'ada', path: () => '/admin/users' },
  { name: 'admin: user delete', as: 'ada', path: (w) => `/admin/users/${w.bobId}/delete` },
  { name: 'admin: groups', as: 'ada', path: () => '/admin/groups' },
  { name: 'admin: group', as: 'ada', path: (w) => `/admin/groups/${w.groupId}` },
  { name: 'admin: sharing', as: 'ada', path: () => '/admin/sharing' },
  { name: 'admin: sources', as: 'ada', path: () => '/admin/sources' },
  { name: 'admin: audit log', as: 'ada', path: () => '/admin/audit' },
  { name: 'admin: mail', as: 'ada', path: () => '/admin/mail' },
  { name: 'not found', as: 'ada', path: () => '/documents/doc_000000000000000000000', status: 404 },
  { name: 'not allowed (admin pages as a viewer)', as: 'bob', path: () => '/admin/users', status: 403 },
];

/** In the page: WCAG's contrast of two colours, and the opaque colour behind an element. */
const COLOURS = String.raw`
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const contrast = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p); return (a + 0.05) / (b + 0.05); };
  const opaque = (c) => c.length === 3 || (c.length === 4 && c[3] > 0.5);
  const behind = (el) => { for (let a = el; a; a = a.parentElement) { const c = rgb(getComputedStyle(a).backgroundColor); if (opaque(c)) return c.slice(0, 3); } return [255, 255, 255]; };
`;

/**
 * WCAG 1.4.11: a field (text, select, date…) is found by its edge or by its fill, so one of them stands 3:1 from
 * what is behind the field. axe leaves non-text contrast alone.
 */
const FIELD_EDGES = String.raw`(() => {
  ${COLOURS}
  const out = [];
  for (const f of document.querySelectorAll('input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=file]), select, textarea')) {
    const r = f.getBoundingClientRect();
    const s = getComputedStyle(f);
    if (r.width < 2 || r.height < 2 || s.visibility === 'hidden') continue;
    const back = behind(f.parentElement);
    const fill = rgb(s.backgroundColor);
    const edge = parseFloat(s.borderTopWidth) > 0 && s.borderTopStyle !== 'none' ? contrast(rgb(s.borderTopColor).slice(0, 3), back) : 0;
    const filled = opaque(fill) ? contrast(fill.slice(0, 3), back) : 0;
    if (Math.max(edge, filled) < 3) out.push('field edge (1.4.11): ' + f.tagName.toLowerCase() + (f.name ? '[name=' + f.name + ']' : '') + ' has an edge of ' + edge.toFixed(2) + ':1 and a fill of ' + filled.toFixed(2) + ':1 against what is behind it');
  }
  return [...new Set(out)];
})()`;

/** axe's WCAG 2.1 A/AA findings and the fields' edges on the page as drawn, light and dark (in dark, contrast is what changes). */
async function wcagProblems(page: Page): Promise<string[]> {
  const out: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const axe = await axeViolations(page, { only: scheme === 'light' ? WCAG21_AA : { type: 'rule', values: ['color-contrast'] }, every: true });
    out.push(...[...axe, ...(await page.evaluate<string[]>(FIELD_EDGES))].map((v) => `${scheme}: ${v}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return out;
}

/**
 * The element that has the focus, and whether it shows it: an outline (or the ring app.css draws around a picker's
 * label) at least 2 px wide, 3:1 against what is behind it.
 */
const FOCUS = String.raw`(() => {
  ${COLOURS}
  const el = document.activeElement;
  if (!el || el === document.body) return { what: 'nothing', visible: false };
  const ring = (e) => { const s = getComputedStyle(e); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 && contrast(rgb(s.outlineColor).slice(0, 3), behind(e.parentElement)) >= 3; };
  const holder = el.closest('label');
  const what = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' + (el.getAttribute('aria-label') || el.textContent || el.value || '').trim().slice(0, 40) + '"';
  return { what, visible: ring(el) || (holder !== null && ring(holder)) };
})()`;

/** Presses Tab until the focus is on `selector` (at most `max` times), each focused element showing its focus. */
async function tabTo(page: Page, selector: string, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const focus = await page.evaluate<{ what: string; visible: boolean }>(FOCUS);
    expect(focus.visible, `the focus on ${focus.what} is not visible`).toBe(true);
    if (await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
  }
  throw new Error(`${max} presses of Tab did not reach ${selector}`);
}

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('every page passes axe-core (WCAG 2.1 A/AA); the main flows work from the keyboard'), () => {
  let browser: Browser;
  const w = {} as World;
  const tabs = new Map<Who, Page>();
  /** The setup page is judged while the library is made (it is gone once the first account is), and failed below. */
  let setupProblems: string[] | undefined;

  beforeAll(async () => {
    // localhost, so that the server offers passkeys (a host name on http is allowed there).
    const port = await freePort();
    w.base = `http://localhost:${port}`;
    // One document processed at a time, so an upload behind a backlog is seen in the queue before it is ready.
    w.d = await startDaemon({ args: ['--port', String(port), '--public-url', w.base, '--ingest-workers', '1'] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (!w.d) return;
    expect(await w.d.stop()).toBe(0);
    removeDir(w.d.dataDir);
  });

  async function tabFor(who: Who, web?: WebClient): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    if (web) await context.addCookies([...web.cookies].map(([name, value]) => ({ name, value, url: w.base })));
    const page = await context.newPage();
    tabs.set(who, page);
    return page;
  }

  it('the setup page, then a library with every kind of page in it', async () => {
    const { d, base } = w;
    const nobody = await tabFor('nobody');
    await nobody.goto(base + new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search);
    setupProblems = await wcagProblems(nobody);
    await nobody.fill('input[name=email]', 'ada@example.com');
    await nobody.fill('input[name=password]', PASSWORD);
    await nobody.fill('input[name=password2]', PASSWORD);
    await nobody.click('button[type=submit]');
    await nobody.waitForURL(/\/documents$/);
    await nobody.context().clearCookies();

    const at = { ...d, url: base };
    const web = await loggedIn(at, { email: 'ada@example.com', password: PASSWORD, apiKey: '' });
    await web.get('/settings/keys');
    const made = await web.submit('/settings/keys', { _csrf: web.csrf, name: 'Nightly upload', scopes: ['read:documents', 'write:documents', 'search'], expires: '90' });
    w.ada = { email: 'ada@example.com', password: PASSWORD, apiKey: /id="new-key" readonly value="([^"]+)"/.exec(made.text)![1]! };
    const token = w.ada.apiKey;
    w.keyId = (await api(d, '/api/v1/keys', { token })).body.keys[0].id;

    w.bob = await addUser(d, { email: 'bob@example.com' });
    w.project = ((await api(d, '/api/v1/projects', { token })).body.projects as { id: string; is_default: boolean }[]).find((p) => p.is_default)!.id;
    w.other = (await api(d, '/api/v1/projects', { token, body: { name: 'Harbour office' } })).body.id;
    expect((await api(d, `/api/v1/projects/${w.project}/members`, { token, body: { email: 'bob@example.com', role: 'viewer' } })).status).toBe(201);
    w.bobId = ((await api(d, '/api/v1/admin/users', { token })).body.users as { id: string; email: string }[]).find((u) => u.email === 'bob@example.com')!.id;

    const pdf = makePdf([[{ lines: ['The lighthouse keeper logged the storm at dawn.'] }], [{ lines: ['Page two lists the ships that passed the cape.'] }]]);
    const files: [string, Buffer][] = [
      ['lighthouse logbook.pdf', pdf],
      ['keeper.txt', Buffer.from('The lighthouse keeper whistles when eagles circle over the scree.\n')],
      ['notes.md', Buffer.from('# Harbour notes\n\nThe lighthouse keeper mends the lamp.\n\n- oil\n- wicks\n')],
      ['broken.pdf', Buffer.from('%PDF-1.7\nthis is not a PDF at all\n')],
      ['old minutes.txt', Buffer.from('The board approved the budget for the new pier.\n')],
      ['leuchtturm.txt', Buffer.from(GERMAN)],
      ['hafen.md', Buffer.from(`# Hafennotizen\n\n${GERMAN}`)],
    ];
    const form = new FormData();
    form.append('project_id', w.project);
    for (const [name, bytes] of files) form.append('file', new Blob([bytes]), name);
    const up = await fetch(`${d.url}/api/v1/upload?wait=true&wait_timeout=300`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const docs = ((await up.json()) as { documents: { id: string }[] }).documents.map((x) => x.id);
    [w.pdf, w.txt, w.md, , w.trashed, w.deTxt, w.deMd] = docs as [string, string, string, string, string, string, string];
    for (const id of [w.deTxt, w.deMd]) expect((await api(d, `/api/v1/documents/${id}`, { token })).body.language, 'the German files are told German').toBe('de');
    for (const id of [w.pdf, w.txt]) expect((await api(d, `/api/v1/documents/${id}`, { token, method: 'PATCH', body: { labels: ['unpaid', 'harbour'] } })).status).toBe(200);
    w.labelId = ((await api(d, `/api/v1/projects/${w.project}/labels`, { token })).body.labels as { id: string; name: string }[]).find((l) => l.name === 'unpaid')!.id;
    expect((await api(d, `/api/v1/documents/${w.trashed}`, { token, method: 'DELETE' })).status).toBeLessThan(300);

    // A source whose host does not exist (a card in its failed state), a saved search.
    w.sourceId = (await api(d, `/api/v1/projects/${w.project}/sources`, { token, body: { url: 'https://docs.invalid/handbook/', kind: 'web', every: '1h' } })).body.id;
    await web.get('/search?q=lighthouse');
    const saved = await web.post('/search/save', { _csrf: web.csrf, q: 'lighthouse', name: 'Lighthouse', share: '' });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    w.savedId = /saved\/([^/]+)\/delete/.exec((await web.get('/search?q=lighthouse')).text)![1]!;

    // An application to consent to; a group; an invitation; a reset link made by the admin.
    await web.get('/settings/applications');
    w.redirect = 'https://notes.example.com/oauth/callback';
    const registered = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Field notebook', redirect_uris: w.redirect });
    w.clientId = /id="new-client-id" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    await web.get('/admin/groups');
    const group = await web.submit('/admin/groups', { _csrf: web.csrf, name: 'Hydrology', description: 'Field staff' });
    w.groupId = /\/admin\/groups\/(grp_[0-9A-Za-z]+)/.exec(group.redirectedFrom?.location ?? group.text)![1]!;
    await web.submit(`/admin/groups/${w.groupId}/members`, { _csrf: web.csrf, email: 'bob@example.com' });
    await web.get('/admin/users');
    const invited = await web.submit('/admin/users/invite', { _csrf: web.csrf, email: 'dora@example.com' });
    w.inviteToken = /invite\?token=([^"&<\s]+)/.exec(invited.text)![1]!;
    const reset = await api(d, `/api/v1/admin/users/${encodeURIComponent('bob@example.com')}/reset-link`, { token, body: {} });
    w.resetToken = /token=([A-Za-z0-9_-]+)/.exec(reset.body.link)![1]!;

    // A passkey (Settings → Security's own requests, a software authenticator): its row and recovery codes.
    const json = async (path: string, body: unknown) => {
      const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': web.csrf, cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(res.status, path).toBe(200);
      return res.json() as Promise<any>;
    };
    await json('/settings/security/passkeys', { response: registrationResponse(await json('/settings/security/passkeys/options', {}), base), name: 'Work laptop' });

    // Carol has an authenticator app and has typed her password: the second step waits for her.
    const carol = await addUser(d, { email: 'carol@example.com' });
    await enrolTotp(await loggedIn(at, carol));
    const pending = await tabFor('carol');
    await pending.goto(`${base}/login`);
    await pending.fill('input[name=email]', carol.email);
    await pending.fill('input[name=password]', carol.password);
    await pending.click('form[action="/login"] button[type=submit]');
    await pending.waitForURL(/\/login\/verify/);

    await tabFor('ada', web);
    await tabFor('bob', await loggedIn(at, w.bob));
  }, 400_000);

  it('setup', () => {
    expect(setupProblems).toEqual([]);
  });

  for (const c of PAGES) {
    it(c.name, async () => {
      const page = tabs.get(c.as)!;
      const res = await page.goto(w.base + c.path(w));
      expect(res?.status(), `${c.name}: ${page.url()}`).toBe(c.status ?? 200);
      if (c.then) await c.then(page, w);
      expect(await wcagProblems(page), `${c.name} (${page.url()})`).toEqual([]);
    }, 60_000);
  }

  it('keyboard: search, then open a result', async () => {
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/documents`);
    await tabTo(page, '#site-search');
    await page.keyboard.type('lighthouse keeper');
    await Promise.all([page.waitForURL(/\/search\?/), page.keyboard.press('Enter')]);
    await tabTo(page, '.result a.filename');
    await Promise.all([page.waitForURL(/\/documents\/doc_/), page.keyboard.press('Enter')]);
  });

  it('keyboard: add a filter from a facet, then remove its chip', async () => {
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/search?q=lighthouse+keeper`);
    await tabTo(page, '.facet[data-facet=label] a');
    await Promise.all([page.waitForURL(/labels=/), page.keyboard.press('Enter')]);
    await tabTo(page, 'a.chip');
    await Promise.all([page.waitForURL((u) => !u.searchParams.has('labels')), page.keyboard.press('Enter')]);
    expect(await page.$('a.chip')).toBeNull();
  });

  it('keyboard: edit a document\'s labels', async () => {
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/documents/${w.md}`);
    await tabTo(page, '#labels input[name=labels]');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('keeper, harbour');
    await Promise.all([page.waitForURL(/\/documents\/doc_/), page.keyboard.press('Enter')]);
    await page.waitForSelector('#doc-labels a');
    expect((await page.$$eval('#doc-labels a', (as) => as.map((a) => a.textContent))).sort()).toEqual(['harbour', 'keeper']);
  });

  it('keyboard: upload a file from the project page; its status, as it changes, is announced', async () => {
    // Work ahead of it, so its row comes in queued and changes while the page watches.
    const backlog = Array.from({ length: 4 }, (_, i) => ({ name: `backlog-${i}.txt`, bytes: Buffer.from(Array.from({ length: 300 }, (_, j) => `Line ${j} of backlog file ${i} keeps the model busy.`).join('\n')) }));
    expect((await uploadFiles(w.d, w.ada.apiKey, backlog, { projectId: w.project })).status).toBe(202);
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/projects/${w.project}`);
    // Asked for before the Tabs: Playwright turns Chromium's file-chooser interception on without waiting for it, so a
    // Space pressed at once could reach Chromium first on a loaded machine (run49: no chooser in 30 s).
    const choosing = page.waitForEvent('filechooser');
    choosing.catch(() => undefined); // awaited below; a Tab that fails first must not leave it unhandled
    await tabTo(page, '#pick-files');
    const [chooser] = await Promise.all([choosing, page.keyboard.press('Space')]);
    await chooser.setFiles({ name: 'by keyboard.txt', mimeType: 'text/plain', buffer: Buffer.from('Typed, not clicked.\n') });
    await page.waitForFunction(`document.getElementById('upload-list').textContent.includes('by keyboard.txt')`);
    const row = page.locator('#documents tr', { hasText: 'by keyboard.txt' });
    await row.waitFor();
    expect(await row.getAttribute('data-status'), 'the upload waits behind the backlog').not.toBe('ready');
    // A screen reader announces a change inside a live region that was there before it; a region put in its place is not one.
    await row.locator('.status-cell').evaluate((cell) => Object.assign(cell, { watched: true }));
    await page.locator('#documents tr[data-status=ready]', { hasText: 'by keyboard.txt' }).waitFor({ timeout: 120_000 });
    const cell = await row.locator('.status-cell').evaluate((c) => ({ watched: 'watched' in c, live: c.closest('[aria-live]') !== null, text: c.textContent ?? '' }));
    expect(cell, 'the status cell that turned ready is the live region the page had').toMatchObject({ watched: true, live: true, text: expect.stringContaining('ready') });
  }, 180_000);

  it('keyboard: "/" goes to the search box, and a person can turn that off (WCAG 2.1.4)', async () => {
    const page = tabs.get('ada')!;
    const focused = () => page.evaluate<string>(`document.activeElement?.id || document.activeElement?.tagName || ''`);
    await page.goto(`${w.base}/documents`);
    await page.keyboard.press('/');
    expect(await focused()).toBe('site-search');
    await page.goto(`${w.base}/settings/account`);
    await page.check('input[name=shortcut][value=off]');
    await page.click('form[action="/settings/appearance"] button[type=submit]');
    await page.waitForSelector('.flash');
    try {
      await page.goto(`${w.base}/documents`);
      await page.keyboard.press('/');
      expect(await focused(), 'off: / moves the focus nowhere').toBe('BODY');
      expect(await page.locator('#site-search').evaluate((box) => [box.getAttribute('placeholder'), box.getAttribute('aria-keyshortcuts')])).toEqual(['Search', null]);
      await page.goto(`${w.base}/settings/account`);
      expect(await page.isChecked('input[name=shortcut][value=off]')).toBe(true);
    } finally {
      await page.goto(`${w.base}/settings/account`);
      await page.check('input[name=shortcut][value=on]');
      await page.click('form[action="/settings/appearance"] button[type=submit]');
      await page.waitForSelector('.flash');
    }
    await page.goto(`${w.base}/search?q=lighthouse`);
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('/');
    expect(await page.evaluate<boolean>(`document.activeElement === document.querySelector('main input[name=q]')`), 'on again: / goes to the search page\'s own box').toBe(true);
  });

  it('a button under the pointer still reads: its words 4.5:1 on its hover colours, light and dark (1.4.3)', async () => {
    // axe judges the page as it lies; hover colours are the design system's, and its gallery has every kind of button.
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/documents`); // at the daemon, where the gallery's /static/app.css resolves
    await page.setContent(componentsPage().value, { waitUntil: 'load' });
    const buttons = page.locator('main button:visible:not(:disabled), main .button:visible');
    expect(await buttons.count(), 'the gallery shows its buttons').toBeGreaterThan(3);
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (let i = 0; i < (await buttons.count()); i++) {
        await buttons.nth(i).hover();
        await buttons.nth(i).evaluate((el) => el.setAttribute('data-judged', ''));
        const [ratio, name] = await page.evaluate<[number, string]>(
          `(() => { ${COLOURS} const el = document.querySelector('[data-judged]'); el.removeAttribute('data-judged'); const s = getComputedStyle(el); return [contrast(rgb(s.color).slice(0, 3), behind(el)), el.textContent.trim()]; })()`,
        );
        if (ratio < 4.5) found.push(`${scheme}: "${name}" hovered is ${ratio.toFixed(2)}:1`);
      }
    }
    await page.mouse.move(0, 0);
    await page.emulateMedia({ colorScheme: 'light' });
    expect(found).toEqual([]);
  });

  it('what script says after an action is in a live region: "Copied"', async () => {
    const page = tabs.get('ada')!;
    await page.goto(`${w.base}/settings/keys`);
    await page.fill('input[name=name]', 'Copied by keyboard');
    await page.click('form[action="/settings/keys"] button[type=submit]');
    await page.waitForSelector('#new-key');
    await tabTo(page, 'button.copy');
    await page.keyboard.press('Enter');
    const copy = page.locator('button.copy:has-text("Copied")');
    await copy.waitFor();
    expect(await copy.evaluate((b) => b.closest('[aria-live], [role=status], [role=alert]') !== null)).toBe(true);
  });

  it('a document\'s text is marked as in its own language, the page around it as English', async () => {
    const page = tabs.get('ada')!;
    const langOf = (selector: string) => page.locator(selector).first().evaluate((el) => el.closest('[lang]')?.getAttribute('lang') ?? '');
    await page.goto(`${w.base}/documents/${w.deTxt}`);
    expect(await langOf('.chunk-text')).toBe('de');
    expect(await langOf('.chunk-meta')).toBe('en');
    await page.goto(`${w.base}/documents/${w.deTxt}/view`);
    expect(await langOf('pre.plain')).toBe('de');
    expect(await langOf('h1')).toBe('en');
    await page.goto(`${w.base}/documents/${w.deMd}/view`);
    expect(await langOf('.rendered.document p')).toBe('de');
    await page.goto(`${w.base}/documents/${w.txt}/view`);
    expect(await langOf('pre.plain')).toBe('en');
  });
});
