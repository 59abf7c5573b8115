import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeDocx, makePdf, para } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/**
 * The document API the library pages are built on (#21): filters, sorts and keyset paging of GET /documents;
 * PATCH (rename, move with its chunks), the text search sees, and the first-page thumbnail; tenancy throughout.
 */
const FILLER = Array.from({ length: 40 }, (_, i) => `Section ${i + 1} lists rainfall, soil depth and the grasses sampled on transect ${i + 1}.`);
const SURVEY = makePdf([
  [{ lines: FILLER }],
  [{ lines: FILLER.map((l) => l.replace('Section', 'Appendix')) }],
  [{ lines: ['The marmot colonies hibernate under the scree slopes.', 'Marmots whistle when eagles circle.'] }],
]);
const SCAN = readFileSync(join(REPO, 'test/fixtures/ocr/scan-300dpi.pdf'));

interface Doc {
  id: string;
  filename: string;
  size_bytes: number;
  created_at: string;
  project_id: string;
}

async function upload(d: Daemon, user: TestUser, projectId: string, files: { name: string; body: string | Buffer }[]): Promise<Doc[]> {
  const form = new FormData();
  form.append('project_id', projectId);
  for (const f of files) form.append('file', new Blob([f.body]), f.name);
  const res = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  const body = (await res.json()) as { documents: (Doc & { status: string })[] };
  if (res.status >= 300) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  for (const doc of body.documents) expect(doc.status, doc.filename).toBe('ready');
  return body.documents;
}

describe('document API: list filters and sorts, rename, move, text, thumbnail', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let field: string;
  let other: string;
  let bobProject: string;
  let docs: Doc[];
  let survey: Doc;
  let scan: Doc;

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
      field = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Field notes' } })).body.id;
      other = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Archive' } })).body.id;
      bobProject = (await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'Bob’s' } })).body.id;
      // Sizes all differ, names differ in case, and one name holds LIKE's wildcards.
      docs = await upload(d, alice, field, [
        { name: 'Zeta.txt', body: 'Zeta notes about snow fields.\n' },
        { name: 'alpha.txt', body: 'Alpha notes about the glacier tongue and its crevasses, measured twice.\n' },
        { name: 'delta.txt', body: 'Delta notes about spring meltwater.\n' },
        { name: 'Epsilon.txt', body: 'Epsilon notes about moraine ridges and boulders left by the ice.\n' },
        { name: 'eta 100%_done.txt', body: 'Eta notes about ibex herds.\n' },
        { name: 'gamma.docx', body: makeDocx(para('Gamma log', { style: 'Heading1' }) + para('Edelweiss grows on limestone ledges.')) },
      ]);
      survey = (await upload(d, alice, field, [{ name: 'Survey.pdf', body: SURVEY }]))[0]!;
      scan = (await upload(d, alice, other, [{ name: 'lighthouse-scan.pdf', body: SCAN }]))[0]!;
      docs.push(survey);
    },
    { setupTimeoutMs: 300_000 },
  );

  const list = async (query: string, token = alice.apiKey) => {
    const res = await api(d, `/api/v1/documents?${query}`, { token });
    return res;
  };

  /** Every page of a listing, following next_cursor. */
  async function pages(query: string, limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      out.push(res.body.documents.map((x: Doc) => x.filename));
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  }

  it('sorts by name (any case), size and upload time, both ways, and pages through each order exactly once', async () => {
    const mine = docs.filter((x) => x.project_id === field);
    const byName = [...mine].sort((a, b) => (a.filename.toLowerCase() < b.filename.toLowerCase() ? -1 : 1)).map((x) => x.filename);
    const bySize = [...mine].sort((a, b) => a.size_bytes - b.size_bytes).map((x) => x.filename);
    const byUpload = [...mine].sort((a, b) => (a.id < b.id ? -1 : 1)).map((x) => x.filename);
    expect(byName).toEqual(['alpha.txt', 'delta.txt', 'Epsilon.txt', 'eta 100%_done.txt', 'gamma.docx', 'Survey.pdf', 'Zeta.txt']);
    const expected: Record<string, string[]> = {
      name: byName,
      '-name': [...byName].reverse(),
      size: bySize,
      '-size': [...bySize].reverse(),
      uploaded: byUpload,
      '-uploaded': [...byUpload].reverse(),
    };
    for (const [sort, order] of Object.entries(expected)) {
      const got = await pages(`project_id=${field}&sort=${sort}`, 2);
      expect(got.flat(), sort).toEqual(order);
      expect(got.map((p) => p.length), sort).toEqual([2, 2, 2, 1]);
    }
    // A cursor belongs to its order.
    const first = await list(`project_id=${field}&sort=name&limit=2`);
    const wrong = await list(`project_id=${field}&sort=size&limit=2&cursor=${first.body.next_cursor}`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toBe('query.cursor: not a cursor this server issued for this sort order, or no longer valid; leave it out to start again from the first page');
    expect((await list('sort=sideways')).body.error.message).toMatch(/^query\.sort: must be one of "uploaded", "-uploaded", "name"/);
  });

  it('filters by type, status, part of the name (wildcards taken literally) and upload time', async () => {
    const names = async (query: string) => (await list(query)).body.documents.map((x: Doc) => x.filename).sort();
    expect(await names('type=pdf')).toEqual(['Survey.pdf', 'lighthouse-scan.pdf']);
    expect(await names('type=docx')).toEqual(['gamma.docx']);
    expect(await names(`type=pdf&project_id=${field}`)).toEqual(['Survey.pdf']);
    expect(await names('filename=ZET')).toEqual(['Zeta.txt']);
    expect(await names('filename=100%25_')).toEqual(['eta 100%_done.txt']);
    expect(await names('filename=_')).toEqual(['eta 100%_done.txt']);
    expect(await names('status=failed')).toEqual([]);
    expect((await names('status=ready')).length).toBe(8);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(await names(`uploaded_since=${tomorrow}`)).toEqual([]);
    expect((await names(`uploaded_before=${tomorrow}`)).length).toBe(8);
    expect(await names(`uploaded_since=${encodeURIComponent(survey.created_at)}&type=pdf`)).toEqual(['Survey.pdf', 'lighthouse-scan.pdf']);
    expect(await names(`uploaded_before=${encodeURIComponent(survey.created_at)}&type=pdf`)).toEqual([]);
    const bad = await list('uploaded_since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('query.uploaded_since: must be a date (2026-03-31) or an RFC 3339 time (2026-03-31T12:00:00Z)');
    expect((await list('uploaded_since=2026-02-30')).body.error.message).toBe('query.uploaded_since: is not a real date');
    expect((await list('type=gif')).status).toBe(400);
    // Another user's filters match nothing of Alice's; another user's project is a 404, not an empty project (#49).
    expect((await list('type=pdf', bob.apiKey)).body.documents).toEqual([]);
    const foreign = await list(`project_id=${field}`, bob.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message).toBe(`project "${field}" not found`);
    expect((await list('project_id=prj_nope')).status).toBe(404);
  });

  it('renames: search shows the new name at once; bad names are refused in words; others get 404', async () => {
    const zeta = docs.find((x) => x.filename === 'Zeta.txt')!;
    const res = await api(d, `/api/v1/documents/${zeta.id}`, { method: 'PATCH', token: alice.apiKey, body: { filename: '  Snow fields.txt ' } });
    expect(res.status).toBe(200);
    expect(res.body.filename).toBe('Snow fields.txt');
    const found = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'zeta snow fields', mode: 'keyword' } });
    expect(found.body.results[0].document).toMatchObject({ id: zeta.id, filename: 'Snow fields.txt' });
    for (const [filename, message] of [
      ['   ', 'body.filename: must not be empty'],
      ['a/b.txt', 'body.filename: must not contain / or \\'],
      ['x'.repeat(256), 'body.filename: must be at most 255 characters'],
    ]) {
      const bad = await api(d, `/api/v1/documents/${zeta.id}`, { method: 'PATCH', token: alice.apiKey, body: { filename } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe(message);
    }
    const nothing = 'body: nothing to change (filename, project_id, labels or metadata)';
    expect((await api(d, `/api/v1/documents/${zeta.id}`, { method: 'PATCH', token: alice.apiKey, body: {} })).body.error).toMatchObject({ message: nothing, details: [{ path: 'body', message: nothing }] });
    const stolen = await api(d, `/api/v1/documents/${zeta.id}`, { method: 'PATCH', token: bob.apiKey, body: { filename: 'mine.txt' } });
    expect(stolen.status).toBe(404);
    expect((await api(d, `/api/v1/documents/${zeta.id}`, { token: alice.apiKey })).body.filename).toBe('Snow fields.txt');
  });

  it('moves a document with its chunks: a search finds it in exactly one project at every moment', async () => {
    const search = async (projectIds: string[], query = 'transect rainfall soil') =>
      (await api(d, '/api/v1/search', { token: alice.apiKey, body: { query, mode: 'keyword', limit: 50, project_ids: projectIds } })).body.results.filter(
        (r: { document: { id: string } }) => r.document.id === survey.id,
      ) as { project: { id: string } }[];
    expect((await search([field])).length).toBeGreaterThan(2); // several chunks: a half-moved document would show under both
    let moving = true;
    let searches = 0;
    const seen: string[] = [];
    const watcher = (async () => {
      while (moving) {
        const hits = await search([field, other]);
        searches++;
        const projects = [...new Set(hits.map((h) => h.project.id))];
        seen.push(projects.length === 1 ? 'one' : projects.length === 0 ? 'neither' : 'both');
      }
    })();
    let from = field;
    for (let i = 0; i < 6; i++) {
      const to = from === field ? other : field;
      const res = await api(d, `/api/v1/documents/${survey.id}`, { method: 'PATCH', token: alice.apiKey, body: { project_id: to } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.project_id).toBe(to);
      // At once: the target finds it, the source doesn't.
      expect((await search([to])).length).toBeGreaterThan(2);
      expect(await search([from])).toEqual([]);
      from = to;
    }
    moving = false;
    await watcher;
    expect(searches).toBeGreaterThan(3);
    expect(seen.filter((s) => s !== 'one')).toEqual([]);
    expect((await api(d, `/api/v1/projects/${other}`, { token: alice.apiKey })).body.document_count).toBe(1);

    // Refused moves, each saying why; the document stays where it is.
    const move = (id: string, projectId: string, token = alice.apiKey) => api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token, body: { project_id: projectId } });
    const toBob = await move(survey.id, bobProject);
    expect(toBob.status).toBe(404);
    expect(toBob.body.error.message).toBe('project not found');
    expect((await move(survey.id, 'prj_missing')).status).toBe(404);
    expect((await move(survey.id, field, bob.apiKey)).status).toBe(404);
    const [copy] = await upload(d, alice, other, [{ name: 'survey copy.pdf', body: SURVEY }]);
    const clash = await move(copy!.id, field);
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toBe('the other project already holds the same file ("Survey.pdf")');
    expect((await api(d, `/api/v1/documents/${copy!.id}`, { token: alice.apiKey })).body.project_id).toBe(other);
    // A document still being indexed stays where its chunks are being written.
    const big = await fetch(`${d.url}/api/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.apiKey}` },
      body: (() => {
        const f = new FormData();
        f.append('project_id', field);
        f.append('file', new Blob([FILLER.join(' ').repeat(40)]), 'long.txt');
        return f;
      })(),
    });
    const queued = ((await big.json()) as { documents: Doc[] }).documents[0]!;
    const busy = await move(queued.id, other);
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toBe('the document is still being indexed: move it once it is ready (or failed)');
    // Renaming it is fine meanwhile.
    expect((await api(d, `/api/v1/documents/${queued.id}`, { method: 'PATCH', token: alice.apiKey, body: { filename: 'long notes.txt' } })).status).toBe(200);
    expect((await api(d, `/api/v1/documents/${queued.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
  }, 240_000);

  it('gives the text search sees, by page, marks OCR text, and pages by chunks', async () => {
    const text = async (id: string, query = '', token = alice.apiKey) => api(d, `/api/v1/documents/${id}/text${query}`, { token });
    const pdf = await text(survey.id);
    expect(pdf.status).toBe(200);
    expect(pdf.body.status).toBe('ready');
    const pageNumbers = pdf.body.pages.map((p: { page: number }) => p.page);
    expect(pageNumbers[0]).toBe(1);
    expect(pageNumbers).toEqual([...pageNumbers].sort((a, b) => a - b));
    const chunks = pdf.body.pages.flatMap((p: { chunks: unknown[] }) => p.chunks);
    expect(chunks.map((c: { index: number }) => c.index)).toEqual(chunks.map((_: unknown, i: number) => i));
    expect(chunks.at(-1).text).toContain('marmot colonies hibernate');
    expect(chunks.every((c: { ocr: boolean }) => c.ocr === false)).toBe(true);
    // Paged: two chunks at a time, the same chunks in the same order.
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await text(survey.id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...res.body.pages.flatMap((p: { chunks: { index: number }[] }) => p.chunks.map((c) => c.index)));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(chunks.map((c: { index: number }) => c.index));
    expect((await text(survey.id, '?cursor=bogus')).status).toBe(400);

    const ocr = await text(scan.id);
    const ocrChunks = ocr.body.pages.flatMap((p: { chunks: unknown[] }) => p.chunks);
    expect(ocr.body.pages[0].page).toBe(1);
    expect(ocrChunks.length).toBeGreaterThan(0);
    expect(ocrChunks.every((c: { ocr: boolean }) => c.ocr)).toBe(true);
    expect(ocrChunks.map((c: { text: string }) => c.text).join(' ')).toMatch(/lighthouse keeper/i);

    const docx = await text(docs.find((x) => x.filename === 'gamma.docx')!.id);
    expect(docx.body.pages).toHaveLength(1);
    expect(docx.body.pages[0].page).toBeNull();
    expect(docx.body.pages[0].chunks[0]).toMatchObject({ heading: 'Gamma log', page_start: null });
    expect((await text(survey.id, '', bob.apiKey)).status).toBe(404);
  });

  it('draws the first page of a PDF as a WebP image; no thumbnail for text, for a broken PDF or for another user', async () => {
    const res = await fetch(`${d.url}/api/v1/documents/${survey.id}/thumbnail`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    const webp = Buffer.from(await res.arrayBuffer());
    expect([webp.subarray(0, 4).toString(), webp.subarray(8, 16).toString()]).toEqual(['RIFF', 'WEBPVP8X']);
    // The extended header gives the canvas size as width − 1 and height − 1, 24 bits each, little-endian.
    expect(webp.readUIntLE(24, 3) + 1).toBe(320);
    expect(webp.readUIntLE(27, 3) + 1).toBeGreaterThan(320); // a portrait page
    expect(webp.length).toBeLessThan(40_000);
    const txt = await api(d, `/api/v1/documents/${docs[1]!.id}/thumbnail`, { token: alice.apiKey });
    expect(txt.status).toBe(404);
    expect(txt.body.error.message).toBe('only PDFs and images have a thumbnail');
    expect((await api(d, `/api/v1/documents/${survey.id}/thumbnail`, { token: bob.apiKey })).status).toBe(404);
    // A file that passes as a PDF but can't be drawn fails its own thumbnail, not the daemon.
    const broken = await fetch(`${d.url}/api/v1/upload?wait=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.apiKey}` },
      body: (() => {
        const f = new FormData();
        f.append('file', new Blob([Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')]), 'broken.pdf');
        return f;
      })(),
    });
    const brokenId = ((await broken.json()) as { documents: Doc[] }).documents[0]!.id;
    const none = await api(d, `/api/v1/documents/${brokenId}/thumbnail`, { token: alice.apiKey });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toBe('the first page of this PDF could not be drawn');
    expect((await api(d, '/api/v1/health')).status).toBe(200);
  });

  it('draws a scanned JPEG as a WebP thumbnail, upright and 320 pixels wide', async () => {
    // A landscape photo stored sideways, with EXIF orientation 6 (turn it a quarter clockwise): shown upright, portrait.
    const jpeg = await sharp({ create: { width: 1200, height: 800, channels: 3, background: { r: 200, g: 200, b: 200 } } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'scan.jpg', bytes: jpeg }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const id = (up.body.documents as Doc[])[0]!.id;
    const res = await fetch(`${d.url}/api/v1/documents/${id}/thumbnail`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 320, 480]);
    expect((await api(d, `/api/v1/documents/${id}/thumbnail?page=2`, { token: alice.apiKey })).body.error.message).toBe('this image has 1 page: there is no page 2');
    expect((await api(d, `/api/v1/documents/${id}/thumbnail`, { token: bob.apiKey })).status).toBe(404);
  });
});
