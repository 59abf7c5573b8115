/**
 * The search page over real HTTP (server-rendered, no script): grouped by document by default, the range shown,
 * next and previous pages through the API's cursors to the end without repeats, the passages view, weak answers
 * and documents still being indexed said in words, sync paths shown, foreign or broken page links refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv } from '../cli/cli-env.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const WORD = 'zorblax';
const NOTES = 45;
const txt = (s: string) => Buffer.from(s, 'utf8');

/** The page's pieces a person reads: the status line, the results' document ids, the page links. */
function read(page: string) {
  const status = /<p class="[^"]*" role="status">([\s\S]*?)<\/p>/.exec(page.slice(page.indexOf('</form>')))?.[1] ?? null;
  const ids = [...page.matchAll(/<li class="result" data-document-id="([^"]+)"/g)].map((m) => m[1]!);
  const link = (rel: string) => new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(page)?.[1]?.replaceAll('&amp;', '&') ?? null;
  return { status, ids, next: link('next'), prev: link('prev') };
}

describe('search page', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  const q = (s: string, extra = '') => `/search?q=${encodeURIComponent(s)}${extra}`;

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      const files = Array.from({ length: NOTES }, (_, i) => ({
        name: `note-${i + 1}.txt`,
        bytes: txt(`Specimen note ${i + 1}. The ${WORD} sample ${i + 1} rests on shelf ${(i % 7) + 1} of the cold room.`),
        path: `cold room/notes/note-${i + 1}.txt`,
      }));
      for (let i = 0; i < files.length; i += 20) {
        const batch = files.slice(i, i + 20);
        const res = await uploadFiles(d, alice.apiKey, batch, { query: '?wait=true', fields: { paths: JSON.stringify(batch.map((f) => f.path)) } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
      web = await loggedIn(d, alice);
    },
    { timeoutMs: 60_000, setupTimeoutMs: 300_000 },
  );

  it('groups by document, shows the range and the count, and pages forward to the end and back', async () => {
    const first = await web.get(q(WORD, '&mode=keyword'));
    expect(first.status).toBe(200);
    let page = read(first.text);
    expect(page.status).toBe(`1–20 of ${NOTES} documents for “${WORD}”`);
    expect(page.ids).toHaveLength(20);
    expect(page.prev).toBeNull();
    expect(first.text).toContain('<option value="documents" selected>Documents</option>');
    const seen = [...page.ids];
    const ranges = [page.status];
    const hrefs: string[] = [];
    while (page.next) {
      hrefs.push(page.next);
      const res = await web.get(page.next);
      expect(res.status).toBe(200);
      page = read(res.text);
      seen.push(...page.ids);
      ranges.push(page.status);
      expect(page.prev).not.toBeNull();
    }
    expect(ranges).toEqual([`1–20 of ${NOTES} documents for “${WORD}”`, `21–40 of ${NOTES} documents for “${WORD}”`, `41–45 of ${NOTES} documents for “${WORD}”`]);
    expect(new Set(seen).size).toBe(NOTES);
    // Previous from the last page is the middle page again; from there, the first.
    const back = read((await web.get(page.prev!)).text);
    expect(back.status).toBe(`21–40 of ${NOTES} documents for “${WORD}”`);
    expect(back.ids).toEqual(seen.slice(20, 40));
    const home = read((await web.get(back.prev!)).text);
    expect(home.status).toBe(`1–20 of ${NOTES} documents for “${WORD}”`);
    expect(home.ids).toEqual(seen.slice(0, 20));
    expect(home.prev).toBeNull();
    // The page links keep the search: mode and query.
    expect(hrefs[0]).toMatch(/^\/search\?q=zorblax&mode=keyword&cursor=[\w-]+$/);
  });

  it('lists passages with view=passages, and shows the sync path', async () => {
    const res = await web.get(q(`${WORD} shelf 3`, '&view=passages&mode=keyword'));
    const page = read(res.text);
    expect(page.status).toBe(`1–20 of ${NOTES} passages for “${WORD} shelf 3”`);
    expect(res.text).toContain('<option value="passages" selected>Passages</option>');
    expect(res.text).toMatch(/<span class="path">cold room\/notes\/note-\d+\.txt<\/span>/);
    expect(read((await web.get(page.next!)).text).status).toBe(`21–40 of ${NOTES} passages for “${WORD} shelf 3”`);
    expect(page.next).toContain('view=passages');
  });

  it('a document with more passages in the results than it shows links to all of them, a search within it (#53 item 8)', async () => {
    const sections = Array.from({ length: 16 }, (_, i) =>
      [`Section ${i + 1}`, '', ...Array.from({ length: 6 }, (_, j) => `Field log ${i + 1}.${j + 1}: the quillwort bed by marker ${i * 6 + j} was counted again at dawn and its depth written down.`)].join('\n'),
    );
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'quillwort survey.md', bytes: txt(sections.join('\n\n')) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = up.body.documents[0].id as string;
    const grouped = await web.get(q('quillwort', '&mode=keyword'));
    const result = grouped.text.slice(grouped.text.indexOf(`data-document-id="${id}"`));
    const matches = Number(/(\d+) passages of it in the results; the best \d+ are shown/.exec(result)?.[1]);
    expect(matches).toBeGreaterThan(3);
    const link = /<a href="([^"]+)" class="all-passages">Show all its passages<\/a>/.exec(result)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toBe(`/search?q=quillwort&mode=keyword&document=${id}`);
    const within = await web.get(link!);
    expect(within.status).toBe(200);
    const page = read(within.text);
    expect(page.status).toBe(`1–${matches} of ${matches} passages of <bdi class="filename">quillwort survey.md</bdi> for “quillwort”`);
    expect(new Set(page.ids)).toEqual(new Set([id]));
    expect(page.ids).toHaveLength(matches);
    // The form searches the same document again; a link leads back to the whole library.
    expect(within.text).toContain(`<input type="hidden" name="document" value="${id}">`);
    expect(within.text).toContain('<a href="/search?q=quillwort&amp;mode=keyword">Search all documents for “quillwort”</a>');
    // Another user learns nothing of it: the same answer as for a document that does not exist.
    const bob = await loggedIn(d, await addUser(d));
    const foreign = await bob.get(link!);
    const missing = await bob.get(link!.replace(id, 'doc_00000000000000000000000000'));
    expect([foreign.status, missing.status]).toEqual([404, 404]);
    expect(foreign.text).toContain(`document &quot;${id}&quot; not found`);
    expect(read(foreign.text).ids).toEqual([]);
    expect(foreign.text).not.toContain('quillwort survey');
  });

  it('says when nothing is close, and shows only the nearest few without a next page', async () => {
    const res = await web.get(q('xyzzyplugh frobnicate'));
    const page = read(res.text);
    expect(page.status).toContain('No close matches for “xyzzyplugh frobnicate”');
    expect(page.status).toContain('These are the nearest documents, probably not what you are looking for.');
    expect(page.next).toBeNull();
    const none = read((await web.get(q('xyzzyplugh frobnicate', '&mode=keyword'))).text);
    expect(none.status).toBe('No passages match “xyzzyplugh frobnicate”. Try other words or another mode.');
    expect(none.ids).toEqual([]);
  });

  it('refuses a page link of another user or another search, in words', async () => {
    const link = read((await web.get(q(WORD, '&mode=keyword'))).text).next!;
    const cursor = new URL(link, d.url).searchParams.get('cursor')!;
    const bob = await loggedIn(d, await addUser(d));
    const foreign = await bob.get(q(WORD, `&mode=keyword&cursor=${cursor}`));
    expect(foreign.status).toBe(400);
    expect(foreign.text).toContain('That page link belongs to another search: search again to start from the first page.');
    expect(read(foreign.text).ids).toEqual([]);
    const other = await web.get(q('shelf', `&mode=keyword&cursor=${cursor}`));
    expect(other.status).toBe(400);
    expect(other.text).toContain('That page link belongs to another search');
  });

  it('a saved search whose project is gone says so in words, and a filter it cannot use is named plainly', async () => {
    const doomed = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Short-lived' } })).body.id as string;
    await web.get(q(WORD, `&project=${doomed}`));
    const saved = await web.submit('/search/save', { _csrf: web.csrf, name: 'In the short-lived project', q: WORD, project: doomed });
    expect(saved.text).toContain('Saved “In the short-lived project”.');
    expect((await api(d, `/api/v1/projects/${doomed}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    // Its link under Saved searches still names the project: the page says what happened, not `project "prj_…" not found`.
    const link = [...(await web.get('/search')).text.matchAll(/href="(\/search\?[^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&')).find((h) => h.includes(doomed))!;
    expect(link).toBeDefined();
    const opened = await web.get(link);
    expect(opened.status).toBe(404);
    expect(opened.text).toContain(
      '<p class="error" role="alert">The project this search is limited to is not in your library any more (deleted, or no longer shared with you). Choose a project above, or search all of them.</p>',
    );
    expect(opened.text).not.toContain(`project &quot;${doomed}&quot;`);
    // A filter the search cannot take is named as the filter, with the rule in words.
    const long = await web.get(q(WORD, `&labels=${'x'.repeat(65)}`));
    expect(long.status).toBe(400);
    expect(long.text).toContain('<p class="error" role="alert">The labels filter must be at most 64 characters.</p>');
  });

  it('says how many documents are still being indexed', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of the inventory lists one more jar of preserved samples.`).join('\n');
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'inventory.txt', bytes: txt(long) }]);
    expect(up.status).toBe(202);
    const res = await web.get(q(WORD, '&mode=keyword'));
    expect(res.text).toContain('<p class="notice indexing" role="status">Still indexing 1 document: results may be incomplete until it is ready.</p>');
    const id = up.body.documents[0].id as string;
    for (let i = 0; i < 600 && (await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 250));
    expect((await web.get(q(WORD, '&mode=keyword'))).text).not.toContain('Still indexing');
  });

  it('cites a slide, a sheet and its rows, a chapter — on the search page and the document page', async () => {
    const files = ['briefing.pptx', 'berths.xlsx', 'coast.epub'].map((name) => ({ name, bytes: readFileSync(join(REPO, 'test/fixtures/formats', name)) }));
    const up = await uploadFiles(d, alice.apiKey, files, { query: '?wait=true&wait_timeout=300' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const result = async (query: string, filename: string) => {
      const text = (await web.get(q(query, '&view=passages&mode=keyword'))).text;
      const at = text.indexOf(`class="filename">${filename}</a>`);
      expect(at, `${query}: ${filename}`).toBeGreaterThan(-1);
      return text.slice(at, text.indexOf('</li>', at));
    };
    const slide = await result('deckhands mooring lines gale', 'briefing.pptx');
    expect(slide).toContain('<p class="meta"><span class="page">slide 3</span> · <bdi class="heading">Mooring lines</bdi></p>');
    // Slides open in the viewer at the passage (their original would download).
    expect(slide).toMatch(/<a href="\/documents\/doc_\w+\/view\?chunk=\d+&amp;answer=\d+-\d+#passage" class="at-match">Open at this passage<\/a>/);
    // The sheet is said once, with the rows.
    const rows = await result('Borealis refrigerated mackerel', 'berths.xlsx');
    expect(rows).toMatch(/<p class="meta"><span class="page">rows? \d+(–\d+)? · Berths<\/span><\/p>/);
    const chapter = await result('schooner aground reef', 'coast.epub');
    expect(chapter).toContain('<span class="page">chapter 2</span> · <bdi class="heading">The Wreck</bdi>');
    expect(`${slide}${rows}${chapter}`).not.toMatch(/\bpp?\. \d/);

    const deck = up.body.documents.find((doc: any) => doc.filename === 'briefing.pptx');
    const page = (await web.get(`/documents/${deck.id}`)).text;
    expect([...page.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => m[1])).toEqual(['Slide 1', 'Slide 2', 'Slide 3']);
    expect(page).toContain('by the slide each starts on');
  }, 300_000);

  it('an override in an e-mail subject reverses nothing: not the From/To line of the snippet, not the document page', async () => {
    // The security probe's finding 10: "Invoice <U+202E>fdp.exe" displays as "Invoice exe.pdf", and the line after it backwards.
    const subject = `=?UTF-8?B?${Buffer.from('Harbour dues invoice \u202efdp.exe').toString('base64')}?=`;
    const mail = ['From: Harbour Master <dues@harbour.example>', 'To: skipper@example.com', `Subject: ${subject}`, 'Content-Type: text/plain; charset=utf-8', '', 'Mooring dues for the quarter, payable to the harbour office.', ''].join('\r\n');
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'dues.eml', bytes: txt(mail) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const page = (await web.get(q('harbour dues invoice mooring', '&view=passages&mode=keyword'))).text;
    const at = page.indexOf('class="filename">dues.eml</a>');
    expect(at).toBeGreaterThan(-1);
    const result = page.slice(at, page.indexOf('</li>', at));
    expect(result).toContain('<bdi class="heading">Harbour dues invoice \ufffdfdp.exe</bdi>');
    expect(result).toContain('<p class="snippet" dir="auto">');
    expect(result.replace(/<[^>]+>/g, '')).toMatch(/Harbour dues invoice \ufffdfdp\.exe\s+From: Harbour Master \(dues@harbour\.example\) · To: skipper@example\.com/);
    expect(page).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    const doc = (await web.get(`/documents/${up.body.documents[0].id}`)).text;
    expect(doc).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(doc).toMatch(/<p class="chunk-text" dir="auto"[ >]/); // then its language, where told
  }, 120_000);

  it('a passage does not show its heading lines twice: not as its snippet’s first words, nor a heading-only passage’s (web and CLI)', async () => {
    // pandoc's page: "Lighthouse Keeping" (h1) opens the page and "Lamps" (h2) follows at once: one passage opens with
    // both lines, which its heading path already says.
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'page.html', bytes: readFileSync(join(REPO, 'test/fixtures/formats/page.html')) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const docId = up.body.documents[0].id as string;
    const shown = async (query: string, id: string) => {
      const page = (await web.get(q(query, `&mode=keyword&view=passages`))).text;
      return [...page.matchAll(/<li class="result" data-document-id="([^"]+)">([\s\S]*?)<\/li>/g)]
        .filter((m) => m[1] === id)
        .map((m) => ({
          html: m[2]!,
          heading: /<bdi class="heading">([\s\S]*?)<\/bdi>/.exec(m[2]!)?.[1] ?? null,
          snippet: (/<p class="snippet"[^>]*>([\s\S]*?)<\/p>/.exec(m[2]!)?.[1] ?? '').replace(/<[^>]+>/g, '').trim(),
        }));
    };
    const lamps = (await shown('Lighthouse Keeping lamps', docId)).filter((r) => r.heading === 'Lighthouse Keeping &gt; Lamps');
    expect(lamps.length).toBeGreaterThan(0);
    for (const r of lamps) expect(r.snippet, r.html).not.toMatch(/^(Lighthouse Keeping|Lamps)\b/);

    // A heading with nothing after it at all (the document's last line) is a passage of its own: said once.
    const md = await uploadFiles(d, alice.apiKey, [{ name: 'errata.md', bytes: Buffer.from('# Tide tables\n\nThe tides turn twice a day at the harbour mouth.\n\n# Errata quokkafish\n') }], { query: '?wait=true' });
    expect(md.status, JSON.stringify(md.body)).toBe(200);
    const mdId = md.body.documents[0].id as string;
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'Errata quokkafish', mode: 'keyword', document_ids: [mdId], limit: 20 } });
    const passages = (res.body as { results: { text: string; heading?: string }[] }).results;
    expect(passages.find((p) => p.heading === 'Errata quokkafish' && p.text.trim() === 'Errata quokkafish'), JSON.stringify(passages)).toBeDefined();
    const alone = await shown('Errata quokkafish', mdId);
    expect(alone.length).toBeGreaterThan(0);
    for (const r of alone) expect(r.heading, r.html).not.toBe(r.snippet);
    const cli = await runCli(['search', 'Errata quokkafish', '--mode', 'keyword', '--passages', '--document', mdId], { env: cliEnv(d, { DOCSEARCH_TOKEN: alice.apiKey }) });
    expect(cli.code, cli.stderr).toBe(0);
    // A result is its line (number, file, heading path, project, ranks), then its text: the heading-only passage's line
    // does not name the heading its text is.
    const lines = cli.stdout.split('\n').map((l) => l.trim());
    const at = lines.indexOf('Errata quokkafish');
    expect(at, cli.stdout).toBeGreaterThan(0);
    expect(lines[at - 1], cli.stdout).not.toContain('Errata quokkafish');
  }, 120_000);
});
