/**
 * Scanned PDFs through the real daemon: an image-only PDF is OCR'd page by page (progress moves while it
 * runs), ends ready with chunks marked `ocr`, a warning naming the OCR'd pages, and search finds its
 * sentences on the right page. With `--ocr off` it ends ready with the no-text-layer warning instead, and an
 * OCR language that is not installed stops the daemon at startup with a clear message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { storedChunks, uploadFiles, waitFor } from './helpers.js';

const scan = readFileSync(join(REPO, 'test/fixtures/ocr/scan-300dpi.pdf'));

describe('scanned PDF with OCR (default auto)', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('OCRs each page with visible progress, marks the chunks, names the pages, and search finds them on their page', async () => {
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'scan.pdf', bytes: scan }]);
    expect(res.status).toBe(202);
    const id = res.body.documents[0].id as string;

    const seen = new Set<number>();
    const doc = await waitFor(async () => {
      const r = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey });
      seen.add(r.body.progress);
      return ['ready', 'failed'].includes(r.body.status) && r.body;
    }, 280_000, 'the scan to be processed');

    expect(doc).toMatchObject({ status: 'ready', pages: 2, error: null });
    expect(doc.chunk_count).toBeGreaterThan(0);
    expect(doc.warnings).toEqual([expect.stringMatching(/^OCR: pages 1–2 \(eng\), mean confidence \d{2,3} %$/)]);
    // After page 1 of 2, between the parse (0.1) and chunk (0.2) marks.
    expect([...seen].some((p) => p > 0.1 && p < 0.2), `progress seen: ${[...seen].join(', ')}`).toBe(true);

    const stored = await storedChunks(d.dataDir, id);
    expect(stored.rows.length).toBe(doc.chunk_count);
    expect(stored.rows.every((r) => (r as { ocr?: boolean }).ocr === true)).toBe(true);

    for (const [query, sentence, page] of [
      ['how many ships did the lighthouse keeper count', 'The lighthouse keeper counted forty seven ships passing the northern cape', 1],
      ['clockmaker mended pocket watches at the inn', 'A travelling clockmaker stayed at the inn for a fortnight', 2],
    ] as const) {
      const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query, limit: 3 } });
      expect(search.status).toBe(200);
      const top = search.body.results[0];
      expect(top.document.id).toBe(id);
      expect(top.text).toContain(sentence);
      expect(top.ocr).toBe(true);
      // A chunk may run across a page break; the sentence's page is inside its range.
      expect(top.page_start).toBeLessThanOrEqual(page);
      expect(top.page_end).toBeGreaterThanOrEqual(page);
    }
  }, 300_000);
});

describe('scanned PDF with --ocr off', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  }, { args: ['--ocr', 'off'] });

  it('ends ready without chunks and keeps the no-text-layer warning', async () => {
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'scan.pdf', bytes: scan }], { query: '?wait=true' });
    expect(res.status).toBe(200);
    expect(res.body.documents[0]).toMatchObject({ status: 'ready', chunk_count: 0, pages: 2, warnings: ['no text layer (scanned?)'] });
  }, 60_000);
});

describe('--ocr-languages', () => {
  it('refuses to start when a language has no installed data, saying what to install', () => {
    const dataDir = join(REPO, 'node_modules/.cache/never-created');
    const res = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--ocr-languages', 'eng+qqq'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toMatch(/could not start: --ocr-languages: no trained data for "qqq": install the npm package @tesseract\.js-data\/qqq/);
    // A bad setting is refused before the data directory is touched.
    expect(existsSync(dataDir)).toBe(false);
  });
});
