/**
 * Narrowing the library on the web, over real HTTP (server-rendered, no script), with label names that are hard on
 * an address (`Q&A`, `C# / 100%`, an accent, an emoji, spaces): the Documents list's label links keep the list's
 * other filters and add to the labels asked; a page of documents the person only views offers no action on a
 * selection; a saved search comes back as it was saved (a chip per label and type, metadata in the page's own
 * shorthand where that means the same), and one shared over another project is refused in words with its form kept; a
 * label in force in another case is not offered again; every value a facet counts is a link (past ten, folded); the
 * Uploaded facet's year is one chip; a search that finds nothing under its filters says so, and names only the ways
 * out it has. A metadata filter's chip reads as a person reads it ("year ≥ 2020", "team: ops or yard", "no year"), its
 * × saying what it removes; a label shows its colour on its facet value and its chip as on the Documents list; the
 * Documents page's two label fields (the filter, the selection's) have names of their own.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { hiddenFields, type WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const HARD = 'C# / 100% café ☕';
const MANY = Array.from({ length: 13 }, (_, i) => `shelf ${String(i + 1).padStart(2, '0')}`);
const unescape = (s: string) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
const rowsOf = (page: string) => [...page.matchAll(/<tr data-document-id="([^"]+)"/g)].map((m) => m[1]!).sort();
const resultsOf = (page: string) => [...page.matchAll(/<li class="result" data-document-id="([^"]+)"/g)].map((m) => m[1]!).sort();
/** The filters in force on a search page, as its chips' links say what they remove. */
const chipsOf = (page: string) => [...page.matchAll(/<a class="chip" href="[^"]+" aria-label="Remove the filter ([^"]+)"/g)].map((m) => unescape(m[1]!));
/** Each chip of a search page: what its link says it removes, what it shows (tags and its × aside), its link, a label's colour. */
const chipReadsOf = (page: string) =>
  [...page.matchAll(/<a class="chip" href="([^"]+)" aria-label="Remove the filter ([^"]+)">(.*?) <span aria-hidden="true">×<\/span><\/a>/g)].map((m) => ({
    says: unescape(m[2]!),
    shows: unescape(m[3]!.replace(/<[^>]+>/g, '')),
    href: unescape(m[1]!),
    colour: /class="badge label-([a-z]+)"/.exec(m[3]!)?.[1] ?? null,
  }));
/** The values a facet offers, as links: each value, its link and its colour (a label's), in the page's order. */
const facetLinksOf = (page: string, facet: string) =>
  [
    ...(new RegExp(`<div class="facet" data-facet="${facet}">(.*?)</div>`, 's').exec(page)?.[1] ?? '').matchAll(
      /<a href="([^"]+)">(?:<bdi>|<span class="doc-labels"><bdi class="badge label-([a-z]+)">)([^<]+)<\/bdi>(?:<\/span>)? <span class="count">\d+<\/span><\/a>/g,
    ),
  ].map((m) => ({ value: unescape(m[3]!), href: unescape(m[1]!), colour: m[2] ?? null }));
const facetOf = (page: string, facet: string) => facetLinksOf(page, facet).map((v) => v.value);
/** The status line under the search form. */
const statusOf = (page: string) => /<p class="[^"]*" role="status">([\s\S]*?)<\/p>/.exec(page.slice(page.indexOf('</form>')))?.[1] ?? null;

describe('narrowing on the web: labels, filters, saved searches', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let web: WebClient;
  let project: string;
  const ids: Record<string, string> = {};

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
      project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Harbour' } })).body.id;
      expect((await api(d, `/api/v1/projects/${project}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
      const put = async (name: string, text: string, labels: string[], metadata: Record<string, unknown> = {}) => {
        const res = await uploadFiles(d, alice.apiKey, [{ name, bytes: Buffer.from(text) }], {
          projectId: project,
          query: '?wait=true',
          metadata: JSON.stringify(metadata),
          fields: { labels: JSON.stringify(labels) },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        ids[name] = res.body.documents[0].id;
      };
      await put('ledger.txt', 'The harbour ledger lists each tide and the dues paid at the quay.', ['Q&A', HARD], { team: 'ops', year: 2019 });
      await put('berths.md', '# Berths\n\nThe harbour berths are let by the season, the north quay first.', ['Q&A'], { team: 'ops', year: 2021 });
      await put('crane.txt', 'The harbour crane lifts the timber from the holds onto the quay.', [HARD], { team: 'yard' });
      // In her own project, on its own word: a document with more labels than a facet shows at first.
      const many = await uploadFiles(d, alice.apiKey, [{ name: 'quarry.md', bytes: Buffer.from('# Quarry\n\nThe quarry road closes at dusk in winter.') }], {
        query: '?wait=true',
        fields: { labels: JSON.stringify(MANY) },
      });
      expect(many.status, JSON.stringify(many.body)).toBe(200);
      web = await loggedIn(d, alice);
    },
    { setupTimeoutMs: 180_000 },
  );

  it('the Documents list: a label’s link keeps the list’s filters and sort, and adds the label to those asked', async () => {
    const list = await web.get('/documents?type=txt&sort=name');
    expect(rowsOf(list.text)).toEqual([ids['ledger.txt']!, ids['crane.txt']!].sort());
    const ledgerRow = new RegExp(`<tr data-document-id="${ids['ledger.txt']}"[\\s\\S]*?</tr>`).exec(list.text)![0];
    const link = (row: string, name: string) => unescape(new RegExp(`<a href="([^"]+)" class="badge label-[a-z]+" title="Documents labelled ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}">`).exec(row.replaceAll('&amp;', '&'))![1]!);
    const hard = new URL(link(ledgerRow, HARD), d.url);
    expect(Object.fromEntries(hard.searchParams)).toEqual({ type: 'txt', sort: 'name', labels: HARD });
    const followed = await web.get(hard.pathname + hard.search);
    expect(followed.status).toBe(200);
    expect(rowsOf(followed.text)).toEqual([ids['ledger.txt']!, ids['crane.txt']!].sort());
    // With a label asked already, another label's link asks for both; that label's own (in another case) is not asked twice.
    const narrowed = await web.get(`/documents?labels=${encodeURIComponent('q&a')}`);
    expect(rowsOf(narrowed.text)).toEqual([ids['ledger.txt']!, ids['berths.md']!].sort());
    const row = new RegExp(`<tr data-document-id="${ids['ledger.txt']}"[\\s\\S]*?</tr>`).exec(narrowed.text)![0];
    const both = new URL(link(row, HARD), d.url);
    expect(both.searchParams.get('labels')).toBe(`q&a, ${HARD}`);
    expect(rowsOf((await web.get(both.pathname + both.search)).text)).toEqual([ids['ledger.txt']!]);
    expect(new URL(link(row, 'Q&A'), d.url).searchParams.get('labels')).toBe('q&a');
  });

  it('a page of documents the person only views offers no action on a selection; one they edit does', async () => {
    const viewer = await loggedIn(d, bob);
    const page = await viewer.get('/documents');
    // Bob edits his own (empty) default project, but none of the documents listed.
    expect(rowsOf(page.text)).toEqual(Object.values(ids).sort());
    expect(page.text).not.toContain('name="ids"');
    expect(page.text).not.toContain('name="action"');
    expect(page.text).not.toContain('With the selected documents');
    const own = await web.get('/documents');
    expect(own.text).toContain('name="ids"');
    expect(own.text).toContain('<button type="submit" name="action" value="label"');
  });

  it('a saved search comes back as it was saved: a chip per label and type, metadata as the page writes it', async () => {
    const search = `/search?q=harbour&mode=keyword&labels=${encodeURIComponent('Q&A')}&labels=${encodeURIComponent(HARD)}&metadata.team=ops`;
    const shown = await web.get(search);
    expect(resultsOf(shown.text)).toEqual([ids['ledger.txt']!]);
    const chips = chipsOf(shown.text);
    expect(chips).toEqual(['Label: Q&A', `Label: ${HARD}`, 'team: ops']);
    const fields = hiddenFields(shown.text, '/search/save');
    const form = /<form method="post" action="\/search\/save"[\s\S]*?<\/form>/.exec(shown.text)![0];
    const labels = [...form.matchAll(/<input type="hidden" name="labels" value="([^"]*)">/g)].map((m) => unescape(m[1]!));
    const saved = await web.submit('/search/save', { ...fields, labels, name: 'Web saved', share: '' });
    expect(saved.status, /role="alert">([^<]*)/.exec(saved.text)?.[1]).toBe(200);
    expect(saved.text).toContain('Saved “Web saved”');
    const api1 = await api(d, '/api/v1/saved-searches', {
      token: alice.apiKey,
      body: { name: 'API saved', search: { query: 'harbour', mode: 'keyword', group: 'document', filters: { type: ['txt', 'markdown'], labels: ['q&a', HARD], metadata: { team: 'ops' } } } },
    });
    expect(api1.status, JSON.stringify(api1.body)).toBe(201);
    // A number alone would read back from `metadata.dues=12` as the number or the text "12": it stays as its JSON.
    const api2 = await api(d, '/api/v1/saved-searches', { token: alice.apiKey, body: { name: 'Numbers', search: { query: 'harbour', mode: 'keyword', group: 'document', filters: { metadata: { dues: 12 } } } } });
    expect(api2.status, JSON.stringify(api2.body)).toBe(201);
    const home = await web.get('/search');
    const href = (name: string) => unescape(new RegExp(`<a href="([^"]+)"><bdi>${name}</bdi></a>`).exec(home.text)![1]!);
    const params = (name: string) => new URL(href(name), d.url).searchParams;
    expect(params('Web saved').getAll('labels')).toEqual(['Q&A', HARD]);
    expect(params('Web saved').getAll('metadata.team')).toEqual(['ops']);
    expect(params('Web saved').has('metadata')).toBe(false);
    expect(params('API saved').getAll('type')).toEqual(['txt', 'markdown']);
    expect(params('API saved').getAll('labels')).toEqual(['q&a', HARD]);
    expect(params('API saved').getAll('metadata.team')).toEqual(['ops']);
    expect(params('Numbers').getAll('metadata')).toEqual(['{"dues":12}']);
    const ran = await web.get(href('Web saved'));
    expect(chipsOf(ran.text)).toEqual(chips);
    expect(resultsOf(ran.text)).toEqual([ids['ledger.txt']!]);
    const api1Ran = await web.get(href('API saved'));
    expect(chipsOf(api1Ran.text)).toEqual(['Type: Text', 'Type: Markdown', 'Label: q&a', `Label: ${HARD}`, 'team: ops']);
    expect(resultsOf(api1Ran.text)).toEqual([ids['ledger.txt']!]);
    // Each chip removes its own filter alone: without the one label, the other label and the rest stay.
    const chip = unescape(new RegExp(`<a class="chip" href="([^"]+)" aria-label="Remove the filter Label: q&amp;a"`).exec(api1Ran.text)![1]!);
    const without = await web.get(chip);
    expect(chipsOf(without.text)).toEqual(['Type: Text', 'Type: Markdown', `Label: ${HARD}`, 'team: ops']);
    expect(resultsOf(without.text)).toEqual([ids['ledger.txt']!]);
    // Metadata kept as its JSON reads as the shorthand does: each condition as a person reads it.
    const numbers = await web.get(href('Numbers'));
    expect(numbers.status).toBe(200);
    expect(chipReadsOf(numbers.text).map((c) => [c.says, c.shows])).toEqual([['dues: 12', 'dues: 12']]);
  });

  it('Save this search shared with a project but over another is refused in words, the form open with the name and project kept', async () => {
    const projects = (await api(d, '/api/v1/projects', { token: alice.apiKey })).body.projects as { id: string; is_default: boolean }[];
    const own = projects.find((p) => p.is_default)!.id;
    const shown = await web.get(`/search?q=harbour&mode=keyword&project=${own}`);
    const refused = await web.submit('/search/save', { ...hiddenFields(shown.text, '/search/save'), name: 'Kept name', share: project });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<details class="save-search" id="save-search" open>');
    expect(refused.text).toContain('value="Kept name"');
    expect(refused.text).toContain(`<option value="${project}" selected>`);
    expect(refused.text).toContain('Not saved: a search shared with a project may search only that project: choose it alone under Project above, or keep the search to yourself.');
    expect(refused.text).not.toContain('project_ids');
    const names = ((await api(d, '/api/v1/saved-searches', { token: alice.apiKey })).body.saved_searches as { name: string }[]).map((v) => v.name);
    expect(names).not.toContain('Kept name');
  });

  it('a label in force, in any case of A–Z, is not offered again among the label facet’s links', async () => {
    const page = await web.get(`/search?q=harbour&mode=keyword&labels=${encodeURIComponent('q&A')}`);
    expect(resultsOf(page.text)).toEqual([ids['ledger.txt']!, ids['berths.md']!].sort());
    expect(chipsOf(page.text)).toEqual(['Label: q&A']);
    expect(facetOf(page.text, 'label')).toEqual([HARD]);
  });

  it('every value a facet counts is a link: past the first ten, folded under “N more”', async () => {
    const page = await web.get('/search?q=quarry&mode=keyword');
    expect(facetOf(page.text, 'label').sort()).toEqual(MANY);
    expect(page.text).toContain('<summary>3 more</summary>');
    const last = facetLinksOf(page.text, 'label').find((v) => v.value === MANY[12]);
    expect(chipsOf((await web.get(last!.href)).text)).toEqual([`Label: ${MANY[12]}`]);
  });

  it('the Uploaded facet’s year is one chip, which removes the year whole; a date typed alone stays its own chip', async () => {
    const base = '/search?q=harbour&mode=keyword';
    const page = await web.get(base);
    const year = new Date().getUTCFullYear();
    const link = facetLinksOf(page.text, 'year').find((v) => v.value === String(year));
    expect(link, page.text.slice(0, 300)).toBeDefined();
    const narrowed = await web.get(link!.href);
    expect(chipsOf(narrowed.text)).toEqual([`Uploaded: ${year}`]);
    expect(resultsOf(narrowed.text)).toEqual(Object.values(ids).sort());
    const chip = unescape(/<a class="chip" href="([^"]+)"/.exec(narrowed.text)![1]!);
    expect(Object.fromEntries(new URL(chip, d.url).searchParams)).toEqual({ q: 'harbour', mode: 'keyword' });
    expect(chipsOf((await web.get(`${base}&uploaded_since=${year}-01-01`)).text)).toEqual([`Since: ${year}-01-01`]);
  });

  it('a search that finds nothing under its filters says so, and names only the ways out it has', async () => {
    const filtered = await web.get(`/search?q=harbour&mode=keyword&labels=${encodeURIComponent('Q&A')}&metadata.team=yard`);
    expect(resultsOf(filtered.text)).toEqual([]);
    expect(statusOf(filtered.text)).toBe('No passages match “harbour” with these filters. Try other words, another mode, or fewer filters (each has its × below).');
    expect(chipsOf(filtered.text)).toEqual(['Label: Q&A', 'team: yard']);
    const one = await web.get(`/search?q=harbour&mode=keyword&project=${project}&type=pdf`);
    expect(statusOf(one.text)).toBe('No passages match “harbour” with this filter. Try other words, another mode, all projects, or without the filter (its × below).');
    const none = await web.get('/search?q=xyzzyplugh&mode=keyword');
    expect(statusOf(none.text)).toBe('No passages match “xyzzyplugh”. Try other words or another mode.');
  });

  it('a metadata filter’s chip reads as a person reads it, its × says what it removes, and its link is the search without it alone', async () => {
    const base = '/search?q=harbour&mode=keyword&uploaded_since=2000-01-01';
    const [ledger, berths, crane] = [ids['ledger.txt']!, ids['berths.md']!, ids['crane.txt']!];
    const cases: [string, string, string[]][] = [
      ['metadata.year.$gte=2020', 'year ≥ 2020', [berths]],
      ['metadata.year.$gt=2019', 'year > 2019', [berths]],
      ['metadata.year.$lte=2019', 'year ≤ 2019', [ledger]],
      ['metadata.year.$lt=2021', 'year < 2021', [ledger]],
      ['metadata.team=ops', 'team: ops', [ledger, berths]],
      ['metadata.team.$eq=yard', 'team: yard', [crane]],
      ['metadata.team.$in=ops,yard', 'team: ops or yard', [ledger, berths, crane]],
      ['metadata.team.$in=ops,yard,dock', 'team: ops, yard or dock', [ledger, berths, crane]],
      ['metadata.year.$exists=true', 'has year', [ledger, berths]],
      ['metadata.year.$exists=false', 'no year', [crane]],
      [`metadata=${encodeURIComponent('{"year":{"$gte":2020,"$lte":2024},"team":"ops"}')}`, 'year ≥ 2020; year ≤ 2024; team: ops', [berths]],
    ];
    for (const [param, reads, found] of cases) {
      const page = await web.get(`${base}&${param}`);
      expect(page.status, param).toBe(200);
      expect(resultsOf(page.text), param).toEqual(found.sort());
      const [since, chip] = chipReadsOf(page.text);
      expect(since?.says, param).toBe('Since: 2000-01-01');
      // What the × says it removes is what the chip shows.
      expect([chip?.says, chip?.shows], param).toEqual([reads, reads]);
      expect([...new URL(chip!.href, d.url).searchParams], param).toEqual([['q', 'harbour'], ['mode', 'keyword'], ['uploaded_since', '2000-01-01']]);
      expect([...new URL(since!.href, d.url).searchParams].slice(2), param).toEqual([...new URLSearchParams(param)]);
    }
    // One the filter language has not is refused in words, and its chip, as given, still removes it.
    const refused = await web.get(`${base}&metadata.year.$exists=maybe`);
    expect(refused.status).toBe(400);
    expect(chipReadsOf(refused.text)[1]?.says).toBe('metadata.year.$exists: maybe');
  });

  it('a label’s colour shows on its facet value and its chip as on the Documents list', async () => {
    const labels = (await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey })).body.labels as { id: string; name: string; color: string }[];
    const recolour = async (name: string, color: string) =>
      expect((await api(d, `/api/v1/projects/${project}/labels/${labels.find((l) => l.name === name)!.id}`, { token: alice.apiKey, method: 'PATCH', body: { color } })).status).toBe(200);
    await recolour('Q&A', 'red');
    await recolour(HARD, 'teal');
    const listed = (await web.get(`/documents?project_id=${project}`)).text.replaceAll('&amp;', '&');
    const listColour = (name: string) => new RegExp(`class="badge label-([a-z]+)" title="Documents labelled ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).exec(listed)?.[1];
    expect([listColour('Q&A'), listColour(HARD)]).toEqual(['red', 'teal']);
    const page = await web.get('/search?q=harbour&mode=keyword');
    expect(Object.fromEntries(facetLinksOf(page.text, 'label').map((v) => [v.value, v.colour]))).toEqual({ 'Q&A': 'red', [HARD]: 'teal' });
    // Other facets' values are no labels: no colour.
    expect(facetLinksOf(page.text, 'type').map((v) => v.colour)).toEqual([null, null]);
    const narrowed = await web.get(facetLinksOf(page.text, 'label').find((v) => v.value === 'Q&A')!.href);
    expect(chipReadsOf(narrowed.text).map((c) => [c.says, c.shows, c.colour])).toEqual([['Label: Q&A', 'Label: Q&A', 'red']]);
    expect(facetLinksOf(narrowed.text, 'label').map((v) => [v.value, v.colour])).toEqual([[HARD, 'teal']]);
    // Asked in another case, the chip keeps the spelling asked and the label's colour.
    const folded = await web.get(`/search?q=harbour&mode=keyword&labels=${encodeURIComponent('q&a')}`);
    expect(chipReadsOf(folded.text).map((c) => [c.shows, c.colour])).toEqual([['Label: q&a', 'red']]);
  });

  it('the Documents page’s two label fields, the list’s filter and the selection’s, are named apart', async () => {
    const page = await web.get('/documents');
    const named = [...page.text.matchAll(/<label[^>]*>([^<]*)<input type="text" name="labels"/g)].map((m) => m[1]!.trim());
    expect(named).toEqual(['With labels', 'Labels to add or remove']);
  });
});
