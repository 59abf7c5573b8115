/**
 * The search page's sidebar renames and deletes its author's saved searches, without JavaScript (server-rendered
 * forms with the session's CSRF token): Rename is a small form whose refusal is the page again with the name as typed;
 * Delete… asks first on a page of its own, then goes back to the search the person was on. Searches shared by others
 * show no such controls, and their forms refuse anyone but the author, as the API does.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { hiddenFields, type WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

/** The sidebar entry of the saved search called `name` (its `<li>`), or null. */
function entry(page: string, name: string): string | null {
  const nav = /<nav class="saved-searches"[\s\S]*?<\/nav>/.exec(page)?.[0] ?? '';
  return nav.split('<li>').find((li) => li.includes(`<bdi>${name}</bdi></a>`)) ?? null;
}

const unescape = (s: string) => s.replaceAll('&amp;', '&');

describe('saved searches in the web sidebar', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let project: string;
  const as = (user: TestUser, path: string, opts: { method?: string; body?: unknown } = {}) => api(d, path, { token: user.apiKey, ...opts });
  const save = async (user: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<string> => {
    const res = await as(user, '/api/v1/saved-searches', { body: { name, search: { query: 'harbour minutes' }, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  };
  const nameOf = async (id: string) => (await as(alice, `/api/v1/saved-searches/${id}`)).body.name as string | undefined;
  const SEARCH = '/search?q=harbour&mode=keyword&type=pdf';

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    bob = await addUser(d);
    project = (await as(alice, '/api/v1/projects', { body: { name: 'Harbour' } })).body.id;
    expect((await as(alice, `/api/v1/projects/${project}/members`, { body: { email: bob.email, role: 'editor' } })).status).toBe(201);
    web = await loggedIn(d, alice);
  });

  it('gives the author’s own entries Rename and Delete…, and none to those shared by others', async () => {
    const own = await save(alice, 'Harbour minutes');
    const shared = await save(alice, 'Team tides', { search: { query: 'tides', project_ids: [project] }, project_id: project });
    await save(bob, 'Bob ledger', { search: { query: 'ledger', project_ids: [project] }, project_id: project });
    const page = (await web.get(SEARCH)).text;
    for (const [name, id] of [
      ['Harbour minutes', own],
      ['Team tides', shared],
    ]) {
      const li = entry(page, name!)!;
      expect(li, name).not.toBeNull();
      expect(li).toContain(`<form method="post" action="/search/saved/${id}/rename" class="inline-field">`);
      expect(li).toContain(`name="name" maxlength="200" required value="${name}"`);
      expect(li).toContain(`<a href="/search/saved/${id}/delete?back=${encodeURIComponent(SEARCH).replaceAll('&', '&amp;')}" class="button danger small">Delete…`);
      // The form comes back to the search it was sent from.
      expect(hiddenFields(li, `/search/saved/${id}/rename`)).toEqual({ _csrf: web.csrf, back: SEARCH });
    }
    const bobs = entry(page, 'Bob ledger')!;
    expect(bobs).toContain('<span class="badge">shared</span>');
    expect(bobs).not.toContain('/rename');
    expect(bobs).not.toContain('/delete');
  });

  it('renames through the form, back to the search with a message; a refused name is the page again with it as typed', async () => {
    const id = await save(alice, 'Fog');
    await save(alice, 'Lighthouse');
    await web.get(SEARCH);
    const csrf = web.csrf;
    const done = await web.submit(`/search/saved/${id}/rename`, { _csrf: csrf, name: 'Fog banks', back: SEARCH });
    expect(done.redirectedFrom?.status).toBe(303);
    expect(done.redirectedFrom?.location).toBe(SEARCH);
    expect(done.text).toContain('Renamed “Fog” to “Fog banks”.');
    expect(entry(done.text, 'Fog banks')).not.toBeNull();
    expect(await nameOf(id)).toBe('Fog banks');

    // A name the person has (any case): 409, the search page they were on, the form open with what they typed.
    // Said after a 303 to that page (Post/Redirect/Get): a reload reloads it, and posts nothing.
    const taken = await web.submit(`/search/saved/${id}/rename`, { _csrf: csrf, name: 'LIGHTHOUSE', back: SEARCH });
    expect(taken.redirectedFrom?.status).toBe(303);
    expect(taken.status).toBe(409);
    expect(taken.text).toContain('<input type="search" name="q" value="harbour"');
    expect(taken.text).toContain('<option value="keyword" selected>');
    expect(taken.text).toContain('<input type="hidden" name="type" value="pdf">');
    expect(taken.text).toContain('<p class="error" role="alert">“Fog banks” not renamed: You have a saved search named &quot;LIGHTHOUSE&quot;.</p>');
    const li = entry(taken.text, 'Fog banks')!;
    expect(li).toContain('<details class="rename" open>');
    expect(li).toContain('required value="LIGHTHOUSE"');
    const empty = await web.submit(`/search/saved/${id}/rename`, { _csrf: csrf, name: '   ', back: SEARCH });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('“Fog banks” not renamed: The name must not be empty.');
    expect(await nameOf(id)).toBe('Fog banks');

    // Without the session's CSRF token nothing changes; a `back` off the search page goes to the search page.
    expect((await web.post(`/search/saved/${id}/rename`, { name: 'Forged', back: SEARCH })).status).toBe(403);
    expect(await nameOf(id)).toBe('Fog banks');
    const offsite = await web.post(`/search/saved/${id}/rename`, { _csrf: csrf, name: 'Sea fog', back: 'https://elsewhere.example/search' });
    expect(offsite.location).toBe('/search');
  });

  it('deletes after asking on a page of its own, then goes back to the search', async () => {
    const id = await save(alice, 'Old tides', { search: { query: 'tides', project_ids: [project] }, project_id: project });
    const link = unescape(/<a href="([^"]+)" class="button danger small">Delete…/.exec(entry((await web.get(SEARCH)).text, 'Old tides')!)![1]!);
    const ask = await web.get(link);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('<h1>Delete the saved search “Old tides”?</h1>');
    expect(ask.text).toContain('The members of the project it is shared with no longer see it.');
    expect(ask.text).toContain(`<a href="${SEARCH.replaceAll('&', '&amp;')}" class="button">Cancel</a>`);
    expect(await nameOf(id)).toBe('Old tides');
    const fields = hiddenFields(ask.text, `/search/saved/${id}/delete`);
    expect(fields.back).toBe(SEARCH);
    const done = await web.submit(`/search/saved/${id}/delete`, fields);
    expect(done.redirectedFrom?.location).toBe(SEARCH);
    expect(done.text).toContain('Deleted the saved search “Old tides”.');
    expect(entry(done.text, 'Old tides')).toBeNull();
    expect((await as(alice, `/api/v1/saved-searches/${id}`)).status).toBe(404);
  });

  it('refuses a member it is shared with (403) and anyone else (404), changing nothing', async () => {
    const shared = await save(alice, 'Shared berths', { search: { query: 'berths', project_ids: [project] }, project_id: project });
    const own = await save(alice, 'Private berths');
    const bobWeb = await loggedIn(d, bob);
    await bobWeb.get('/search');
    const csrf = bobWeb.csrf;
    expect((await bobWeb.post(`/search/saved/${shared}/rename`, { _csrf: csrf, name: 'Taken', back: '/search' })).status).toBe(403);
    expect((await bobWeb.get(`/search/saved/${shared}/delete`)).status).toBe(403);
    expect((await bobWeb.post(`/search/saved/${shared}/delete`, { _csrf: csrf, back: '/search' })).status).toBe(403);
    expect((await bobWeb.post(`/search/saved/${own}/rename`, { _csrf: csrf, name: 'Taken', back: '/search' })).status).toBe(404);
    expect((await bobWeb.get(`/search/saved/${own}/delete`)).status).toBe(404);
    expect((await bobWeb.post(`/search/saved/${own}/delete`, { _csrf: csrf, back: '/search' })).status).toBe(404);
    expect(await nameOf(shared)).toBe('Shared berths');
    expect(await nameOf(own)).toBe('Private berths');
  });

  it('offers an author since made a viewer of the project, or removed from it, Delete… but not Rename', async () => {
    const id = await save(bob, 'Bob berths', { search: { query: 'berths', project_ids: [project] }, project_id: project });
    const bobWeb = await loggedIn(d, bob);
    const actions = async () => {
      const li = entry((await bobWeb.get('/search')).text, 'Bob berths')!;
      return { rename: li.includes(`/search/saved/${id}/rename`), delete: li.includes(`/search/saved/${id}/delete`) };
    };
    expect(await actions()).toEqual({ rename: true, delete: true });
    expect((await as(alice, `/api/v1/projects/${project}/members`, { body: { email: bob.email, role: 'viewer' } })).status).toBeLessThan(300);
    expect(await actions()).toEqual({ rename: false, delete: true });
    const bobId = ((await as(alice, `/api/v1/projects/${project}/members`)).body.members as { id: string; email?: string }[]).find((m) => m.email === bob.email)!.id;
    expect((await as(alice, `/api/v1/projects/${project}/members/${bobId}`, { method: 'DELETE' })).status).toBe(204);
    expect(await actions()).toEqual({ rename: false, delete: true });
    // What it offers is what the forms do.
    expect((await bobWeb.post(`/search/saved/${id}/rename`, { _csrf: bobWeb.csrf, name: 'Renamed', back: '/search' })).status).toBe(403);
    const done = await bobWeb.submit(`/search/saved/${id}/delete`, hiddenFields((await bobWeb.get(`/search/saved/${id}/delete?back=%2Fsearch`)).text, `/search/saved/${id}/delete`));
    expect(done.text).toContain('Deleted the saved search “Bob berths”.');
  });
});
