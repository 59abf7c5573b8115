/**
 * Finding a label in a large vocabulary, over real HTTP, on both engines (the match is the store's SQL): the Labels
 * tab's "Find a label" field (a GET form: works without script) lists the labels whose name holds the text — in any
 * case of A–Z, in either Unicode spelling, `%` and `_` as themselves — a page at a time, its Next link, its rows'
 * forms and its Delete… coming back to the labels found; a find that finds none says so. GET
 * /projects/{id}/labels takes the same text as `q`, paged alike, its cursors kept to their find.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { hiddenFields, type WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

/** 120 "tag" labels (more than the tab's page of 100) and a few a find must tell apart. */
const TAGS = Array.from({ length: 120 }, (_, i) => `tag ${String(i).padStart(3, '0')}`);
const OTHERS = ['Invoice 2024', 'unpaid INVOICES', 'paid invoice', '100% done', '100 percent', 'snake_case', 'snakecase', 'Café', 'a\\b'];
const unescape = (s: string) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
const rowsOf = (page: string) => [...page.matchAll(/<tr data-label-id="([^"]+)"/g)].map((m) => m[1]!);
const nextOf = (page: string) => {
  const m = /<a href="([^"]+)" rel="next"/.exec(page);
  return m ? unescape(m[1]!) : null;
};

describe('finding a label among many, on the Labels tab and through the API', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let project: string;
  let byName: Map<string, string>;
  const tab = (q: string) => `/projects/${project}/labels?${new URLSearchParams({ q }).toString()}`;
  const found = async (q: string) => {
    const page = await web.get(tab(q));
    expect(page.status).toBe(200);
    return rowsOf(page.text);
  };
  const ids = (...names: string[]) => names.map((n) => byName.get(n)!);
  const listed = async (query: string) => {
    const res = await api(d, `/api/v1/projects/${project}/labels?${query}`, { token: alice.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { labels: { id: string; name: string; document_count: number }[]; next_cursor: string | null };
  };

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Ledger' } })).body.id;
      for (const name of [...TAGS, ...OTHERS]) {
        const res = await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey, body: { name } });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      }
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'march.txt', bytes: Buffer.from('The March invoice run.') }], { projectId: project, query: '?wait=true', fields: { labels: JSON.stringify(['invoice 2024']) } });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      byName = new Map(((await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey })).body.labels as { id: string; name: string }[]).map((l) => [l.name, l.id]));
      web = await loggedIn(d, alice);
    },
    { setupTimeoutMs: 120_000 },
  );

  it('offers a GET form that keeps what was looked for, and finds in any case of A–Z anywhere in a name', async () => {
    const page = await web.get(tab('INVOICE'));
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`<form method="get" action="/projects/${project}/labels"[^>]*role="search"[^>]*>\\s*<label class="grow">Find a label <input type="search" name="q" value="INVOICE"`));
    expect(rowsOf(page.text)).toEqual(ids('Invoice 2024', 'paid invoice', 'unpaid INVOICES'));
    expect(page.text).toContain(`<a href="/projects/${project}/labels">All labels</a>`);
    expect(page.text).toContain('1 document<span class="visually-hidden"> labelled Invoice 2024');
    // Its delete confirmation counts it alone (LabelStore.withCount), on either engine.
    const ask = await web.get(`/projects/${project}/labels/${byName.get('Invoice 2024')}/delete?q=INVOICE`);
    expect(ask.text).toContain('It comes off the 1 document that carries it');
    expect(hiddenFields(ask.text, `/projects/${project}/labels/${byName.get('Invoice 2024')}/delete`)).toMatchObject({ q: 'INVOICE' });
    // Both spellings of "é" (composed, decomposed), and only A–Z folded: "É" is not "é", as names compare.
    expect(await found('CAFe\u0301')).toEqual(ids('Café'));
    expect(await found('caf\u00e9')).toEqual(ids('Café'));
    expect(await found('CAF\u00c9')).toEqual([]);
    // The wildcards of SQL's LIKE, and its escape, are what they look like.
    expect(await found('%')).toEqual(ids('100% done'));
    expect(await found('0%')).toEqual(ids('100% done'));
    expect(await found('_')).toEqual(ids('snake_case'));
    expect(await found('e_c')).toEqual(ids('snake_case'));
    expect(await found('\\')).toEqual(ids('a\\b'));
    // Blank: every label, the first page.
    expect(await found('  ')).toHaveLength(100);
  });

  it('says so when nothing is found', async () => {
    const page = await web.get(tab('zeppelin'));
    expect(page.status).toBe(200);
    expect(rowsOf(page.text)).toEqual([]);
    expect(page.text).toContain(`<p class="empty" id="no-labels">No label's name holds “zeppelin”.</p>`);
    expect(page.text).toContain('name="q" value="zeppelin"');
  });

  it('pages the labels found, its links, forms and Delete… keeping the find', async () => {
    const first = await web.get(tab('TAG'));
    expect(rowsOf(first.text)).toEqual(ids(...TAGS.slice(0, 100)));
    const next = nextOf(first.text)!;
    expect(new URL(next, d.url).searchParams.get('q')).toBe('TAG');
    const second = await web.get(next);
    expect(rowsOf(second.text)).toEqual(ids(...TAGS.slice(100)));
    expect(nextOf(second.text)).toBeNull();
    expect(second.text).toContain(`<a href="/projects/${project}/labels?q=TAG">← First page</a>`);
    // A row's form comes back to this page of the find.
    const row = byName.get('tag 110')!;
    const fields = hiddenFields(second.text, `/projects/${project}/labels/${row}`);
    expect(fields).toMatchObject({ q: 'TAG', cursor: expect.any(String) });
    const saved = await web.post(`/projects/${project}/labels/${row}`, { ...fields, name: 'tag 110', color: 'teal' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(next);
    // So does the add form, and Delete…, asked on a page of its own.
    const add = /<form method="post" action="[^"]+" class="row-form" aria-labelledby="add-label">([\s\S]*?)<\/form>/.exec(second.text)![1]!;
    expect(add).toContain(`<input type="hidden" name="q" value="TAG"><input type="hidden" name="cursor" value="${fields.cursor}">`);
    const doomed = byName.get('tag 119')!;
    const ask = await web.get(unescape(new RegExp(`<a href="([^"]+)"[^>]*>Delete…<span class="visually-hidden"> tag 119`).exec(second.text)![1]!));
    expect(ask.status).toBe(200);
    expect(ask.text).toContain(`<a href="${next.replaceAll('&', '&amp;')}" class="button">Cancel</a>`);
    const deleted = await web.post(`/projects/${project}/labels/${doomed}/delete`, hiddenFields(ask.text, `/projects/${project}/labels/${doomed}/delete`));
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(next);
    expect(await found('tag 11')).toEqual(ids(...TAGS.slice(110, 119)));
    // A page link of all the labels is not one of a find: its first page, said.
    const all = nextOf((await web.get(`/projects/${project}/labels`)).text)!;
    const mixed = await web.get(`${all}&q=invoice`);
    expect(mixed.text).toContain('That page link is out of date; showing the first page.');
    expect(rowsOf(mixed.text)).toEqual(ids('Invoice 2024', 'paid invoice', 'unpaid INVOICES'));
  });

  it('the API finds with q, pages what it found, and keeps each cursor to its find', async () => {
    expect((await listed('q=invoice')).labels.map((l) => l.name)).toEqual(['Invoice 2024', 'paid invoice', 'unpaid INVOICES']);
    expect((await listed('q=invoice')).labels[0]!.document_count).toBe(1);
    expect((await listed(`q=${encodeURIComponent('%')}`)).labels.map((l) => l.name)).toEqual(['100% done']);
    expect((await listed(`q=${encodeURIComponent('CAFe\u0301')}`)).labels.map((l) => l.name)).toEqual(['Café']);
    expect((await listed('q=')).labels.length).toBe(byName.size - 1); // blank: all (one was deleted above)
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await listed(`q=tag&limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      paged.push(...page.labels.map((l) => l.name));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(TAGS.slice(0, 119));
    const first = await listed('q=tag&limit=1');
    for (const other of ['q=invoice&', '']) {
      const refused = await api(d, `/api/v1/projects/${project}/labels?${other}cursor=${encodeURIComponent(first.next_cursor!)}`, { token: alice.apiKey });
      expect(refused.status, other).toBe(400);
      expect(refused.body.error.message).toMatch(/^query\.cursor: not a cursor this server issued for this list/);
    }
    // The same find in another case is the same list: its cursor goes on.
    expect((await listed(`q=TAG&cursor=${encodeURIComponent(first.next_cursor!)}`)).labels[0]!.name).toBe('tag 001');
    const long = await api(d, `/api/v1/projects/${project}/labels?q=${'x'.repeat(65)}`, { token: alice.apiKey });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/^query\.q: /);
  });
});
