import { describe, expect, it } from 'vitest';
import { makePdf } from '../ingest/build-fixtures.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { WebClient } from '../server/web-client.js';
import { loggedIn, uploadAs, waitSettled } from './library-client.js';
import { acceptedList } from '../helpers/accepted-types.js';
import { storedFiles } from '../ingest/pipeline/helpers.js';

const XSS = '<img src=x onerror=alert(1)>';
/** Two full pages before the marmots, so their passage is in a chunk of its own near the end. */
const FILLER = Array.from({ length: 40 }, (_, i) => `Section ${i + 1} lists rainfall, soil depth and the grasses sampled on transect ${i + 1}.`);

/** The library pages over real HTTP: login redirects, tenancy, CSRF, escaping, uploads and the original file. */
describe('web library pages', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let projectId: string;
  let pdfId: string;
  let txtId: string;

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
      web = await loggedIn(d, alice);
      await web.get('/projects');
      const created = await web.post('/projects', { _csrf: web.csrf, name: `Field notes ${XSS}`, description: `About ${XSS}` });
      expect(created.status).toBe(303);
      projectId = created.location!.split('/').pop()!;
      await web.get(`/projects/${projectId}`);
      const pdf = makePdf([
        [{ lines: FILLER }],
        [{ lines: FILLER.map((l) => l.replace('Section', 'Appendix')) }],
        [{ lines: ['The marmot colonies hibernate under the scree slopes.', 'Marmots whistle when eagles circle.'] }],
      ]);
      const up = await uploadAs(web, projectId, [
        { name: 'survey.pdf', body: pdf },
        { name: `${XSS}.txt`, body: `The glacier notes mention ${XSS} in their text about crevasses.\n` },
      ]);
      expect(up.status).toBe(202);
      [pdfId, txtId] = up.body.documents.map((x: { id: string }) => x.id);
      expect(await waitSettled(d, alice, [pdfId, txtId])).toEqual({ [pdfId]: 'ready', [txtId]: 'ready' });
    },
    { setupTimeoutMs: 180_000 },
  );

  it('sends anonymous visitors to the login page with a local return_to, and only follows local ones', async () => {
    const anon = new WebClient(d);
    for (const path of ['/', '/search?q=marmot', '/projects', `/projects/${projectId}`, `/documents/${pdfId}`, `/documents/${pdfId}/file`]) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(302);
      expect(res.location, path).toBe(`/login?return_to=${encodeURIComponent(path)}`);
    }
    const other = new WebClient(d);
    await other.get('/login?return_to=//evil.example/x');
    expect(other.lastPage).toContain('name="return_to" value=""');
    const res = await other.post('/login', { _csrf: other.csrf, email: alice.email, password: alice.password, return_to: 'https://evil.example/' });
    expect(res.location).toBe('/');
  });

  it('navigation: Search · Projects · Settings, and the settings pages under Settings', async () => {
    const home = await web.get('/');
    expect(home.status).toBe(200);
    expect(home.text).toMatch(/<a href="\/" class="active" aria-current="page">Search<\/a>[\s\S]*<a href="\/projects">Projects<\/a>[\s\S]*<a href="\/settings">Settings<\/a>/);
    expect(home.text).toContain('<input type="search" name="q"');
    expect((await web.get('/settings')).location).toBe('/settings/keys');
    const keys = await web.get('/settings/keys');
    expect(keys.text).toContain('<a href="/settings" class="active" aria-current="page">Settings</a>');
    expect(keys.text).toContain('<nav class="sub" aria-label="Settings">');
  });

  it('search renders on the server: filename, project, page, snippet with <mark>, opens the document at the passage', async () => {
    const res = await web.get(`/search?q=${encodeURIComponent('marmot colonies')}&project=${projectId}`);
    expect(res.status).toBe(200);
    const from = res.text.indexOf('<li class="result"');
    const next = res.text.indexOf('<li class="result"', from + 1);
    const first = res.text.slice(from, next === -1 ? undefined : next);
    expect(first).toContain(`data-document-id="${pdfId}"`);
    // A PDF has no viewer of its own: the name and "Open at this passage" both open the document page at the passage's
    // page (the chunk runs from the end of page 2 into page 3: where it starts), its chunk named and its answer's offsets.
    const at = new RegExp(`<a href="(/documents/${pdfId}\\?chunk=(\\d+)&amp;answer=(\\d+)-(\\d+)&amp;page=2#chunk-\\2)" class="at-match">Open at this passage</a>`).exec(first);
    expect(at, 'an "Open at this passage" link to the document page at page 2').not.toBeNull();
    const [, href, chunk, start, end] = at!;
    expect(first).toContain(`<a href="${href}" class="filename">survey.pdf</a>`);
    expect(first).toContain('<span class="page">pp. 2–3</span>');
    // The download moved to the document page: a result offers one way to open it.
    expect(first).not.toContain(`/documents/${pdfId}/file`);
    // Followed, the link lands on that chunk with the answer the result showed marked for app.js, the preview at page 2.
    const opened = await web.get(href!.replaceAll('&amp;', '&').split('#')[0]!);
    expect(opened.status).toBe(200);
    const marked = new RegExp(`<li class="chunk" id="chunk-${chunk}" data-answer="([^"]+)">`).exec(opened.text);
    expect(marked, `chunk ${chunk} carries the answer`).not.toBeNull();
    expect(Number(end)).toBeGreaterThan(Number(start));
    expect(marked![1]).toBe('The marmot colonies hibernate under the scree slopes.');
    expect(opened.text).toMatch(/<figure class="preview" id="preview" data-page="2"/);
    expect(first).toMatch(/<mark>marmot<\/mark>/i);
    expect(first).toContain(`Field notes &lt;img src=x onerror=alert(1)&gt;`);
    // Another project's filter, or an unknown mode, never errors.
    expect((await web.get('/search?q=marmot&mode=nonsense')).status).toBe(200);
    const tooLong = await web.get(`/search?q=${'x'.repeat(2001)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain('at most 2000 characters');
  });

  it('filenames, project names and snippets with markup render as text', async () => {
    const pages = [
      await web.get(`/search?q=${encodeURIComponent('glacier crevasses')}`),
      await web.get('/projects'),
      await web.get(`/projects/${projectId}`),
      await web.get(`/documents/${txtId}`),
      await web.get(`/projects/${projectId}/delete`),
    ];
    for (const p of pages) {
      expect(p.status).toBe(200);
      expect(p.text).not.toContain('<img');
      expect(p.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    }
    expect(pages[0]!.text).toMatch(/<mark>glacier<\/mark>/);
  });

  it('serves the original to its owner with the right type and an RFC 5987 filename', async () => {
    const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const pdf = await fetch(`${d.url}/documents/${pdfId}/file`, { headers: { cookie } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toBe(`inline; filename="survey.pdf"; filename*=UTF-8''survey.pdf`);
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    const txt = await api(d, `/api/v1/documents/${txtId}/file`, { token: alice.apiKey });
    expect(txt.headers.get('content-disposition')).toBe(
      `inline; filename="<img src=x onerror=alert(1)>.txt"; filename*=UTF-8''%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.txt`,
    );
    expect(txt.headers.get('content-security-policy')).toContain("default-src 'none'");
    // The API never reads the cookie; the web route never reads a bearer token.
    expect((await fetch(`${d.url}/api/v1/documents/${pdfId}/file`, { headers: { cookie } })).status).toBe(401);
    const readOnly = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { scopes: ['write:documents'] } });
    expect((await api(d, `/api/v1/documents/${pdfId}/file`, { token: readOnly.body.key })).status).toBe(403);
  });

  it('a second user sees none of it: search finds nothing, the pages and the file are 404', async () => {
    const other = await loggedIn(d, bob);
    const search = await other.get('/search?q=marmot+colonies');
    expect(search.status).toBe(200);
    expect(search.text).not.toContain(pdfId);
    expect(search.text).toContain('Your library is empty: there is nothing to search yet.'); // #44: Bob has uploaded nothing
    const filtered = await other.get(`/search?q=marmot&project=${projectId}`);
    expect(filtered.text).not.toContain(pdfId);
    for (const path of [`/projects/${projectId}`, `/documents/${pdfId}`, `/documents/${pdfId}/file`, `/projects/${projectId}/documents.json`, `/projects/${projectId}/delete`]) {
      const res = await other.get(path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('marmot');
      expect(res.text, path).not.toContain('Field notes');
    }
    expect((await api(d, `/api/v1/documents/${pdfId}/file`, { token: bob.apiKey })).status).toBe(404);
    await other.get('/projects');
    const csrf = other.csrf;
    expect((await other.post(`/documents/${pdfId}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await other.post(`/projects/${projectId}/delete`, { _csrf: csrf })).status).toBe(404);
    expect((await other.post(`/projects/${projectId}/edit`, { _csrf: csrf, name: 'mine now', description: '' })).status).toBe(404);
    expect((await uploadAs(other, projectId, [{ name: 'x.txt', body: 'intruder text\n' }])).status).toBe(404);
    // None of it happened: the document and the project are there, the project keeps its name and holds no upload of Bob's.
    expect((await api(d, `/api/v1/documents/${pdfId}`, { token: alice.apiKey })).body.status).toBe('ready');
    expect((await api(d, `/api/v1/projects/${projectId}`, { token: alice.apiKey })).body.name).toBe(`Field notes ${XSS}`);
    const names = (await api(d, `/api/v1/documents?project_id=${projectId}`, { token: alice.apiKey })).body.documents.map((x: { filename: string }) => x.filename);
    expect(names).not.toContain('x.txt');
  });

  it('refuses every new form and the upload call without the CSRF token (403), changing nothing', async () => {
    await web.get(`/projects/${projectId}`);
    for (const token of [undefined, 'forged']) {
      const extra: Record<string, string> = token ? { _csrf: token } : {};
      const posts: [string, Record<string, string>][] = [
        ['/projects', { name: 'csrf project', description: '' }],
        [`/projects/${projectId}/edit`, { name: 'renamed by csrf', description: '' }],
        [`/projects/${projectId}/delete`, {}],
        [`/documents/${txtId}/delete`, {}],
      ];
      for (const [path, form] of posts) {
        const res = await web.post(path, { ...form, ...extra });
        expect(res.status, `${path} with ${token ?? 'no token'}`).toBe(403);
        expect(res.text).toContain('the form expired or did not come from this site');
      }
      for (const via of ['header', 'field'] as const) {
        const up = await uploadAs(web, projectId, [{ name: 'csrf.txt', body: 'forged upload\n' }], { csrf: token ?? null, via });
        expect(up.status, `upload via ${via} with ${token ?? 'no token'}`).toBe(403);
      }
    }
    const docs = await api(d, `/api/v1/documents?project_id=${projectId}`, { token: alice.apiKey });
    expect(docs.body.documents.map((x: { filename: string }) => x.filename).sort()).toEqual([`${XSS}.txt`, 'survey.pdf']);
    const projects = await api(d, '/api/v1/projects', { token: alice.apiKey });
    expect(projects.body.projects.map((p: { name: string }) => p.name)).toEqual(['default', `Field notes ${XSS}`]);
  });

  it('uploads without script (the form posts _csrf), and gives the API’s type and size errors in words', async () => {
    await web.get(`/projects/${projectId}`);
    const plain = await uploadAs(web, projectId, [{ name: 'plain.txt', body: 'Uploaded through the bare form.\n' }], { via: 'field', accept: 'text/html' });
    expect(plain.status).toBe(303);
    expect(plain.location).toBe(`/projects/${projectId}`);
    const bad = await uploadAs(web, projectId, [{ name: 'program.bin', body: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0]) }]);
    expect(bad.status).toBe(415);
    expect(bad.body.error.message).toBe(`"program.bin" is not a type docsearch reads (accepted: ${acceptedList()})`);
    const page = await web.get(`/projects/${projectId}`);
    expect(page.text).toContain('plain.txt');
    expect(page.text).not.toContain('program.bin');
    const status = await web.get(`/projects/${projectId}/documents.json`);
    const feed = JSON.parse(status.text);
    expect(feed.documents.map((x: { id: string }) => x.id)).toContain(pdfId);
    expect(feed.documents[0].row).toMatch(/^<tr data-document-id=/);
  });

  it('projects: create, rename, describe; names are unique; the default cannot be deleted; delete says what is lost', async () => {
    await web.get('/projects');
    const dup = await web.submit('/projects', { _csrf: web.csrf, name: `field NOTES ${XSS}`, description: '' });
    expect(dup.status).toBe(409);
    expect(dup.text).toContain('already exists');
    const empty = await web.submit('/projects', { _csrf: web.csrf, name: '   ', description: '' });
    expect(empty.status).toBe(400);
    const made = await web.post('/projects', { _csrf: web.csrf, name: 'Scratch', description: '' });
    const id = made.location!.split('/').pop()!;
    await web.get(`/projects/${id}`);
    const renamed = await web.post(`/projects/${id}/edit`, { _csrf: web.csrf, name: 'Scratch pad', description: 'Throwaway notes' });
    expect(renamed.status).toBe(303);
    // The project's tabs, one URL each: renaming happens on Settings and comes back there.
    expect(renamed.location).toBe(`/projects/${id}/settings`);
    const settings = await web.get(`/projects/${id}/settings`);
    expect(settings.text).toContain('Saved the name and description.');
    const tabs = /<nav class="tabs" aria-label="Project">([\s\S]*?)<\/nav>/.exec(settings.text)![1]!;
    expect([...tabs.matchAll(/<a href="([^"]+)" class="tab( current)?"[^>]*>([^<]+)<\/a>/g)].map((m) => `${m[3]} ${m[1]!.replace(`/projects/${id}`, '')}${m[2] ? ' (current)' : ''}`)).toEqual([
      'Documents ',
      'Labels /labels',
      'Sharing /sharing',
      'Sources /sources',
      'Settings /settings (current)',
    ]);
    expect(settings.text).not.toContain('id="share-form"');
    const sharing = await web.get(`/projects/${id}/sharing`);
    expect(sharing.text).toContain('id="share-form"');
    expect(sharing.text).not.toContain(`action="/projects/${id}/edit"`);
    const page = await web.get(`/projects/${id}`);
    expect(page.text).toContain('<h1>Scratch pad');
    expect(page.text).toContain('Throwaway notes');
    const confirm = await web.get(`/projects/${id}/delete`);
    expect(confirm.text).toContain('This deletes the project. It has no documents.'); // #44: no zero counts
    // With one document, the confirmation speaks of it, not of "them".
    expect((await uploadAs(web, id, [{ name: 'jotting.txt', body: 'A single jotting about the tide tables.\n' }])).status).toBe(202);
    expect((await web.get(`/projects/${id}/delete`)).text).toMatch(/<strong>1 document<\/strong>[^<]*Search stops finding it at once/);
    // Its trash goes with it: the confirmation says so, and never "no documents" over a trash that holds some.
    const { id: jotting, sha256: jottingSha } = (await api(d, `/api/v1/documents?project_id=${id}`, { token: alice.apiKey })).body.documents[0];
    expect(storedFiles(d.dataDir).originals.filter((name) => name.startsWith(jottingSha))).toHaveLength(1);
    expect((await api(d, `/api/v1/documents/${jotting}`, { token: alice.apiKey, method: 'DELETE' })).status).toBe(204);
    const withTrash = (await web.get(`/projects/${id}/delete`)).text;
    expect(withTrash).toContain('This deletes the project and <strong>1 document in its trash</strong>.');
    expect(withTrash).not.toContain('It has no documents');
    expect((await web.post(`/projects/${id}/delete`, { _csrf: web.csrf })).location).toBe('/projects');
    expect((await web.get(`/projects/${id}`)).status).toBe(404);
    // The trashed document went with it, and its original (docs/api.md: DELETE /projects/{id}).
    expect(storedFiles(d.dataDir).originals.filter((name) => name.startsWith(jottingSha))).toEqual([]);

    const list = await api(d, '/api/v1/projects', { token: alice.apiKey });
    const def = list.body.projects.find((p: { is_default: boolean }) => p.is_default);
    const defPage = await web.get(`/projects/${def.id}/settings`);
    expect(defPage.text).toContain('The default project can’t be deleted.');
    expect((await web.post(`/projects/${def.id}/delete`, { _csrf: web.csrf })).status).toBe(409);
    expect((await api(d, `/api/v1/projects/${def.id}`, { token: alice.apiKey })).status).toBe(200);
  });

  it('deleting a document from its page takes it out of the results', async () => {
    const doc = await web.get(`/documents/${txtId}`);
    expect(doc.status).toBe(200);
    expect(doc.text).toContain('<dt>Chunks</dt><dd>1</dd>');
    const res = await web.post(`/documents/${txtId}/delete`, { _csrf: web.csrf });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/projects/${projectId}`);
    // The page it leads to says so, with an Undo that names the document (its id in the form, nowhere else).
    const project = await web.get(res.location!);
    expect(project.text).toContain(`<input type="hidden" name="ids" value="${txtId}">`);
    const search = await web.get(`/search?q=${encodeURIComponent('glacier crevasses')}`);
    expect(search.text).not.toContain(txtId);
    expect((await web.get(`/documents/${txtId}`)).status).toBe(404);
  });
});
