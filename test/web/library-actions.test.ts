import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCode, post } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { type WebClient } from '../server/web-client.js';
import { loggedIn, uploadAs, waitSettled } from './library-client.js';
import { acceptedList } from '../helpers/accepted-types.js';

/**
 * The library pages' actions over real HTTP (#21): destructive buttons ask first and say what they did,
 * the Documents page (filters, paging past a page, bulk move and delete), uploads without script that keep
 * the good files, folder paths, and the small things (project-name wording, favicon).
 */
/** A GIF's head: an image type docsearch does not read. */
const GIF = Buffer.from('474946383961010001000000002c00000000010001000002', 'hex');
const REDIRECT = 'http://127.0.0.1:9/actions-cb';

/** The notice or error a page shows once after a form (see session.ts flash). */
const flashOf = (page: string) => /<(?:p|div) class="(?:notice|error) flash" role="(?:status|alert)">([^<]*?)(?: <form|<\/p>)/.exec(page)?.[1] ?? null;
/** The Undo form of a delete's notice: the ids it puts back and where it returns to. */
function undoOf(page: string): { ids: string[]; returnTo: string } | null {
  const form = /<div class="notice flash" role="status">[^<]*<form method="post" action="\/trash\/restore" class="inline">([\s\S]*?)<\/form>/.exec(page)?.[1];
  if (!form) return null;
  return {
    ids: [...form.matchAll(/<input type="hidden" name="ids" value="([^"]+)">/g)].map((m) => m[1]!),
    returnTo: /<input type="hidden" name="return_to" value="([^"]+)">/.exec(form)![1]!.replaceAll('&amp;', '&'),
  };
}

describe('library actions: confirmations, messages, the Documents page, uploads', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let field: string;
  let archive: string;

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
      web = await loggedIn(d, alice);
      field = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Field notes' } })).body.id;
      archive = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Archive' } })).body.id;
    },
    { setupTimeoutMs: 120_000 },
  );

  async function uploaded(projectId: string, files: { name: string; body: string | Buffer }[]): Promise<string[]> {
    await web.get(`/projects/${projectId}`);
    const up = await uploadAs(web, projectId, files);
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    const ids = up.body.documents.map((x: { id: string }) => x.id) as string[];
    await waitSettled(d, alice, ids);
    return ids;
  }

  it('deleting a document asks first (row and page), works without script, and says what was deleted', async () => {
    const [id] = await uploaded(field, [{ name: 'doomed notes.txt', body: 'These notes about avalanche paths will be deleted.\n' }]);
    const project = await web.get(`/projects/${field}`);
    // No one-click delete form on the row any more: a link to the confirmation.
    expect(project.text).not.toContain(`action="/documents/${id}/delete"`);
    expect(project.text).toContain(`href="/documents/${id}/delete"`);
    const docPage = await web.get(`/documents/${id}`);
    expect(docPage.text).not.toContain(`action="/documents/${id}/delete"`);
    expect(docPage.text).toContain(`href="/documents/${id}/delete"`);

    const confirm = await web.get(`/documents/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('<h1>Delete “doomed notes.txt”?</h1>');
    expect(confirm.text).toContain('Search stops finding it at once (1 chunk)');
    expect(confirm.text).toContain(`href="/projects/${field}" class="button">Cancel</a>`);
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(200); // asking changed nothing
    const done = await web.post('/documents/delete', { _csrf: web.csrf, ids: [id!], return_to: `/projects/${field}` });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/projects/${field}`);
    const after = await web.get(`/projects/${field}`);
    // The days the confirmation named, and an Undo that puts it back (issue 62: "for now", no Undo, before).
    expect(flashOf(after.text)).toBe('Deleted “doomed notes.txt”: the Trash keeps it for 30 days.');
    const undo = undoOf(after.text);
    expect(undo).toEqual({ ids: [id], returnTo: `/projects/${field}` });
    expect(flashOf((await web.get(`/projects/${field}`)).text)).toBeNull(); // said once
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(404);
    // Someone else's Undo with these ids puts back nothing and confirms nothing.
    const bobWeb = await loggedIn(d, bob);
    await bobWeb.get('/documents');
    const foreign = await bobWeb.post('/trash/restore', { _csrf: bobWeb.csrf, ids: undo!.ids, return_to: '/documents' });
    expect(foreign.status).toBe(303);
    expect(flashOf((await bobWeb.get('/documents')).text)).toBe('Nothing to restore: those documents are no longer in the Trash.');
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(404);
    const undone = await web.post('/trash/restore', { _csrf: web.csrf, ids: undo!.ids, return_to: undo!.returnTo });
    expect(undone.location).toBe(`/projects/${field}`);
    expect(flashOf((await web.get(`/projects/${field}`)).text)).toBe('Restored “doomed notes.txt”: search finds it again.');
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(200);
    expect((await web.post('/documents/delete', { _csrf: web.csrf, ids: [id!], return_to: `/projects/${field}` })).status).toBe(303);
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(404);
    // Another user's document: no confirmation page, and a forged confirmation deletes nothing.
    const [kept] = await uploaded(field, [{ name: 'kept.txt', body: 'Kept notes about golden eagles.\n' }]);
    const other = await loggedIn(d, bob);
    expect((await other.get(`/documents/${kept}/delete`)).status).toBe(404);
    await other.get('/documents');
    await other.post('/documents/delete', { _csrf: other.csrf, ids: [kept!] });
    expect((await api(d, `/api/v1/documents/${kept}`, { token: alice.apiKey })).status).toBe(200);
    expect((await web.post('/documents/delete', { ids: [kept!] })).status).toBe(403);
  });

  it('revoking an API key, a connected app’s access, or deleting or rotating an application asks first, then says so', async () => {
    const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'ci uploads', scopes: ['read:documents'] } });
    const keys = await web.get('/settings/keys');
    expect(keys.text).not.toContain(`action="/settings/keys/${key.body.id}/revoke"`);
    expect(keys.text).toContain(`href="/settings/keys/${key.body.id}/revoke"`);
    const confirm = await web.get(`/settings/keys/${key.body.id}/revoke`);
    expect(confirm.text).toContain('<h1>Revoke the key “ci uploads”?</h1>');
    expect(confirm.text).toContain(`<code>${key.body.key.slice(0, 8)}…${key.body.key.slice(-4)}</code>`);
    expect((await api(d, '/api/v1/projects', { token: key.body.key })).status).toBe(200);
    const revoked = await web.post(`/settings/keys/${key.body.id}/revoke`, { _csrf: web.csrf });
    expect(revoked.location).toBe('/settings/keys');
    expect(flashOf((await web.get('/settings/keys')).text)).toBe('Revoked the key “ci uploads”.');
    expect((await api(d, '/api/v1/projects', { token: key.body.key })).status).toBe(401);
    expect((await (await loggedIn(d, bob)).get(`/settings/keys/${key.body.id}/revoke`)).status).toBe(404);

    await web.get('/settings/applications');
    const registered = await web.submit('/settings/applications', { _csrf: web.csrf, name: 'Notes App', redirect_uris: REDIRECT });
    const clientId = /id="new-client-id" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const secret = /id="new-client-secret" readonly value="([^"]+)"/.exec(registered.text)![1]!;
    const tokens = await post(d, '/api/oauth/token', {
      grant_type: 'authorization_code',
      code: await getCode(web, { client_id: clientId, redirect_uri: REDIRECT }),
      client_id: clientId,
      client_secret: secret,
      redirect_uri: REDIRECT,
    });
    expect(tokens.status).toBe(200);
    const connected = await web.get('/settings/connected');
    expect(connected.text).not.toContain(`action="/settings/connected/${clientId}/revoke"`);
    const ask = await web.get(`/settings/connected/${clientId}/revoke`);
    expect(ask.text).toContain('<h1>Revoke access of “Notes App”?</h1>');
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(200);
    await web.post(`/settings/connected/${clientId}/revoke`, { _csrf: web.csrf });
    expect(flashOf((await web.get('/settings/connected')).text)).toBe('Revoked the access of “Notes App”.');
    expect((await api(d, '/api/v1/projects', { token: tokens.body.access_token })).status).toBe(401);

    const apps = await web.get('/settings/applications');
    expect(apps.text).not.toContain(`action="/settings/applications/${clientId}/delete"`);
    expect(apps.text).not.toContain(`action="/settings/applications/${clientId}/rotate"`);
    expect((await web.get(`/settings/applications/${clientId}/rotate`)).text).toContain('<h1>Rotate the secret of “Notes App”?</h1>');
    const del = await web.get(`/settings/applications/${clientId}/delete`);
    expect(del.text).toContain('<h1>Delete the application “Notes App”?</h1>');
    await web.post(`/settings/applications/${clientId}/delete`, { _csrf: web.csrf });
    expect(flashOf((await web.get('/settings/applications')).text)).toBe('Deleted the application “Notes App”; its tokens no longer work.');
  });

  it('the Documents page: every project’s documents, filtered, sorted, paged past a page; bulk move and delete', async () => {
    const many = Array.from({ length: 55 }, (_, i) => ({ name: `note-${String(i).padStart(2, '0')}.txt`, body: `Field note ${i}: the marmots whistled ${i} times.\n` }));
    for (let i = 0; i < many.length; i += 20) await uploaded(archive, many.slice(i, i + 20));
    const [pdf] = await uploaded(field, [{ name: 'Survey.pdf', body: makePdf([[{ lines: ['Alpine survey with a path.'] }]]) }]);

    const first = await web.get('/documents?sort=name&project_id=' + archive);
    expect(first.status).toBe(200);
    const names = (page: string) => [...page.matchAll(/class="filename">([^<]+)<\/a>/g)].map((m) => m[1]);
    expect(names(first.text)).toEqual(many.slice(0, 50).map((f) => f.name));
    const next = /<a href="([^"]+)" rel="next"/.exec(first.text)![1]!.replaceAll('&amp;', '&');
    const second = await web.get(next);
    expect(names(second.text)).toEqual(many.slice(50).map((f) => f.name));
    expect(second.text).not.toContain('rel="next"');
    expect(second.text).toContain('← First page');
    // Filters: type, name, dates (both days included), any project.
    expect(names((await web.get('/documents?type=pdf')).text)).toEqual(['Survey.pdf']);
    expect(names((await web.get('/documents?filename=NOTE-5&sort=-name')).text)).toEqual(['note-54.txt', 'note-53.txt', 'note-52.txt', 'note-51.txt', 'note-50.txt']);
    // The day the PDF was uploaded, not the clock's: a run that crosses midnight (UTC) after the upload is not a defect.
    const day = String((await api(d, `/api/v1/documents/${pdf}`, { token: alice.apiKey })).body.created_at).slice(0, 10);
    expect(names((await web.get(`/documents?type=pdf&from=${day}&to=${day}`)).text)).toEqual(['Survey.pdf']);
    expect((await web.get('/documents?from=soon')).text).toContain('This filter could not be used (uploaded_since: must be a date');
    const all = await web.get('/documents?type=pdf');
    expect(all.text).toContain(`<a href="/projects/${field}" class="project-name">Field notes</a>`);
    // Bob's Documents page has none of it.
    expect(names((await (await loggedIn(d, bob)).get('/documents')).text)).toEqual([]);

    // Bulk move: two of Archive's notes and the PDF to Field notes (the PDF is there already: nothing to do).
    // Against the ids' own order, which the store answers in: the undo keeps the order they were picked in.
    const picked = [...second.text.matchAll(/name="ids" value="([^"]+)"/g)].map((m) => m[1]!).slice(0, 2).sort().reverse();
    const moved = await web.post('/documents/bulk', { _csrf: web.csrf, action: 'move', project_id: field, ids: [...picked, pdf!], return_to: next });
    expect(moved.status).toBe(303);
    expect(moved.location).toBe(next);
    expect(flashOf((await web.get('/documents')).text)).toBe('Moved 3 documents to “Field notes”.');
    for (const id of picked) expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.project_id).toBe(field);
    const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'marmots whistled 50 times', mode: 'keyword', project_ids: [field] } });
    expect(search.body.results.map((r: { document: { id: string } }) => r.document.id)).toContain(picked[0]);
    expect((await web.post('/documents/bulk', { _csrf: web.csrf, action: 'move', project_id: archive, return_to: '/documents' })).location).toBe('/documents');
    expect(flashOf((await web.get('/documents')).text)).toBe('Select one or more documents first.');

    // Bulk delete asks first, naming each, then deletes exactly those.
    // Asked at the list's address, after a 303 (Post/Redirect/Get): a reload shows the list, posting nothing.
    const ask = await web.submit('/documents/bulk', { _csrf: web.csrf, action: 'delete', ids: picked, return_to: '/documents?sort=name' });
    expect(ask.redirectedFrom).toMatchObject({ status: 303, location: '/documents?sort=name' });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('<h1>Delete 2 documents?</h1>');
    expect(ask.text).toContain('<li class="filename">note-50.txt</li>');
    expect(ask.text).toContain('<button type="submit" class="danger" id="confirm">Delete 2 documents</button>');
    for (const id of picked) expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(200);
    const gone = await web.post('/documents/delete', { _csrf: web.csrf, ids: picked, return_to: '/documents?sort=name' });
    expect(gone.location).toBe('/documents?sort=name');
    const list = (await web.get('/documents?sort=name')).text;
    expect(flashOf(list)).toBe('Deleted 2 documents: the Trash keeps them for 30 days.');
    expect(undoOf(list)).toEqual({ ids: picked, returnTo: '/documents?sort=name' });
    for (const id of picked) expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(404);
  }, 240_000);

  it('project lists say how many documents are still being indexed', async () => {
    await web.get(`/projects/${field}`);
    const up = await uploadAs(web, field, [{ name: 'long.txt', body: 'The survey team walked the transect and counted marmots. '.repeat(600) }]);
    const id = up.body.documents[0].id;
    const projects = await web.get('/projects');
    const row = projects.text.slice(projects.text.indexOf(`data-project-id="${field}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('Still indexing 1 document');
    expect((await web.get(`/projects/${field}`)).text).toMatch(/id="project-summary">[^<]* · still indexing 1 document</);
    expect((await web.get('/documents')).text).toContain('Still indexing 1 document: search finds it once it is ready.');
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    expect((await web.get('/projects')).text).not.toMatch(/still indexing/i);
  }, 180_000);

  it('uploads without script keep the good files, name the refused ones, and keep a folder’s paths', async () => {
    await web.get(`/projects/${archive}`);
    const mixed = await uploadAs(
      web,
      archive,
      [
        { name: 'report.pdf', body: makePdf([[{ lines: ['Quarterly glacier report.'] }]]) },
        { name: 'photo.gif', body: GIF },
      ],
      { via: 'field', accept: 'text/html' },
    );
    expect(mixed.status).toBe(303);
    expect(mixed.location).toBe(`/projects/${archive}`);
    const page = await web.get(`/projects/${archive}`);
    expect(flashOf(page.text)).toBe(
      `Uploaded 1 file; it is being indexed. Not uploaded: &quot;photo.gif&quot; is not a type docsearch reads (accepted: ${acceptedList()}).`,
    );
    expect(page.text).toContain('>report.pdf</a>');
    const onlyBad = await uploadAs(web, archive, [{ name: 'photo.gif', body: GIF }], { via: 'field', accept: 'text/html' });
    expect(onlyBad.status).toBe(303);
    expect(flashOf((await web.get(`/projects/${archive}`)).text)).toBe(`Not uploaded: &quot;photo.gif&quot; is not a type docsearch reads (accepted: ${acceptedList()}).`);
    // The script's upload (one file, JSON) still answers 415 with the reason.
    expect((await uploadAs(web, archive, [{ name: 'photo.gif', body: GIF }])).status).toBe(415);

    // A browser posting a folder names each file by its path inside it: kept as the document's path.
    const folder = await uploadAs(web, archive, [{ name: 'trip/day 1/notes.txt', body: 'Day one: fog on the pass.\n' }], { via: 'field', accept: 'text/html' });
    expect(folder.status).toBe(303);
    const listed = await api(d, `/api/v1/documents?project_id=${archive}&path=${encodeURIComponent('trip/day 1/notes.txt')}`, { token: alice.apiKey });
    expect(listed.body.documents.map((x: { filename: string; path: string }) => [x.filename, x.path])).toEqual([['notes.txt', 'trip/day 1/notes.txt']]);
    // The script sends a folder's paths in `paths`.
    await web.get(`/projects/${archive}`);
    const form = new FormData();
    form.append('paths', JSON.stringify(['trip/day 2.txt']));
    form.append('file', new Blob(['Day two: sun on the glacier.\n']), 'day 2.txt');
    const res = await fetch(`${d.url}/projects/${archive}/upload`, {
      method: 'POST',
      headers: { accept: 'application/json', 'x-csrf-token': web.csrf, cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body: form,
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { documents: { id: string }[] }).documents[0]!.id;
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.path).toBe('trip/day 2.txt');
    expect((await web.get(`/documents/${id}`)).text).toContain('<dt>Path</dt><dd class="path">trip/day 2.txt</dd>');
  });

  it('answers every refused small form upload, 600 in a row, rather than closing the socket under the client', async () => {
    // Refused at its first file part, the body's rest was left unread and the connection closed with the answer: a
    // client still writing met EPIPE ("fetch failed") instead of the 403 — once in 600 here under load, and in CI.
    // A small body's rest is read to its end first now.
    await web.get(`/projects/${archive}`);
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      for (const via of ['header', 'field'] as const) {
        const body = 'forged upload\n'.repeat(i % 7 === 0 ? 3000 : 1);
        await uploadAs(web, archive, [{ name: 'forged.txt', body }], { csrf: 'forged', via }).then(
          (up) => up.status !== 403 && failures.push(`${i} via ${via}: ${up.status}`),
          (err: Error) => failures.push(`${i} via ${via}: ${err.message} (${String(err.cause)})`),
        );
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('refuses a form upload without its token before any file arrives, not after the whole body', async () => {
    // A forged form post of a large file (a page elsewhere, the person's cookie): the token field comes first in the
    // form, so the refusal needs none of the file. The client sends the field, the file's head and 64 KiB of the
    // 200 MiB it declares, then waits: the 403 must come while the rest is still unsent.
    await web.get(`/projects/${archive}`);
    const boundary = `----forged${Date.now()}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\nnot-the-token\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const declared = head.length + 200 * 1024 * 1024;
    const tmpBefore = readdirSync(join(d.dataDir, 'files', 'tmp')).sort();
    const req = request(`${d.url}/projects/${archive}/upload`, {
      method: 'POST',
      headers: {
        accept: 'text/html',
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(declared),
        cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    req.on('error', () => undefined); // the server closes the connection once it has answered
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer in 10 s: the server waits for the rest of the body')), 10_000);
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', () => resolve({ status: res.statusCode ?? 0, body }));
      });
    });
    req.write(head);
    req.write(Buffer.alloc(64 * 1024, 'a'));
    try {
      const res = await answer;
      expect(res.status).toBe(403);
      expect(res.body).toContain('the form expired or did not come from this site');
    } finally {
      req.destroy();
    }
    expect(readdirSync(join(d.dataDir, 'files', 'tmp')).sort()).toEqual(tmpBefore);
    const listed = await api(d, `/api/v1/documents?project_id=${archive}&limit=100`, { token: alice.apiKey });
    expect(listed.body.documents.map((x: { filename: string }) => x.filename)).not.toContain('big.txt');
    // A forged form with no file at all is refused as such too, not answered with the page's "choose files first".
    const empty = await uploadAs(web, archive, [], { csrf: 'not-the-token', via: 'field', accept: 'text/html' });
    expect(empty.status).toBe(403);
    expect(String(empty.body)).toContain('the form expired or did not come from this site');
  });

  it('the Sources form: kind first with only that kind\'s fields, examples a default server accepts, a schedule picker; a failed source is one state', async () => {
    const base = `/projects/${archive}/sources`;
    const first = await web.get(base);
    // Kind first: the kinds, and no form until one is chosen; folders are not offered on a server without --source-roots.
    expect(first.text).not.toContain('id="add-form"');
    for (const kind of ['web', 'webdav', 's3', 'git', 'imap']) expect(first.text).toContain(`href="${base}?kind=${kind}#add-source"`);
    expect(first.text).not.toContain(`?kind=folder`);
    expect(first.text).toContain('Not on this server: its operator allows folders with --source-roots.');

    const fieldsOf = (page: string) => [...page.slice(page.indexOf('id="add-form"')).matchAll(/<(?:input|select|textarea)[^>]* name="([^"]+)"/g)].map((m) => m[1]!).sort();
    const expected: Record<string, string[]> = {
      web: ['max_pages', 'include', 'exclude'],
      webdav: ['username', 'secret_password', 'include', 'exclude'],
      s3: ['endpoint', 'region', 'access_key_id', 'secret_secret_access_key', 'include', 'exclude'],
      git: ['branch', 'username', 'secret_password', 'include', 'exclude'],
      imap: ['username', 'secret_password', 'move_to'],
    };
    const added: string[] = [];
    for (const [kind, own] of Object.entries(expected)) {
      const page = (await web.get(`${base}?kind=${kind}`)).text;
      // Only that kind's fields (user name and password only for kinds that take them), the schedule as a picker.
      expect(fieldsOf(page), kind).toEqual(['_csrf', 'kind', 'url', 'every', 'every_other', ...own].sort());
      expect(page).toContain('<select name="every" data-schedule');
      expect(page).toContain('e.g. 2h, 1h30m or 3d');
      const example = /<span class="hint" id="url-hint">e\.g\. <code class="url">([^<]+)<\/code>/.exec(page)![1]!.replaceAll('&amp;', '&');
      // The example under the URL is one this server accepts, as it is.
      const fields: Record<string, string> = { _csrf: web.csrf, kind, url: example, every: kind === 'git' ? 'other' : '1d', every_other: '2h30m' };
      if (kind === 'imap') Object.assign(fields, { username: 'archive@example.com', secret_password: 'imap-secret' });
      const saved = await web.submit(base, fields);
      expect(saved.redirectedFrom?.status, `${kind}: ${/role="alert">([^<]*)/.exec(saved.text)?.[1]}`).toBe(303);
      expect(saved.text).toContain(`Added ${example}`);
      const listed = (await api(d, `/api/v1/projects/${archive}/sources`, { token: alice.apiKey })).body.sources as { id: string; url: string; kind: string; every: string }[];
      const source = listed.find((x) => x.url === example)!;
      expect(source, kind).toMatchObject({ kind, every: kind === 'git' ? '2h30m' : '1d' });
      added.push(source.id);
    }

    // A refused value keeps the form as it was typed (its kind, its fields), never a secret.
    // Said after a 303 to the tab with that kind chosen (Post/Redirect/Get): a reload posts nothing again.
    const refused = await web.submit(base, { _csrf: web.csrf, kind: 's3', url: 's3://field-notes/survey/', endpoint: 'https://minio.example.com:9000', secret_secret_access_key: 'never-shown', every: 'other', every_other: '5s' });
    expect(refused.redirectedFrom).toMatchObject({ status: 303, location: `${base}?kind=s3` });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('The source was not added: every: at least');
    expect(refused.text).toContain('<input type="hidden" name="kind" value="s3">');
    expect(refused.text).toContain('value="https://minio.example.com:9000"');
    expect(refused.text).toContain('<option value="other" selected>');
    expect(refused.text).not.toContain('never-shown');

    // The edit form has the same fields as its kind's add form, filled in (a secret never).
    const imap = added[4]!;
    const edit = (await web.get(`${base}/${imap}/edit`)).text;
    const editForm = edit.slice(edit.indexOf('id="edit-source"'), edit.indexOf('</form>', edit.indexOf('id="edit-source"')));
    expect([...editForm.matchAll(/<(?:input|select|textarea)[^>]* name="([^"]+)"/g)].map((m) => m[1]!).sort()).toEqual(['_csrf', 'every', 'every_other', 'move_to', 'secret_password', 'username'].sort());
    expect(edit).toContain('value="archive@example.com"');
    expect(edit).not.toContain('imap-secret');
    expect(edit).toContain('<option value="1d" selected>Every day</option>');
    // Refused, the edit form again as typed (its secret never), after a 303 to it.
    const unsaved = await web.submit(`${base}/${imap}/edit`, { _csrf: web.csrf, every: 'other', every_other: '5s', username: 'typed@example.com', secret_password: 'typed-secret', move_to: '' });
    expect(unsaved.redirectedFrom).toMatchObject({ status: 303, location: `${base}/${imap}/edit` });
    expect(unsaved.status).toBe(400);
    expect(unsaved.text).toContain('Nothing was changed: every: at least');
    expect(unsaved.text).toContain('value="typed@example.com"');
    expect(unsaved.text).not.toContain('typed-secret');
    expect((await web.get(`${base}/${imap}/edit`)).text).toContain('value="archive@example.com"');

    // A source whose pass failed says so once: "Failed" and why, not "No pass has finished yet" beside it.
    const web_ = added[0]!;
    let card = '';
    await expect
      .poll(
        async () => {
          const page = (await web.get(base)).text;
          card = page.slice(page.indexOf(`data-source-id="${web_}"`), page.indexOf('</li>', page.indexOf(`data-source-id="${web_}"`)));
          return card.includes('data-status="error"');
        },
        { timeout: 60_000, interval: 500 },
      )
      .toBe(true);
    expect(card).toContain('>Failed</span>');
    expect(card).toContain('The last pass failed:');
    expect(card).not.toContain('No pass has finished yet');
    expect(card).not.toContain('>error</span>');
    for (const id of added) await api(d, `/api/v1/projects/${archive}/sources/${id}`, { token: alice.apiKey, method: 'DELETE' });
  });

  it('says what is wrong with a project name in words; serves a favicon; a flash can’t be written by a link', async () => {
    await web.get('/projects');
    const blank = await web.submit('/projects', { _csrf: web.csrf, name: '   ', description: '' });
    expect(blank.status).toBe(400);
    expect(blank.text).toContain('<p class="error" role="alert">Name must not be empty.</p>');
    const long = await web.submit('/projects', { _csrf: web.csrf, name: 'x'.repeat(101), description: '' });
    expect(long.text).toContain('Name must be at most 100 characters.');
    const api400 = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: ' ' } });
    expect(api400.body.error.message).toBe('body.name: must not be empty');

    const icon = await fetch(`${d.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect(Buffer.from(await icon.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
    expect((await web.get('/projects')).text).toContain('<link rel="icon" href="/favicon.ico">');

    expect(flashOf((await web.get('/projects?flash=Your+account+is+locked&notice=x')).text)).toBeNull();
    // An error page is never a dead end.
    const refused = await web.post('/projects', { name: 'no token' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<a href="/" class="back">Back to docsearch</a>');
  });

  it('a refusal of a document the person can read names it, its project, their role and the one needed; one they cannot read stays unknown', async () => {
    const [shown] = await uploaded(archive, [{ name: 'ledger.txt', body: 'The ledger of the lighthouse keepers.\n' }]);
    const [hidden] = await uploaded(field, [{ name: 'private.txt', body: 'Notes Bob may not read.\n' }]);
    expect((await api(d, `/api/v1/projects/${archive}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
    const words = '"ledger.txt" is in the project "Archive", where your role is viewer: this needs editor';
    const refused = await api(d, `/api/v1/documents/${shown}`, { method: 'DELETE', token: bob.apiKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', message: words, details: { role: 'viewer', required_role: 'editor', document_id: shown } });
    expect((await api(d, `/api/v1/documents/${hidden}`, { method: 'DELETE', token: bob.apiKey })).status).toBe(404);
    const viewer = await loggedIn(d, bob);
    await viewer.get('/documents');
    await viewer.post('/documents/bulk', { _csrf: viewer.csrf, action: 'delete', ids: [shown!, hidden!], return_to: '/documents' });
    const page = (await viewer.get('/documents')).text;
    expect(flashOf(page)?.replaceAll('&quot;', '"')).toBe(`${words}.`);
    expect(page).not.toContain('private.txt');
    await viewer.post('/documents/bulk', { _csrf: viewer.csrf, action: 'delete', ids: [hidden!], return_to: '/documents' });
    expect(flashOf((await viewer.get('/documents')).text)).toBe('Select one or more documents first.');
    expect((await api(d, `/api/v1/documents/${shown}`, { token: alice.apiKey })).status).toBe(200);
  });
  it('a refused rename or labels form keeps what was typed and names the label at fault; nothing changes; a label or source gone is named', async () => {
    const [id] = await uploaded(archive, [{ name: 'minutes.txt', body: 'Minutes of the harbour board.\n' }]);
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: alice.apiKey, body: { labels: ['board'] } })).status).toBe(200);
    const field = (page: string, name: string) => new RegExp(`<input type="text" name="${name}"[^>]* value="([^"]*)"`).exec(page)?.[1];
    await web.get(`/documents/${id}`);
    // A name with a slash: refused in words, the typed name still in the field to correct (it was reset before).
    // Said after a 303 to the document's page (Post/Redirect/Get): a reload reloads it, and posts nothing.
    const renamed = await web.submit(`/documents/${id}/rename`, { _csrf: web.csrf, filename: 'Q1/Q2 minutes — Hafen.txt' });
    expect(renamed.redirectedFrom?.location).toBe(`/documents/${id}`);
    expect(renamed.status).toBe(400);
    expect(renamed.text).toContain('<p class="error" role="alert">The name must not contain / or \\.</p>');
    expect(field(renamed.text, 'filename')).toBe('Q1/Q2 minutes — Hafen.txt');
    // A label past 64 characters: the label is named (the API's "labels.1" before), and the list typed stays.
    const long = 'Protokoll der Hafenbehörde über die Sitzung vom dritten März zweitausendsechsundzwanzig';
    const typed = `board, ${long}, zoll`;
    const labelled = await web.submit(`/documents/${id}/labels`, { _csrf: web.csrf, labels: typed });
    expect(labelled.status).toBe(400);
    expect(labelled.text).toContain(`<p class="error" role="alert">Labels not changed: The label “${long}” must be at most 64 characters.</p>`);
    expect(field(labelled.text, 'labels')).toBe(typed);
    const doc = (await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body;
    expect({ filename: doc.filename, labels: doc.labels }).toEqual({ filename: 'minutes.txt', labels: ['board'] });
    // The Documents page's bulk labels say the same.
    await web.get('/documents');
    const bulk = await web.submit('/documents/bulk', { _csrf: web.csrf, action: 'label', ids: [id!], labels: long, return_to: '/documents' });
    expect(bulk.status).toBe(400);
    expect(bulk.text).toContain(`<p class="error" role="alert">The label “${long}” must be at most 64 characters.</p>`);
    // A label's rename refused on the Labels tab keeps the name typed in that label's row.
    const board = ((await api(d, `/api/v1/projects/${archive}/labels`, { token: alice.apiKey })).body.labels as { id: string; name: string }[]).find((l) => l.name === 'board')!;
    await web.get(`/projects/${archive}/labels`);
    const refused = await web.submit(`/projects/${archive}/labels/${board.id}`, { _csrf: web.csrf, name: 'board, minutes', color: 'red' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('“board” not changed: The name must not contain a comma.');
    expect(refused.text).toContain(`<input type="text" name="name" value="board, minutes" maxlength="128" required size="14" aria-label="New name for board">`);
    // A label or source gone since the page was loaded (another tab) is named as such, not as a missing project.
    expect((await api(d, `/api/v1/projects/${archive}/labels/${board.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    const goneLabel = await web.get(`/projects/${archive}/labels/${board.id}/delete`);
    expect(goneLabel.status).toBe(404);
    expect(goneLabel.text).toContain('There is no such label in this project (deleted already?).');
    const goneSource = await web.get(`/projects/${archive}/sources/src_000000000ZZZZZZZZZZZZ/edit`);
    expect(goneSource.status).toBe(404);
    expect(goneSource.text).toContain('There is no such source in this project (deleted already?).');
  });

  it('a refused project rename on Settings keeps the name and description typed, and changes nothing', async () => {
    const before = (await api(d, `/api/v1/projects/${archive}`, { token: alice.apiKey })).body;
    const description = 'Letters of the harbour master, 1890–1920: ledgers, logs and the Hafenamt’s replies.';
    await web.get(`/projects/${archive}/settings`);
    const taken = await web.submit(`/projects/${archive}/edit`, { _csrf: web.csrf, name: 'Field notes', description });
    expect(taken.redirectedFrom?.location).toBe(`/projects/${archive}/settings`);
    expect(taken.status).toBe(409);
    expect(taken.text).toContain('<p class="error" role="alert">Its owner already has a project named “Field notes”.</p>');
    expect(taken.text).toContain('<input type="text" name="name" maxlength="200" required value="Field notes">');
    expect(taken.text).toContain(`<textarea name="description" rows="2" maxlength="4000">${description}</textarea>`);
    const blank = await web.submit(`/projects/${archive}/edit`, { _csrf: web.csrf, name: '  ', description });
    expect(blank.status).toBe(400);
    expect(blank.text).toContain(`<textarea name="description" rows="2" maxlength="4000">${description}</textarea>`);
    const after = (await api(d, `/api/v1/projects/${archive}`, { token: alice.apiKey })).body;
    expect({ name: after.name, description: after.description }).toEqual({ name: before.name, description: before.description });
  });

  it('a delete confirmed again after the documents went says nothing was deleted, instead of nothing at all', async () => {
    const ids = await uploaded(archive, [
      { name: 'twice-a.txt', body: 'First of two notes about tides.\n' },
      { name: 'twice-b.txt', body: 'Second of two notes about tides.\n' },
    ]);
    await web.get('/documents');
    expect((await web.submit('/documents/delete', { _csrf: web.csrf, ids, return_to: '/documents' })).text).toContain('Deleted 2 documents');
    // The same confirmation posted again (another tab, Back and resubmit): the documents are in the Trash.
    const again = await web.submit('/documents/delete', { _csrf: web.csrf, ids, return_to: '/documents' });
    expect(again.redirectedFrom?.location).toBe('/documents');
    expect(flashOf(again.text)).toBe('Nothing was deleted: those documents are not in your library, or already in the Trash.');
    for (const id of ids) expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(404);
  });

  it('the Settings tab sets the language and OCR languages new uploads get, through the same checks as PATCH /projects/{id}', async () => {
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Handbuch' } })).body.id as string;
    const settings = (await web.get(`/projects/${project}/settings`)).text;
    expect(settings).toContain(`<form method="post" action="/projects/${project}/languages"`);
    expect(settings).toContain('<option value="">Detected for each passage</option>');
    expect(settings).toContain('<option value="de">German (de)</option>');
    // The installed packs are offered (eng always; deu is in .ci/run's PACKAGES), none ticked: the server's default.
    for (const code of ['eng', 'deu']) expect(settings).toContain(`<input type="checkbox" name="ocr_languages" value="${code}"> ${code}</label>`);
    expect(settings).toContain('None ticked: the server’s default (eng).');

    const saved = await web.post(`/projects/${project}/languages`, { _csrf: web.csrf, language: 'de', ocr_languages: ['deu', 'eng'] });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/projects/${project}/settings#languages`);
    expect((await api(d, `/api/v1/projects/${project}`, { token: alice.apiKey })).body).toMatchObject({ language: 'de', ocr_languages: 'deu+eng' });
    const shown = (await web.get(`/projects/${project}/settings`)).text;
    expect(flashOf(shown)).toBe('Saved the languages: new uploads get them.');
    expect(shown).toContain('<option value="de" selected>German (de)</option>');
    expect(shown).toContain('<input type="checkbox" name="ocr_languages" value="deu" checked> deu</label>');
    // A new upload gets them.
    const [doc] = await uploaded(project, [{ name: 'fahrraeder.txt', body: 'Die Fahrräder stehen im Keller.\n' }]);
    expect((await api(d, `/api/v1/documents/${doc}`, { token: alice.apiKey })).body).toMatchObject({ language: 'de', ocr_languages: 'deu+eng' });

    // A pack the setting names but this server lacks is named, with what to install.
    expect((await api(d, `/api/v1/projects/${project}`, { method: 'PATCH', token: alice.apiKey, body: { ocr_languages: 'deu+tha' } })).status).toBe(200);
    const missing = (await web.get(`/projects/${project}/settings`)).text;
    expect(missing).toContain('<input type="checkbox" name="ocr_languages" value="tha" checked> tha — not installed on this server</label>');
    expect(missing).toContain('OCR language “tha” is not installed on this server (Debian: tesseract-ocr-tha, or the npm package @tesseract.js-data/tha)');

    // The API's own checks refuse a bad value in words, and change nothing.
    const bad = await web.submit(`/projects/${project}/languages`, { _csrf: web.csrf, language: 'German', ocr_languages: ['deu'] });
    expect(bad.redirectedFrom).toMatchObject({ status: 303, location: `/projects/${project}/settings` });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Document language must be an ISO 639-1 language code (such as de, zh).');
    expect((await api(d, `/api/v1/projects/${project}`, { token: alice.apiKey })).body).toMatchObject({ language: 'de', ocr_languages: 'deu+tha' });
    // Nothing chosen clears both: detected, and the server's OCR languages.
    expect((await web.post(`/projects/${project}/languages`, { _csrf: web.csrf, language: '' })).status).toBe(303);
    expect((await api(d, `/api/v1/projects/${project}`, { token: alice.apiKey })).body).toMatchObject({ language: null, ocr_languages: null });
  });
});
