/**
 * Every page, held to the design system (docs/design.md): each is opened once, must answer the status it is meant to
 * (200 unless its case says) at the URL asked for (no redirect to the sign-in page or elsewhere unless its case names
 * the target), and is drawn at 1280×800 and 390×844, in light and dark, and fails on anything past its container, a table too wide at 1280 px, a word broken in a table
 * cell, a wrapped time, a target under 24 px, an unreadable placeholder, two primary actions, rows whose actions do
 * not name them, "Log in" for "Sign in", or a serious or critical axe-core finding (contrast included).
 *
 * A new page is one line in PAGES. One daemon, one browser and one tab per person, reused page after page.
 * `DOCSEARCH_SCREENSHOTS=<dir>` also writes the main pages' screenshots there (`npm run screenshots`).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizePath, getCode, post } from '../auth/oauth-flow.js';
import { enrolTotp } from '../auth/two-factor/totp.js';
import { addUser, api, CHROMIUM, CHROMIUM_ARGS, type Daemon, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { componentsPage } from '../../src/web/pages/components.js';
import { assetUrl } from '../../src/web/asset-url.js';
import type { WebClient } from '../server/web-client.js';
import { browserTitle, HAVE_CHROMIUM, watchCsp } from './browser.js';
import { loggedIn } from './library-client.js';
import { pageProblems, SIZES, type SizeName } from './page-rules.js';

const SHOTS = process.env.DOCSEARCH_SCREENSHOTS;
const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));
const LONG_FILE = `${'field-survey-of-the-northern-alpine-meadows-'.repeat(4).slice(0, 197)}.txt`;
const LONG_PROJECT = 'Hydrological and glaciological observations of the upper valley catchment during the winter seasons';

/** What the pages are about, made once through the API and the forms. */
interface World {
  d: Daemon;
  /** The daemon at http://localhost:<port> (its public URL: passkeys need a host name), where the tabs are signed in. */
  base: string;
  ada: TestUser;
  bob: TestUser;
  field: string;
  finance: string;
  bobs: string;
  docs: Record<'pdf' | 'txt' | 'long' | 'html' | 'md' | 'eml' | 'csv' | 'pptx' | 'xlsx' | 'failed', string>;
  trashed: string;
  keyId: string;
  clientId: string;
  redirect: string;
  groupId: string;
  sourceId: string;
  /** A label of Field notes, on the PDF and the text file. */
  labelId: string;
  bobId: string;
  adaId: string;
  inviteToken: string;
}

type Who = 'ada' | 'bob' | 'nobody' | 'carol-pending';

/**
 * One page or state: who looks, and where (or how to get there). `shot`: it is among the screenshots in docs/. The
 * name is the screenshot's and the failure's.
 *
 * A page with a `path` is asked for by the tab and must answer `status` (200 unless said) and stay where it was asked
 * for (`lands`, the path and query of a documented redirect's target, otherwise): a 500, a 404 or a redirect to the
 * sign-in page fails it before its drawing is judged.
 */
interface PageCase {
  name: string;
  as: Who;
  path?: (w: World) => string;
  /** The HTTP status the page is meant to answer; 200 unless said. */
  status?: number;
  /** Where the page is meant to redirect to (path and query); the page asked for unless said. */
  lands?: (w: World) => string;
  /** What a person does on the page once it is loaded, before it is judged (opening a fold; no navigation). */
  then?: (page: Page) => Promise<void>;
  /** Instead of a path: a page drawn without a request of its own (so with no status or URL of its own to check). */
  open?: (page: Page, w: World) => Promise<void>;
  shot?: boolean;
}

const PAGES: PageCase[] = [
  { name: 'sign-in', as: 'nobody', path: () => '/login', shot: true },
  { name: 'forgot-password', as: 'nobody', path: () => '/forgot-password' },
  { name: 'sign-in-second-step', as: 'carol-pending', path: () => '/login/verify' },
  { name: 'invitation', as: 'nobody', path: (w) => `/invite?token=${w.inviteToken}` },
  { name: 'not-found-signed-out', as: 'nobody', path: () => '/setup?token=nope', status: 404 },
  { name: 'search-home', as: 'ada', path: () => '/' },
  { name: 'search', as: 'ada', path: () => '/search?q=lighthouse+keeper+logbook', shot: true },
  { name: 'search-save', as: 'ada', path: () => '/search?q=lighthouse+keeper+logbook&labels=unpaid', then: (page) => page.click('#save-search summary') },
  { name: 'search-passages', as: 'ada', path: () => '/search?q=harbour+crane&view=passages' },
  { name: 'search-weak', as: 'ada', path: () => '/search?q=xyzzyplugh+frobnicate' },
  { name: 'search-none', as: 'ada', path: () => '/search?q=xyzzyplugh+frobnicate&mode=keyword' },
  { name: 'documents', as: 'ada', path: () => '/documents', shot: true },
  { name: 'documents-filtered', as: 'ada', path: () => '/documents?type=txt&sort=name' },
  { name: 'documents-none-match', as: 'ada', path: () => '/documents?filename=nothing-is-called-this' },
  { name: 'document-pdf', as: 'ada', path: (w) => `/documents/${w.docs.pdf}`, shot: true },
  { name: 'document-long-name', as: 'ada', path: (w) => `/documents/${w.docs.long}` },
  { name: 'document-failed', as: 'ada', path: (w) => `/documents/${w.docs.failed}` },
  { name: 'document-as-viewer', as: 'bob', path: (w) => `/documents/${w.docs.txt}` },
  { name: 'view-html', as: 'ada', path: (w) => `/documents/${w.docs.html}/view` },
  { name: 'view-markdown', as: 'ada', path: (w) => `/documents/${w.docs.md}/view` },
  { name: 'view-email', as: 'ada', path: (w) => `/documents/${w.docs.eml}/view`, shot: true },
  { name: 'view-csv', as: 'ada', path: (w) => `/documents/${w.docs.csv}/view` },
  { name: 'view-slides', as: 'ada', path: (w) => `/documents/${w.docs.pptx}/view` },
  { name: 'view-sheet', as: 'ada', path: (w) => `/documents/${w.docs.xlsx}/view` },
  { name: 'view-text', as: 'ada', path: (w) => `/documents/${w.docs.txt}/view` },
  { name: 'document-delete', as: 'ada', path: (w) => `/documents/${w.docs.txt}/delete` },
  { name: 'trash', as: 'ada', path: () => '/trash', shot: true },
  { name: 'trash-purge', as: 'ada', path: (w) => `/trash/${w.trashed}/purge` },
  { name: 'projects', as: 'ada', path: () => '/projects', shot: true },
  { name: 'project', as: 'ada', path: (w) => `/projects/${w.field}`, shot: true },
  { name: 'project-long-name', as: 'ada', path: (w) => `/projects/${w.finance}` },
  { name: 'project-as-viewer', as: 'bob', path: (w) => `/projects/${w.field}` },
  { name: 'project-delete', as: 'ada', path: (w) => `/projects/${w.finance}/delete` },
  { name: 'project-sharing', as: 'ada', path: (w) => `/projects/${w.field}/sharing` },
  { name: 'project-settings', as: 'ada', path: (w) => `/projects/${w.field}/settings` },
  { name: 'sources', as: 'ada', path: (w) => `/projects/${w.field}/sources` },
  { name: 'labels', as: 'ada', path: (w) => `/projects/${w.field}/labels` },
  { name: 'labels-as-viewer', as: 'bob', path: (w) => `/projects/${w.field}/labels` },
  { name: 'label-delete', as: 'ada', path: (w) => `/projects/${w.field}/labels/${w.labelId}/delete` },
  { name: 'source-add-s3', as: 'ada', shot: true, path: (w) => `/projects/${w.field}/sources?kind=s3` },
  { name: 'source-remove', as: 'ada', path: (w) => `/projects/${w.field}/sources/${w.sourceId}/remove` },
  { name: 'source-edit', as: 'ada', path: (w) => `/projects/${w.field}/sources/${w.sourceId}/edit` },
  { name: 'notices', as: 'ada', path: () => '/notices' },
  { name: 'settings-keys', as: 'ada', path: () => '/settings/keys', shot: true },
  { name: 'key-revoke', as: 'ada', path: (w) => `/settings/keys/${w.keyId}/revoke` },
  { name: 'settings-applications', as: 'ada', path: () => '/settings/applications' },
  { name: 'application-delete', as: 'ada', path: (w) => `/settings/applications/${w.clientId}/delete` },
  { name: 'application-rotate', as: 'ada', path: (w) => `/settings/applications/${w.clientId}/rotate` },
  { name: 'settings-connected', as: 'ada', path: () => '/settings/connected' },
  { name: 'connected-revoke', as: 'ada', path: (w) => `/settings/connected/${w.clientId}/revoke` },
  { name: 'settings-account', as: 'ada', path: () => '/settings/account' },
  { name: 'settings-security', as: 'ada', path: () => '/settings/security', shot: true },
  { name: 'settings-security-rename', as: 'ada', path: () => '/settings/security', then: (page) => page.click('#passkeys summary') },
  { name: 'confirm-access', as: 'ada', path: () => '/settings/confirm?return_to=/settings/security' },
  { name: 'consent', as: 'ada', path: (w) => authorizePath({ client_id: w.clientId, redirect_uri: w.redirect, response_type: 'code', state: 'x' }) },
  { name: 'admin-users', as: 'ada', path: () => '/admin/users', shot: true },
  { name: 'admin-user-delete', as: 'ada', path: (w) => `/admin/users/${w.bobId}/delete` },
  { name: 'admin-user-disable', as: 'ada', path: (w) => `/admin/users/${w.bobId}/disable` },
  { name: 'admin-self-unadmin', as: 'ada', path: (w) => `/admin/users/${w.adaId}/admin` },
  { name: 'admin-groups', as: 'ada', path: () => '/admin/groups' },
  { name: 'admin-group', as: 'ada', path: (w) => `/admin/groups/${w.groupId}` },
  { name: 'admin-sharing', as: 'ada', path: () => '/admin/sharing' },
  { name: 'admin-audit', as: 'ada', path: () => '/admin/audit', shot: true },
  { name: 'admin-sources', as: 'ada', path: () => '/admin/sources' },
  { name: 'admin-mail', as: 'ada', path: () => '/admin/mail' },
  { name: 'not-found', as: 'ada', path: () => '/documents/doc_000000000000000000000', status: 404 },
  // The gallery as the daemon would serve it (its stylesheet from /static, under the pages' CSP). No route serves it: it
  // is set as the content of Ada's tab, still at the daemon's origin from the page before, so there is no status or
  // URL of its own to check; what is checked is that the daemon's stylesheet reached it (unstyled, the rules prove
  // nothing).
  {
    name: 'components',
    as: 'ada',
    open: async (page, w) => {
      expect(new URL(page.url()).origin, 'the tab is at the daemon, where /static/app.css resolves').toBe(w.base);
      await page.setContent(componentsPage().value, { waitUntil: 'load' });
      expect(await page.evaluate<boolean>(`[...document.styleSheets].some((s) => s.href === ${JSON.stringify(`${w.base}${assetUrl('app.css')}`)} && s.cssRules.length > 0)`)).toBe(true);
    },
  },
];

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('every page at 1280 and 390 px, light and dark, holds the design system'), () => {
  let browser: Browser;
  const w = {} as World;
  const tabs = new Map<Who, Page>();
  const contexts: BrowserContext[] = [];
  const csp: string[] = [];
  let base = '';

  beforeAll(async () => {
    // localhost, so that the server offers passkeys (a host name on http is allowed there).
    const port = await freePort();
    base = `http://localhost:${port}`;
    w.base = base;
    w.d = await startDaemon({ args: ['--port', String(port), '--public-url', base] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (!w.d) return;
    expect(await w.d.stop()).toBe(0);
    removeDir(w.d.dataDir);
  });

  /** A tab for `who`, signed in with the cookies of a form client that signed in. */
  async function tabFor(who: Who, web?: WebClient): Promise<Page> {
    const context = await browser.newContext({ viewport: SIZES.desk });
    contexts.push(context);
    if (web) await context.addCookies([...web.cookies].map(([name, value]) => ({ name, value, url: base })));
    const page = watchCsp(await context.newPage(), csp);
    tabs.set(who, page);
    return page;
  }

  it('makes a library with every kind of page in it', async () => {
    const { d } = w;
    // The first account, through the setup page: it is the admin.
    const nobody = await tabFor('nobody');
    await nobody.goto(base + new URL(d.setupUrl!).pathname + new URL(d.setupUrl!).search);
    expect((await pageProblems(nobody)).filter((p) => !p.startsWith('primary'))).toEqual([]);
    await nobody.fill('input[name=email]', 'ada@example.com');
    await nobody.fill('input[name=password]', 'correct horse battery staple');
    await nobody.fill('input[name=password2]', 'correct horse battery staple');
    await nobody.click('button[type=submit]');
    await nobody.waitForURL(/\/documents$/);
    await nobody.context().clearCookies();
    const adaWeb = await loggedIn({ ...d, url: base }, { email: 'ada@example.com', password: 'correct horse battery staple', apiKey: '' });
    await adaWeb.get('/settings/keys');
    const made = await adaWeb.submit('/settings/keys', { _csrf: adaWeb.csrf, name: 'Nightly CI upload key for the hydrology group', scopes: ['read:documents', 'write:documents', 'search'], expires: '90' });
    w.ada = { email: 'ada@example.com', password: 'correct horse battery staple', apiKey: /id="new-key" readonly value="([^"]+)"/.exec(made.text)![1]! };
    await adaWeb.submit('/settings/keys', { _csrf: adaWeb.csrf, name: 'Laptop', scopes: ['search'], expires: 'never' });
    w.keyId = (await api(d, '/api/v1/keys', { token: w.ada.apiKey })).body.keys[0].id;
    const token = w.ada.apiKey;

    w.bob = await addUser(d, { email: 'bob@example.com' });
    const users = JSON.parse((await runCli(['users', 'list', '--json', '--data-dir', d.dataDir], { env: d.env })).stdout).users as { id: string; email: string }[];
    w.bobId = users.find((u) => u.email === 'bob@example.com')!.id;
    w.adaId = users.find((u) => u.email === 'ada@example.com')!.id;
    const projects = (await api(d, '/api/v1/projects', { token })).body.projects as { id: string; is_default: boolean }[];
    w.field = projects.find((p) => p.is_default)!.id;
    w.finance = (await api(d, '/api/v1/projects', { token, body: { name: LONG_PROJECT, description: 'Readings and notes '.repeat(20) } })).body.id;
    w.bobs = (await api(d, '/api/v1/projects', { token: w.bob.apiKey, body: { name: 'Harbour office' } })).body.id;
    expect((await api(d, `/api/v1/projects/${w.bobs}/members`, { token: w.bob.apiKey, body: { email: 'ada@example.com', role: 'editor' } })).status).toBe(201);
    expect((await api(d, `/api/v1/projects/${w.field}/members`, { token, body: { email: 'bob@example.com', role: 'viewer' } })).status).toBe(201);

    const pdf = makePdf([
      [{ lines: ['The lighthouse keeper logged the storm at dawn.', 'Visibility was under a mile.'] }],
      [{ lines: ['Page two lists the ships that passed the cape.'] }],
    ]);
    const files: [keyof World['docs'] | 'gone1' | 'gone2', string, Buffer][] = [
      ['pdf', 'lighthouse logbook.pdf', pdf],
      ['txt', 'marmots.txt', Buffer.from('Marmots whistle when eagles circle over the scree.\n')],
      ['long', LONG_FILE, Buffer.from('The glacier tongue retreated forty metres.\n')],
      ['html', 'page.html', fixture('page.html')],
      ['md', 'notes.md', fixture('notes.md')],
      ['eml', 'message.eml', fixture('message.eml')],
      ['csv', 'berths.csv', fixture('berths.csv')],
      ['pptx', 'briefing.pptx', fixture('briefing.pptx')],
      ['xlsx', 'berths.xlsx', fixture('berths.xlsx')],
      ['failed', 'broken.pdf', Buffer.from('%PDF-1.7\nthis is not a PDF at all\n')],
      ['gone1', 'Finance and accounting 2026 minutes.txt', Buffer.from('The board approved the budget for the new pier.\n')],
      ['gone2', 'edelweiss.txt', Buffer.from('Edelweiss grows on limestone ledges.\n')],
    ];
    const form = new FormData();
    form.append('project_id', w.field);
    for (const [, name, bytes] of files) form.append('file', new Blob([bytes]), name);
    const up = await fetch(`${d.url}/api/v1/upload?wait=true&wait_timeout=300`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const docs = ((await up.json()) as { documents: { id: string; status: string }[] }).documents;
    w.docs = Object.fromEntries(files.map(([key], i) => [key, docs[i]!.id])) as World['docs'];
    expect(docs.map((x) => x.status)).toEqual(files.map(([key]) => (key === 'failed' ? 'failed' : 'ready')));
    expect((await api(d, `/api/v1/documents/${w.docs.long}`, { token, method: 'PATCH', body: { project_id: w.finance } })).status).toBe(200);
    // Labels: a vocabulary with counts, chips on the documents (a long name among them).
    for (const id of [w.docs.pdf, w.docs.txt]) expect((await api(d, `/api/v1/documents/${id}`, { token, method: 'PATCH', body: { labels: ['unpaid', 'Quarterly review of the harbour office 2026'] } })).status).toBe(200);
    w.labelId = ((await api(d, `/api/v1/projects/${w.field}/labels`, { token })).body.labels as { id: string; name: string }[]).find((l) => l.name === 'unpaid')!.id;
    for (const gone of [docs[10]!.id, docs[11]!.id]) expect((await api(d, `/api/v1/documents/${gone}`, { token, method: 'DELETE' })).status).toBeLessThan(300);
    w.trashed = docs[10]!.id;

    // A source whose host does not exist: a card in its failed state.
    const source = await api(d, `/api/v1/projects/${w.field}/sources`, { token, body: { url: 'https://docs.invalid/handbook/', kind: 'web', every: '1h' } });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    w.sourceId = source.body.id;

    // An application, connected through the consent screen.
    await adaWeb.get('/settings/applications');
    w.redirect = `https://notes.example.com/oauth/callback/${'very-long-path-segment-'.repeat(4)}`;
    const registered = await adaWeb.submit('/settings/applications', { _csrf: adaWeb.csrf, name: 'Hydrology field notebook synchroniser', redirect_uris: w.redirect });
    w.clientId = /id="new-client-id" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const secret = /id="new-client-secret" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const code = await getCode(adaWeb, { client_id: w.clientId, redirect_uri: w.redirect });
    expect((await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: w.clientId, client_secret: secret, redirect_uri: w.redirect })).status).toBe(200);

    // A group of two, an invitation.
    await adaWeb.get('/admin/groups');
    const group = await adaWeb.submit('/admin/groups', { _csrf: adaWeb.csrf, name: 'Hydrology', description: 'Field staff of the hydrology group' });
    w.groupId = /\/admin\/groups\/(grp_[0-9A-Za-z]+)/.exec(group.redirectedFrom?.location ?? group.text)![1]!;
    for (const email of ['ada@example.com', 'bob@example.com']) await adaWeb.submit(`/admin/groups/${w.groupId}/members`, { _csrf: adaWeb.csrf, email });
    await adaWeb.get('/admin/users');
    const invited = await adaWeb.submit('/admin/users/invite', { _csrf: adaWeb.csrf, email: 'dora@example.com' });
    w.inviteToken = /invite\?token=([^"&<\s]+)/.exec(invited.text)![1]!;

    // Carol has an authenticator app and has typed her password: the second step waits for her.
    const carol = await addUser(d, { email: 'carol@example.com' });
    await enrolTotp(await loggedIn({ ...d, url: base }, carol));
    const pending = await tabFor('carol-pending');
    await pending.goto(`${base}/login`);
    await pending.fill('input[name=email]', carol.email);
    await pending.fill('input[name=password]', carol.password);
    await pending.click('form[action="/login"] button[type=submit]');
    await pending.waitForURL(/\/login\/verify/);

    // Two passkeys (a software authenticator, through Settings → Security's own requests): their rows and recovery codes.
    const json = async (path: string, body: unknown) => {
      const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': adaWeb.csrf, cookie: [...adaWeb.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(res.status, path).toBe(200);
      return res.json() as Promise<any>;
    };
    for (const name of ['Work laptop', 'Phone']) {
      const options = await json('/settings/security/passkeys/options', {});
      await json('/settings/security/passkeys', { response: registrationResponse(options, base), name });
    }

    await tabFor('ada', adaWeb);
    await tabFor('bob', await loggedIn({ ...d, url: base }, w.bob));
    expect(csp).toEqual([]);
  }, 400_000);

  for (const c of PAGES) {
    it(c.name, async () => {
      const page = tabs.get(c.as)!;
      await page.setViewportSize(SIZES.desk);
      await page.emulateMedia({ colorScheme: 'light' });
      if (c.open) await c.open(page, w);
      else {
        const asked = base + c.path!(w);
        const res = await page.goto(asked);
        const hops: string[] = [];
        for (let r = res?.request().redirectedFrom(); r; r = r.redirectedFrom()) hops.unshift(r.url());
        const trail = `${c.name}: ${[...hops, page.url()].join(' → ')}`;
        expect(res, trail).not.toBeNull();
        expect(res!.status(), trail).toBe(c.status ?? 200);
        const meant = new URL(c.lands ? base + c.lands(w) : asked).href;
        expect(page.url(), trail).toBe(meant);
        if (c.then) {
          await c.then(page);
          expect(page.url(), `${c.name}: still where it was after what a person did on it`).toBe(meant);
        }
      }
      const problems: string[] = [];
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const size of Object.keys(SIZES) as SizeName[]) {
          await page.setViewportSize(SIZES[size]);
          problems.push(...(await pageProblems(page)).map((p) => `${scheme} ${size}: ${p}`));
          if (SHOTS && c.shot) await page.screenshot({ path: join(SHOTS, `${c.name}-${size}-${scheme}.png`), fullPage: size === 'phone' });
        }
      }
      expect(problems, `${c.name}:\n${problems.join("\n")}`).toEqual([]);
    }, 60_000);
  }

  it('no page broke its Content-Security-Policy', () => {
    expect(csp).toEqual([]);
  });
});
