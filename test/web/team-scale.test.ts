/**
 * Narrowing at a team library's scale, over real HTTP: a project of more labels than a page or a facet holds. The
 * Labels tab shows them a page at a time (every one reached through its Next links, each once; its forms come back to
 * their page; a link after a label deleted since starts again, said); GET /projects/{id}/labels pages the same list
 * with `limit` and `cursor` (and without them answers the whole vocabulary, as before); the search page's label facet,
 * capped at its most frequent values, reaches any other label by name, its chip shown; a person's many saved searches
 * keep the first few in sight above the results, the rest folded (open where a rename of one of them was refused).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { hiddenFields, type WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

/** 120 labels: more than a page of the tab (100) and than a facet counts (100); a few with accents, emoji, spaces. */
const NAMES = Array.from({ length: 120 }, (_, i) => `tag ${String(i).padStart(3, '0')}${i % 10 === 3 ? ' café ☕' : ''}`);
const unescape = (s: string) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
const rowsOf = (page: string) => [...page.matchAll(/<tr data-label-id="([^"]+)"/g)].map((m) => m[1]!);
const nextOf = (page: string) => {
  const m = /<a href="([^"]+)" rel="next"/.exec(page);
  return m ? unescape(m[1]!) : null;
};

describe('a project of many labels, on the web and through the API', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let project: string;
  let labels: { id: string; name: string }[];

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Team' } })).body.id;
      // Two documents a search finds: one carrying the first 100 labels, the other the last 20 (at most 100 a document).
      for (const [name, some] of [['first.txt', NAMES.slice(0, 100)], ['second.txt', NAMES.slice(100)]] as const) {
        const res = await uploadFiles(d, alice.apiKey, [{ name, bytes: Buffer.from(`The ferry timetable for the ${name.slice(0, -4)} crossing of the sound.`) }], {
          projectId: project,
          query: '?wait=true',
          fields: { labels: JSON.stringify(some) },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      labels = (await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey })).body.labels;
      web = await loggedIn(d, alice);
    },
    { setupTimeoutMs: 120_000 },
  );

  it('the API answers the whole vocabulary without limit, and pages it with limit and cursor', async () => {
    const all = await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey });
    expect(all.body.labels).toHaveLength(120);
    expect(all.body.next_cursor).toBeNull();
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(d, `/api/v1/projects/${project}/labels?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: alice.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.labels.length).toBeLessThanOrEqual(50);
      paged.push(...res.body.labels.map((l: { id: string }) => l.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all.body.labels.map((l: { id: string }) => l.id));
    // A cursor alone: 100 a page. A limit is 1–1000.
    const first = await api(d, `/api/v1/projects/${project}/labels?limit=1`, { token: alice.apiKey });
    const hundred = await api(d, `/api/v1/projects/${project}/labels?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: alice.apiKey });
    expect(hundred.body.labels.map((l: { id: string }) => l.id)).toEqual(paged.slice(1, 101));
    expect(hundred.body.next_cursor).toEqual(expect.any(String));
    expect((await api(d, `/api/v1/projects/${project}/labels?limit=1000`, { token: alice.apiKey })).body.labels).toHaveLength(120);
    for (const limit of [0, 1001]) expect((await api(d, `/api/v1/projects/${project}/labels?limit=${limit}`, { token: alice.apiKey })).status, `limit=${limit}`).toBe(400);
    // A cursor belongs to its project's list; one after a label deleted since is refused, in the words every list uses.
    const other = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Other' } })).body.id;
    const refused = await api(d, `/api/v1/projects/${other}/labels?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: alice.apiKey });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^query\.cursor: not a cursor this server issued for this list/);
    const extra = (await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey, body: { name: 'a label to delete' } })).body;
    const last = await api(d, `/api/v1/projects/${project}/labels?limit=1`, { token: alice.apiKey });
    expect(last.body.labels[0].id).toBe(extra.id);
    expect((await api(d, `/api/v1/projects/${project}/labels/${extra.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    const gone = await api(d, `/api/v1/projects/${project}/labels?cursor=${encodeURIComponent(last.body.next_cursor)}`, { token: alice.apiKey });
    expect(gone.status).toBe(400);
    expect(gone.body.error.message).toMatch(/^query\.cursor: not a cursor this server issued for this list/);
  });

  it('the Labels tab shows a page at a time: each label once through its Next links, forms coming back to their page', async () => {
    const seen: string[] = [];
    let href: string | null = `/projects/${project}/labels`;
    const pages: string[] = [];
    while (href) {
      const page = await web.get(href);
      expect(page.status).toBe(200);
      pages.push(href);
      seen.push(...rowsOf(page.text));
      href = nextOf(page.text);
    }
    expect(pages).toHaveLength(2);
    expect(seen).toEqual(labels.map((l) => l.id));
    // The second page: a link back to the first, and a row's form sends the page it is on.
    const second = await web.get(pages[1]!);
    expect(second.text).toContain(`<a href="/projects/${project}/labels">← First page</a>`);
    const row = labels[110]!;
    const fields = hiddenFields(second.text, `/projects/${project}/labels/${row.id}`);
    expect(fields.cursor).toBeTruthy();
    const saved = await web.post(`/projects/${project}/labels/${row.id}`, { ...fields, name: row.name, color: 'teal' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(pages[1]);
    // Refused, the page it was sent from again, with the name typed in its row.
    const refused = await web.submit(`/projects/${project}/labels/${row.id}`, { ...fields, name: 'a, b', color: 'teal' });
    expect(refused.redirectedFrom?.location).toBe(pages[1]);
    expect(refused.status).toBe(400);
    expect(rowsOf(refused.text)).toEqual(labels.slice(100).map((l) => l.id));
    expect(refused.text).toContain('value="a, b"');
    // Delete… asks on a page of its own; cancelled or done, it comes back to the page it was asked from.
    const doomed = labels[105]!;
    const ask = await web.get(unescape(new RegExp(`<a href="([^"]+)"[^>]*>Delete…<span class="visually-hidden"> ${doomed.name}`).exec(second.text)![1]!));
    expect(ask.status).toBe(200);
    expect(ask.text).toContain(`<a href="${pages[1]!.replaceAll('&', '&amp;')}" class="button">Cancel</a>`);
    const deleted = await web.post(`/projects/${project}/labels/${doomed.id}/delete`, hiddenFields(ask.text, `/projects/${project}/labels/${doomed.id}/delete`));
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(pages[1]);
    // A link after a label deleted since starts again from the first page, and says so.
    expect((await api(d, `/api/v1/projects/${project}/labels/${labels[99]!.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    const stale = await web.get(pages[1]!);
    expect(stale.status).toBe(200);
    expect(stale.text).toContain('That page link is out of date; showing the first page.');
    expect(rowsOf(stale.text)[0]).toBe(labels[0]!.id);
  });

  it('the search page reaches a label past the facet’s most frequent values by name, and shows it as a chip', async () => {
    const page = await web.get(`/search?q=${encodeURIComponent('ferry timetable')}&project=${project}`);
    expect(page.status).toBe(200);
    const facet = /<div class="facet" data-facet="label">([\s\S]*?)<\/div>/.exec(page.text)![1]!;
    // Ties by name: the last 20 are not among the 100 counted.
    const offered = [...facet.matchAll(/<bdi class="badge label-[a-z]+">([^<]+)<\/bdi>/g)].map((m) => unescape(m[1]!));
    expect(offered).toHaveLength(100);
    expect(offered).not.toContain('tag 113 café ☕');
    const fields = hiddenFields(facet, '/search');
    expect(fields).toEqual({ q: 'ferry timetable', project });
    const narrowed = await web.get(`/search?${new URLSearchParams({ ...fields, labels: 'tag 113 café ☕' }).toString()}`);
    expect(narrowed.status).toBe(200);
    expect(narrowed.text).toContain('aria-label="Remove the filter Label: tag 113 café ☕"');
    expect([...narrowed.text.matchAll(/<li class="result" data-document-id="/g)]).toHaveLength(1);
  });

  it('many saved searches: the first ten in sight, the rest folded under "N more", open on a refused rename among them', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const res = await api(d, '/api/v1/saved-searches', { token: alice.apiKey, body: { name: `ferry ${String(i).padStart(2, '0')}`, search: { query: 'ferry' } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.id);
    }
    const page = await web.get('/search');
    const sidebar = /<nav class="saved-searches"[^>]*>([\s\S]*?)<\/nav>/.exec(page.text)![1]!;
    const [inSight, rest] = sidebar.split('<details class="saved-more">');
    expect([...inSight!.matchAll(/<bdi>(ferry \d+)<\/bdi>/g)].map((m) => m[1])).toEqual(Array.from({ length: 10 }, (_, i) => `ferry ${String(i + 1).padStart(2, '0')}`));
    expect(rest).toMatch(/^<summary>2 more<\/summary>/);
    expect([...rest!.matchAll(/<bdi>(ferry \d+)<\/bdi>/g)].map((m) => m[1])).toEqual(['ferry 11', 'ferry 12']);
    const fields = hiddenFields(page.text, `/search/saved/${ids[11]}/rename`);
    const refused = await web.submit(`/search/saved/${ids[11]}/rename`, { ...fields, name: 'ferry 01' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('<details class="saved-more" open><summary>2 more</summary>');
    expect(refused.text).toContain('value="ferry 01"');
  });
});
