/**
 * What the daemon loads, and when (docs/ingest.md): a start loads nothing of OCR, on any thread, and starts no OCR
 * thread; a parse worker loads each parser with its first document of that type, so one that only reads text never
 * loads pdf.js, sharp or the office libraries. sharp, which also draws the image thumbnails in the daemon's own
 * thread, is not loaded for them at start (it was: ~17 MB). One daemon, run under test/helpers/record-requires.cjs:
 * what each thread loads, and what each worker runs.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, waitPreloaded } from '../helpers/daemon.js';
import { type RecordedThread, recordedDaemon } from '../helpers/recorded-loads.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from './pipeline/helpers.js';

/** What src/ingest/ocr and src/pdf load: tesseract.js, pdf.js, its canvas, and sharp (image pages, thumbnails). */
const OCR = ['tesseract.js', 'pdfjs-dist', '@napi-rs/canvas', 'sharp'];
/** What the office parsers load: mammoth (.docx), yauzl (every zip: OOXML, OpenDocument, EPUB), saxes (their XML). */
const OFFICE = ['mammoth', 'yauzl', 'saxes'];
/** What the daemon's own thread needs only to show a document (Markdown, HTML, an e-mail) or to read a web page. */
const VIEWING = ['micromark', 'sanitize-html', 'postal-mime', 'htmlparser2'];

/** `name on thread N (script)` for each of `names` one of `threads` has loaded. */
const loadedOn = (threads: RecordedThread[], names: string[]): string[] =>
  threads.flatMap((t) => names.filter((name) => t.packages.has(name)).map((name) => `${name} on thread ${t.id} (${t.script})`));

describe('what the daemon loads, and when', () => {
  const recorded = recordedDaemon();
  let d: Daemon;
  let token: string;
  daemonForSuite(
    async (started) => {
      d = started;
      token = (await addUser(d)).apiKey;
      // What the start loads, its index preload included, is all recorded before the first check.
      await waitPreloaded(d);
    },
    { ...recorded.options, setupTimeoutMs: 120_000 },
  );
  /** Whether a thread is a parse worker (src/ingest/extract.ts's pool). */
  const parses = (t: RecordedThread) => t.script.endsWith('/dist/ingest/extract-worker.js');
  /** Uploads `files` and waits until each is ready. */
  const upload = async (...files: string[]) => {
    const parts = files.map((f) => ({ name: basename(f), bytes: readFileSync(join(REPO, 'test/fixtures', f)) }));
    const res = await uploadFiles(d, token, parts, { query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const doc of res.body.documents as { status: string; error?: string }[]) expect(doc.status, doc.error).toBe('ready');
    return res.body.documents as { id: string; filename: string }[];
  };

  it('a started daemon loads nothing of OCR on any thread, and starts no OCR or PDF thread', { timeout: 60_000 }, async () => {
    await recorded.loadedBy(d);
    const threads = recorded.threads();
    // The recorder saw the main thread's loads, and a worker's (the model's thread)…
    expect(threads[0]!.packages).toContain('koa');
    expect(threads.find((t) => t.script.endsWith('/dist/models/onnx/session.js'))?.packages).toContain('onnxruntime-node');
    // …and no thread of OCR or of PDF thumbnails, nor any of these on any thread.
    expect(threads.map((t) => t.script).filter((script) => /\/dist\/(ingest\/ocr|pdf)\//.test(script))).toEqual([]);
    expect(loadedOn(threads, OCR)).toEqual([]);
    // Nor, on its own thread, what only a page showing a document, an e-mail or a web source's pass needs.
    expect(loadedOn(threads.slice(0, 1), VIEWING)).toEqual([]);
  });

  it('a parse worker given only text and Markdown loads no pdf.js, sharp or office library; nothing loads sharp', { timeout: 120_000 }, async () => {
    const [text] = await upload('extract/truth.txt', 'formats/notes.md');
    const found = await api(d, '/api/v1/search', { token, body: { query: 'harbour pilot boards every tanker' } });
    expect(found.status).toBe(200);
    expect((found.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toContain('notes.md');
    // A text's thumbnail is refused without drawing anything.
    expect((await api(d, `/api/v1/documents/${text!.id}/thumbnail`, { token })).status).toBe(404);
    await recorded.loadedBy(d);
    const workers = recorded.threads().filter(parses);
    // The parse workers did read them: Markdown's own parser loaded there…
    expect(loadedOn(workers, ['mdast-util-from-markdown'])).not.toEqual([]);
    // …and none of pdf.js, sharp, tesseract.js or the office libraries; nor, on any other thread, those of OCR (the
    // main thread has yauzl and saxes of its own: it tells an upload's kind of zip, and reads a web source's sitemap).
    expect(loadedOn(workers, [...OCR, ...OFFICE])).toEqual([]);
    expect(loadedOn(recorded.threads(), OCR)).toEqual([]);
  });

  it('a PDF loads pdf.js in a parse worker, and no office library nor OCR', { timeout: 120_000 }, async () => {
    await upload('extract/pandoc.pdf');
    await recorded.loadedBy(d);
    const threads = recorded.threads();
    expect(loadedOn(threads.filter(parses), ['pdfjs-dist'])).not.toEqual([]);
    expect(loadedOn(threads.filter((t) => !parses(t)), ['pdfjs-dist'])).toEqual([]);
    expect(loadedOn(threads.filter(parses), OFFICE)).toEqual([]);
    // A PDF with a text layer needs no OCR: no tesseract.js and no OCR thread.
    expect(loadedOn(threads, ['tesseract.js'])).toEqual([]);
    expect(threads.map((t) => t.script).filter((script) => script.includes('/dist/ingest/ocr/'))).toEqual([]);
  });
});
