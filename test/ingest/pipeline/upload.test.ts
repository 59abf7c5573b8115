import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { ELF, GIF, makeDocx, makePdf, prose } from './fixtures.js';
import { storedChunks, storedFiles, uploadFiles } from './helpers.js';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../../src/models/builtin/minilm-embedder.js';
import { acceptedList } from '../../helpers/accepted-types.js';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** What the pipeline's own chunker makes of these bytes (built code, real tokenizer): the count to expect. */
async function expectedChunkCount(bytes: Buffer, type: string, filename: string): Promise<number> {
  const { createExtractor } = await import(join(REPO, 'dist/ingest/extract.js'));
  const { chunkDocument } = await import(join(REPO, 'dist/ingest/chunk.js'));
  const { BuiltinEmbedder } = await import(join(REPO, 'dist/models/builtin/minilm-embedder.js'));
  const extractor = createExtractor({});
  try {
    const doc = await extractor.extract(bytes, type, { filename });
    const tokenizerOwner = new BuiltinEmbedder({ modelCacheDir: '/nonexistent' }); // tokenizer only, no model load
    return chunkDocument(doc, { tokenizer: tokenizerOwner.tokenizer, maxTokens: tokenizerOwner.maxTokens, overlapTokens: 32, title: doc.title ?? filename }).length;
  } finally {
    await extractor.close();
  }
}

describe('upload → parse → chunk → embed → index', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    bob = await addUser(d);
  }, { args: ['--max-upload-mb', '1', '--max-files', '3'] });

  it('indexes a multi-page text PDF with its pages', async () => {
    const pages = [
      ['Aardvarks live on page one.', prose('pdf-one', 4)],
      ['Bonobos appear on page two.', prose('pdf-two', 4)],
      ['Capybaras close on page three.', prose('pdf-three', 4)],
    ];
    const bytes = makePdf(pages.map((p) => p.flatMap((line) => line.match(/.{1,90}(\s|$)/g)!.map((s) => s.trim()))));
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'animals.pdf', bytes }], { query: '?wait=true', metadata: '{"source":"test"}' });
    expect(res.status).toBe(200);
    const [doc] = res.body.documents;
    expect(doc).toMatchObject({ filename: 'animals.pdf', content_type: 'application/pdf', status: 'ready', progress: 1, pages: 3, error: null, metadata: { source: 'test' } });
    expect(doc.size_bytes).toBe(bytes.length);
    expect(doc.chunk_count).toBe(await expectedChunkCount(bytes, 'application/pdf', 'animals.pdf'));
    expect(doc.chunk_count).toBeGreaterThan(0);

    const stored = await storedChunks(d.dataDir, doc.id);
    expect(stored.count).toBe(doc.chunk_count);
    for (const [word, page] of [['Aardvarks', 1], ['Bonobos', 2], ['Capybaras', 3]] as const) {
      const chunk = stored.rows.find((r) => r.text.includes(word));
      expect(chunk, word).toBeDefined();
      expect(chunk!.page_start!).toBeLessThanOrEqual(page);
      expect(chunk!.page_end!).toBeGreaterThanOrEqual(page);
    }
  }, 120_000);

  it('indexes a DOCX with its headings', async () => {
    const bytes = makeDocx([
      { heading: 'Introduction', paragraphs: ['Kiwis are flightless birds.', prose('docx-intro', 6)] },
      { heading: 'Habitat', paragraphs: ['Penguins prefer cold water.', prose('docx-habitat', 30)] },
    ]);
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'birds.docx', bytes }], { query: '?wait=true' });
    expect(res.status).toBe(200);
    const [doc] = res.body.documents;
    expect(doc).toMatchObject({ content_type: DOCX_TYPE, status: 'ready', pages: null });
    expect(doc.chunk_count).toBe(await expectedChunkCount(bytes, DOCX_TYPE, 'birds.docx'));
    expect(doc.chunk_count).toBeGreaterThanOrEqual(2);
    const stored = await storedChunks(d.dataDir, doc.id);
    expect(stored.count).toBe(doc.chunk_count);
    expect(stored.rows.find((r) => r.text.includes('Kiwis'))?.heading).toBe('Introduction');
    expect(stored.rows.find((r) => r.text.includes('Penguins'))?.heading).toBe('Habitat');
  }, 120_000);

  it('indexes a TXT, and reports it through GET /documents/{id} and the list', async () => {
    const bytes = Buffer.from(`${prose('txt-a', 40)}\n\n${prose('txt-b', 40)}\n`, 'utf8');
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'notes.txt', bytes }], { query: '?wait=true' });
    expect(res.status).toBe(200);
    const [doc] = res.body.documents;
    expect(doc).toMatchObject({ content_type: 'text/plain', status: 'ready', pages: null });
    expect(doc.chunk_count).toBe(await expectedChunkCount(bytes, 'text/plain', 'notes.txt'));
    expect(doc.chunk_count).toBeGreaterThanOrEqual(3);
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(doc.chunk_count);

    const got = await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...doc });
    const list = await api(d, '/api/v1/documents?status=ready&limit=2', { token: alice.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.documents).toHaveLength(2);
    const page2 = await api(d, `/api/v1/documents?status=ready&limit=2&cursor=${list.body.next_cursor}`, { token: alice.apiKey });
    expect(page2.body.documents.map((x: { filename: string }) => x.filename)).toContain('notes.txt');
    expect(page2.body.next_cursor).toBeNull();
  }, 120_000);

  it('answers 202 at once without ?wait and ends ready', async () => {
    const bytes = Buffer.from(prose('async', 10));
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'later.txt', bytes }]);
    expect(res.status).toBe(202);
    expect(res.body.documents[0]).toMatchObject({ status: 'queued', progress: 0, chunk_count: 0 });
    expect(res.body.documents[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    const id = res.body.documents[0].id;
    for (let i = 0; i < 120; i++) {
      const got = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey });
      if (got.body.status === 'ready') return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error('document did not become ready');
  }, 60_000);

  it('returns the existing document for the same bytes in the same project, without re-embedding', async () => {
    const bytes = Buffer.from(prose('dup', 8));
    const first = await uploadFiles(d, alice.apiKey, [{ name: 'one.txt', bytes }], { query: '?wait=true' });
    const again = await uploadFiles(d, alice.apiKey, [{ name: 'renamed.txt', bytes }], { query: '?wait=true' });
    expect(again.status).toBe(200);
    expect(again.body.documents[0]).toMatchObject({ id: first.body.documents[0].id, filename: 'one.txt', duplicate: true, status: 'ready' });
    expect(again.body.documents[0].updated_at).toBe(first.body.documents[0].updated_at);
    // Another project keeps its own document, sharing the stored original.
    const project = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'dups' } });
    const other = await uploadFiles(d, alice.apiKey, [{ name: 'one.txt', bytes }], { projectId: project.body.id, query: '?wait=true' });
    expect(other.body.documents[0].id).not.toBe(first.body.documents[0].id);
    expect(other.body.documents[0].duplicate).toBeUndefined();
    expect(storedFiles(d.dataDir).originals.filter((sha) => sha === first.body.documents[0].sha256)).toHaveLength(1);
  }, 60_000);

  it('refuses a file over the size cap while streaming (413) and keeps nothing', async () => {
    const before = storedFiles(d.dataDir);
    const big = Buffer.alloc(3 * 1024 * 1024, 'a');
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'small.txt', bytes: Buffer.from('fine text\n') }, { name: 'huge.txt', bytes: big }]);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'payload_too_large', message: '"huge.txt" is larger than the 1 MiB limit per file' });
    const after = storedFiles(d.dataDir);
    expect(after.temp).toEqual([]);
    expect(after.originals.sort()).toEqual(before.originals.sort());
    const docs = await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey });
    expect(docs.body.documents.map((x: { filename: string }) => x.filename)).not.toContain('small.txt');
  }, 30_000);

  it('refuses what is not a type it reads by its bytes (415), whatever its name', async () => {
    for (const [name, bytes] of [['picture.pdf', GIF], ['program.txt', ELF]] as const) {
      const res = await uploadFiles(d, alice.apiKey, [{ name, bytes }]);
      expect(res.status).toBe(415);
      expect(res.body.error).toMatchObject({ code: 'unsupported_media_type', message: `"${name}" is not a type docsearch reads (accepted: ${acceptedList()})` });
    }
    const empty = await uploadFiles(d, alice.apiKey, [{ name: 'empty.txt', bytes: Buffer.alloc(0) }]);
    expect(empty.body.error.message).toBe(`"empty.txt" is empty (accepted: ${acceptedList()})`);
    const json = await api(d, '/api/v1/upload', { token: alice.apiKey, body: { file: 'x' } });
    expect(json.status).toBe(415);
    expect(json.body.error.message).toBe('request body must be multipart/form-data with one or more "file" parts');
    expect(storedFiles(d.dataDir).temp).toEqual([]);
  }, 30_000);

  it('rejects bad forms with the field named', async () => {
    const file = [{ name: 'a.txt', bytes: Buffer.from('some words\n') }];
    const noFile = await uploadFiles(d, alice.apiKey, [], { fields: { project_id: 'x' } });
    expect(noFile.body.error).toMatchObject({ code: 'invalid_request', message: 'no file: send one or more files in multipart field "file"' });
    const meta = await uploadFiles(d, alice.apiKey, file, { metadata: '[1,2]' });
    expect(meta.body.error).toMatchObject({ code: 'invalid_request', message: 'metadata: must be a JSON object' });
    const unknown = await uploadFiles(d, alice.apiKey, file, { fields: { color: 'red' } });
    expect(unknown.body.error.message).toBe('unknown form field "color" (expected: file, project_id, metadata, paths, labels, language, ocr_languages)');
    const many = await uploadFiles(d, alice.apiKey, ['1', '2', '3', '4'].map((n) => ({ name: `${n}.txt`, bytes: Buffer.from(`file ${n}\n`) })));
    expect(many.status).toBe(400);
    expect(many.body.error.message).toBe('at most 3 files per upload');
    const wait = await uploadFiles(d, alice.apiKey, file, { query: '?wait=true&wait_timeout=601' });
    expect(wait.body.error.message).toMatch(/^query\.wait_timeout: /);
    expect(storedFiles(d.dataDir).temp).toEqual([]);
  }, 30_000);

  it("answers 404 for an unknown project and for another user's project or document", async () => {
    const file = [{ name: 'a.txt', bytes: Buffer.from(prose('nf', 2)) }];
    const unknown = await uploadFiles(d, alice.apiKey, file, { projectId: 'prj_0000000000000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', message: 'project not found' });
    const bobProjects = await api(d, '/api/v1/projects', { token: bob.apiKey });
    const foreign = await uploadFiles(d, alice.apiKey, file, { projectId: bobProjects.body.projects[0].id });
    expect(foreign.status).toBe(404);

    const mine = await uploadFiles(d, alice.apiKey, file, { query: '?wait=true' });
    const id = mine.body.documents[0].id;
    for (const [method, path] of [['GET', `/api/v1/documents/${id}`], ['DELETE', `/api/v1/documents/${id}`]]) {
      const res = await api(d, path!, { method, token: bob.apiKey });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', message: 'document not found' });
    }
    expect((await api(d, '/api/v1/documents', { token: bob.apiKey })).body.documents).toEqual([]);
    expect((await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).status).toBe(200);
  }, 60_000);

  it('delete takes the document out of lists and counts at once, into the trash; purged, its chunks and unshared original go', async () => {
    const project = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'deletions' } });
    const bytes = Buffer.from(`${prose('del-a', 30)}\n\n${prose('del-b', 30)}`);
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'gone.txt', bytes }], { projectId: project.body.id, query: '?wait=true' });
    const doc = up.body.documents[0];
    expect(doc.status).toBe('ready');
    const counts = (await api(d, `/api/v1/projects/${project.body.id}`, { token: alice.apiKey })).body;
    expect(counts).toMatchObject({ document_count: 1, chunk_count: doc.chunk_count, size_bytes: bytes.length });
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(doc.chunk_count);
    expect(storedFiles(d.dataDir).originals).toContain(doc.sha256);

    const del = await api(d, `/api/v1/documents/${doc.id}`, { method: 'DELETE', token: alice.apiKey });
    expect(del.status).toBe(204);
    expect((await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey })).status).toBe(404);
    expect((await api(d, `/api/v1/projects/${project.body.id}`, { token: alice.apiKey })).body).toMatchObject({ document_count: 0, chunk_count: 0, size_bytes: 0 });
    // In the trash it keeps what a restore needs.
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(doc.chunk_count);
    expect(storedFiles(d.dataDir).originals).toContain(doc.sha256);
    expect((await api(d, `/api/v1/trash/${doc.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(0);
    expect(storedFiles(d.dataDir).originals).not.toContain(doc.sha256);
  }, 60_000);

  it('deleting a project removes its documents, chunks and files', async () => {
    const project = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'doomed' } });
    const bytes = Buffer.from(prose('doomed', 12));
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'doomed.txt', bytes }], { projectId: project.body.id, query: '?wait=true' });
    const doc = up.body.documents[0];
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(doc.chunk_count);
    expect((await api(d, `/api/v1/projects/${project.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    expect((await storedChunks(d.dataDir, doc.id)).count).toBe(0);
    expect(storedFiles(d.dataDir).originals).not.toContain(doc.sha256);
    expect((await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey })).status).toBe(404);
  }, 60_000);

  it('reports the embedder and the queue in health', async () => {
    const res = await api(d, '/api/v1/health');
    expect(res.status).toBe(200);
    expect(res.body.components.embedder).toMatchObject({ status: 'up', loaded: true, id: BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION], dimension: 384 });
    expect(res.body.components.queue).toEqual({ status: 'up' });
  });

  it('logs document.ingested events', () => {
    const events = d
      .stdout()
      .split('\n')
      .filter((l) => l.includes('"event":"document.ingested"'))
      .map((l) => JSON.parse(l));
    expect(events.length).toBeGreaterThanOrEqual(5);
    expect(events[0]).toMatchObject({ msg: 'document ingested', chunks: expect.any(Number), document_id: expect.stringMatching(/^doc_/) });
  });
});
