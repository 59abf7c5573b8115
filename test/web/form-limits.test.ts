/**
 * The web's forms take what the API takes, counted as it counts (characters are code points: an emoji is one, while
 * a browser's `maxlength` counts its two UTF-16 units), and a form refused comes back with what was typed in it and
 * why, with the refusal's status. Label names given twice in two spellings keep the first on every surface. The
 * daemon's first account is its admin, for the group form.
 */
import { describe, expect, it } from 'vitest';
import { MAX_FILTER_VALUES, MAX_LABEL_CHARS } from '../../src/core/label-name.js';
import { MAX_DESCRIPTION_CHARS, MAX_FILENAME_CHARS, MAX_NAME_CHARS } from '../../src/core/name-limits.js';
import { MAX_QUERY_CHARS } from '../../src/core/search-limits.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, runCli, type Daemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

/** Passkeys are offered on a host name only: the daemon's public URL is localhost, on a port chosen here. */
const PORT = await freePort();
const PUBLIC_URL = `http://localhost:${PORT}`;
const EMOJI = '🎉';
const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
/** The `maxlength` of every input named `name` on the page (in page order). */
const maxlengths = (page: string, name: string) => [...page.matchAll(new RegExp(`<input[^>]*name="${name}"[^>]*>`, 'g'))].map((m) => Number(/maxlength="(\d+)"/.exec(m[0])?.[1]));
/** The value of the first input named `name` on the page. */
const valueOf = (page: string, name: string) => decode(new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(page)?.[1] ?? '');

describe('web forms take what the API takes', () => {
  let d: Daemon;
  let user: TestUser;
  let web: WebClient;
  let projectId: string;
  let documentId: string;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    web = await loggedIn(d, user);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'harbour.txt', bytes: Buffer.from('The harbour works begin in spring.') }], { query: '?wait=true' });
    documentId = up.body.documents[0].id as string;
    projectId = up.body.documents[0].project_id as string;
  }, { args: ['--port', String(PORT), '--public-url', PUBLIC_URL] });

  it(`takes a query of ${MAX_QUERY_CHARS} emoji in both search boxes, as the API does; one character more is the page again with the query kept`, async () => {
    const query = EMOJI.repeat(MAX_QUERY_CHARS);
    expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'keyword' } })).status).toBe(200);
    const header = await web.get('/projects');
    const own = await web.get('/search');
    const limits = [...maxlengths(header.text, 'q'), ...maxlengths(own.text, 'q')];
    expect(limits).toHaveLength(2);
    for (const limit of limits) expect(limit).toBeGreaterThanOrEqual(query.length);
    const ok = await web.get(`/search?mode=keyword&q=${encodeURIComponent(query)}`);
    expect(ok.status).toBe(200);
    const over = await web.get(`/search?mode=keyword&q=${encodeURIComponent(`${query}a`)}`);
    expect(over.status).toBe(400);
    expect(over.text).toContain(`must be at most ${MAX_QUERY_CHARS} characters`);
    expect(valueOf(over.text, 'q')).toBe(`${query}a`);
  });

  it(`adds a label of ${MAX_LABEL_CHARS} emoji through the form; one more is the form again with the name kept`, async () => {
    const page = await web.get(`/projects/${projectId}/labels`);
    const name = EMOJI.repeat(MAX_LABEL_CHARS);
    for (const limit of maxlengths(page.text, 'name')) expect(limit).toBeGreaterThanOrEqual(name.length);
    const added = await web.post(`/projects/${projectId}/labels`, { _csrf: web.csrf, name });
    expect(added.status, added.text.slice(0, 300)).toBe(303);
    const labels = await api(d, `/api/v1/projects/${projectId}/labels`, { token: user.apiKey });
    expect((labels.body.labels as { name: string }[]).map((l) => l.name)).toContain(name);
    await web.get(`/projects/${projectId}/labels`);
    const over = await web.submit(`/projects/${projectId}/labels`, { _csrf: web.csrf, name: `${name}${EMOJI}` });
    expect(over.status).toBe(400);
    expect(over.text).toContain(`at most ${MAX_LABEL_CHARS} characters`);
    expect(decode(over.text)).toContain(`value="${name}${EMOJI}"`);
  });

  it(`takes a label of ${MAX_LABEL_CHARS} emoji from the CLI as the API does`, async () => {
    const name = EMOJI.repeat(MAX_LABEL_CHARS);
    const res = await runCli(['search', 'harbour', '--label', name, '--json'], { env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) });
    expect(res.stderr).not.toMatch(/at most/);
    expect(res.code, res.stderr).toBe(0);
  });

  it('keeps the spelling given first when a label is named twice in two cases, on the API and the web alike; a label there already keeps its own', async () => {
    const viaApi = await api(d, `/api/v1/documents/${documentId}`, { method: 'PATCH', token: user.apiKey, body: { labels: ['Draft', 'draft', 'DRAFT'] } });
    expect(viaApi.status, JSON.stringify(viaApi.body)).toBe(200);
    expect(viaApi.body.labels).toEqual(['Draft']);
    await web.get(`/documents/${documentId}`);
    const viaWeb = await web.post(`/documents/${documentId}/labels`, { _csrf: web.csrf, labels: 'Urgent, urgent, draft' });
    expect(viaWeb.status).toBe(303);
    const doc = await api(d, `/api/v1/documents/${documentId}`, { token: user.apiKey });
    expect([...doc.body.labels].sort()).toEqual(['Draft', 'Urgent']);
  });

  it(`saves a search under a name of ${MAX_NAME_CHARS} emoji; a name refused is the search again with the name kept and why`, async () => {
    const page = await web.get('/search?q=harbour&mode=keyword');
    const name = EMOJI.repeat(MAX_NAME_CHARS);
    for (const limit of maxlengths(page.text, 'name')) expect(limit).toBeGreaterThanOrEqual(name.length);
    const saved = await web.post('/search/save', { _csrf: web.csrf, q: 'harbour', mode: 'keyword', name });
    expect(saved.status).toBe(303);
    await web.get('/search?q=harbour&mode=keyword');
    const long = await web.submit('/search/save', { _csrf: web.csrf, q: 'harbour', mode: 'keyword', name: `${name}${EMOJI}` });
    expect(long.status).toBe(400);
    // Shown after a 303 to the search it was saved from (Post/Redirect/Get): a reload posts nothing again.
    expect(long.redirectedFrom).toMatchObject({ status: 303, location: '/search?q=harbour&mode=keyword' });
    expect(decode(long.text)).toContain(`value="${name}${EMOJI}"`);
    expect(long.text).toMatch(new RegExp(`<details class="save-search" id="save-search" open>[^]*at most ${MAX_NAME_CHARS} characters`));
    const taken = await web.submit('/search/save', { _csrf: web.csrf, q: 'harbour', mode: 'keyword', name: name });
    expect(taken.status).toBe(409);
    expect(decode(taken.text)).toContain(`value="${name}"`);
  });

  it(`takes names of ${MAX_NAME_CHARS} emoji and descriptions of ${MAX_DESCRIPTION_CHARS} through the project, group, API key and application forms`, async () => {
    const name = EMOJI.repeat(MAX_NAME_CHARS);
    const description = EMOJI.repeat(MAX_DESCRIPTION_CHARS);
    const forms: { page: string; action: string; fields: Record<string, string> }[] = [
      { page: '/projects', action: '/projects', fields: { name, description } },
      { page: '/admin/groups', action: '/admin/groups', fields: { name: `g${EMOJI.repeat(MAX_NAME_CHARS - 1)}`, description } },
      { page: '/settings/keys', action: '/settings/keys', fields: { name, scopes: 'read:documents' } },
      { page: '/settings/applications', action: '/settings/applications', fields: { name, redirect_uris: 'https://app.example.com/callback' } },
    ];
    for (const form of forms) {
      const page = await web.get(form.page);
      for (const field of ['name', 'description']) for (const limit of maxlengths(page.text, field)) expect(limit, `${form.page} ${field}`).toBeGreaterThanOrEqual(name.length);
      if ('description' in form.fields) expect(page.text).toMatch(new RegExp(`<textarea name="description"[^>]*maxlength="${description.length}"`));
      const res = await web.post(form.action, { _csrf: web.csrf, ...form.fields });
      expect.soft(res.status, `${form.action}: ${res.text.match(/class="error"[^>]*>([^<]*)/)?.[1] ?? res.text.slice(0, 200)}`).toBe(303);
    }
  });

  it(`refuses an API key name over ${MAX_NAME_CHARS} characters with the form kept, rather than cutting it`, async () => {
    await web.get('/settings/keys');
    const long = `${'k'.repeat(MAX_NAME_CHARS)}x`;
    const res = await web.submit('/settings/keys', { _csrf: web.csrf, name: long, scopes: 'read:documents' });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`at most ${MAX_NAME_CHARS} characters`);
    expect(res.text).toContain(`value="${long}"`);
    const keys = await api(d, '/api/v1/keys', { token: user.apiKey });
    expect(keys.status).toBe(200);
    expect(JSON.stringify(keys.body)).not.toContain('k'.repeat(MAX_NAME_CHARS));
  });

  it(`renames a document to ${MAX_FILENAME_CHARS} emoji and gives it ${MAX_FILTER_VALUES} labels of ${MAX_LABEL_CHARS} characters through its page`, async () => {
    const page = await web.get(`/documents/${documentId}`);
    const filename = EMOJI.repeat(MAX_FILENAME_CHARS);
    const labels = Array.from({ length: MAX_FILTER_VALUES }, (_, i) => `${String(i).padStart(3, '0')}${'l'.repeat(MAX_LABEL_CHARS - 3)}`).join(', ');
    expect(maxlengths(page.text, 'filename')[0]).toBeGreaterThanOrEqual(filename.length);
    expect(maxlengths(page.text, 'labels')[0]).toBeGreaterThanOrEqual(labels.length);
    expect((await web.post(`/documents/${documentId}/rename`, { _csrf: web.csrf, filename })).status).toBe(303);
    expect((await web.post(`/documents/${documentId}/labels`, { _csrf: web.csrf, labels })).status).toBe(303);
    const doc = await api(d, `/api/v1/documents/${documentId}`, { token: user.apiKey });
    expect(doc.body.filename).toBe(filename);
    expect(doc.body.labels).toHaveLength(MAX_FILTER_VALUES);
    const list = await web.get('/documents');
    for (const field of ['filename', 'labels']) expect(maxlengths(list.text, field)[0], field).toBeGreaterThanOrEqual(field === 'labels' ? labels.length : filename.length);
  });

  it(`renames a passkey to ${MAX_NAME_CHARS} emoji; a name over that is its form again, as typed, not a name cut short`, async () => {
    await web.get('/settings/security');
    const cookie = () => [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const postJson = async (path: string, body: unknown) => {
      const res = await fetch(d.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': web.csrf, cookie: cookie() }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const options = await postJson('/settings/security/passkeys/options', {});
    expect(options.status).toBe(200);
    expect((await postJson('/settings/security/passkeys', { response: registrationResponse(options.body as never, PUBLIC_URL), name: 'Laptop', alone: false })).status).toBe(200);
    const page = await web.get('/settings/security');
    const id = /\/settings\/security\/passkeys\/([^/"]+)\/rename/.exec(page.text)![1]!;
    const name = EMOJI.repeat(MAX_NAME_CHARS);
    expect(maxlengths(page.text, 'name')[0]).toBeGreaterThanOrEqual(name.length);
    expect((await web.post(`/settings/security/passkeys/${id}/rename`, { _csrf: web.csrf, name })).status).toBe(303);
    expect(decode((await web.get('/settings/security')).text)).toContain(`value="${name}"`);
    const over = await web.submit(`/settings/security/passkeys/${id}/rename`, { _csrf: web.csrf, name: `${name}x` });
    expect(over.status).toBe(400);
    expect(over.text).toContain(`at most ${MAX_NAME_CHARS} characters`);
    expect(decode(over.text)).toContain(`value="${name}x"`);
  });
});
