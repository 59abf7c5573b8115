/**
 * Scanned PDFs through the real daemon: an image-only PDF is OCR'd page by page (on the 20-page scan, progress
 * moves while it runs), ends ready with chunks marked `ocr`, a warning naming the OCR'd pages, and search finds its
 * sentences on the right page — with native Tesseract where it is installed (the default, `auto`) and with the
 * tesseract.js fallback (`--ocr tesseract.js`, and `auto` where native Tesseract is missing). A dense 20-page A4
 * scan ends with every page's marker sentence found on its page. With `--ocr off` a scan ends ready with the
 * no-text-layer warning instead; an OCR language that is not installed, or `--ocr native` without native
 * Tesseract, stops the daemon at startup with a clear message.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { truthPages } from '../../helpers/char-accuracy.js';
import { addUser, api, BIN, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { unmet } from '../../helpers/requirement.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { storedChunks, uploadFiles, waitFor } from './helpers.js';

const scan = readFileSync(join(REPO, 'test/fixtures/ocr/scan-300dpi.pdf'));
const dense = readFileSync(join(REPO, 'test/fixtures/ocr/scan-a4-dense-20p.pdf'));
const denseTruth = truthPages(readFileSync(join(REPO, 'test/fixtures/ocr/scan-a4-dense-20p.truth.txt'), 'utf8'));
const installed = unmet(spawnSync('tesseract', ['--version']).status === 0 ? null : 'native Tesseract is not installed (apt-get install -y tesseract-ocr tesseract-ocr-eng)') === null;
// A PATH with Node on it (the launcher execs `node`) and no tesseract: Debian keeps both in /usr/bin.
const nodeOnly = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
symlinkSync(process.execPath, join(nodeOnly, 'node'));
afterAll(() => rmSync(nodeOnly, { recursive: true, force: true }));

/** Uploads `bytes`, polls until the document settles, and returns it with every progress value seen. */
async function ingest(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<{ doc: any; seen: Set<number> }> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }]);
  expect(res.status).toBe(202);
  const id = res.body.documents[0].id as string;
  const seen = new Set<number>();
  const doc = await waitFor(async () => {
    const r = await api(d, `/api/v1/documents/${id}`, { token: user.apiKey });
    seen.add(r.body.progress);
    return ['ready', 'failed'].includes(r.body.status) && r.body;
  }, 580_000, `${name} to be processed`);
  return { doc, seen };
}

/**
 * Each way OCR is chosen: native Tesseract where installed (`auto`), tesseract.js asked for, and `auto` on a
 * machine without native Tesseract (none on the PATH: what `npm install` alone gives), which must read the same
 * scan with tesseract.js and say why.
 */
const SETUPS = [
  { label: '--ocr auto', args: ['--ocr', 'auto'], native: installed },
  { label: '--ocr tesseract.js', args: ['--ocr', 'tesseract.js'], native: false },
  { label: 'the default (auto) and no native Tesseract on the PATH', args: [], env: { PATH: nodeOnly }, native: false, missing: true },
] as const;

for (const setup of SETUPS) {
  describe(`scanned PDF with ${setup.label}`, () => {
    let d: Daemon;
    let alice: TestUser;
    daemonForSuite(async (started) => {
      d = started;
      alice = await addUser(d);
    }, { args: [...setup.args], ...('env' in setup ? { env: setup.env } : {}) });

    it('OCRs each page with visible progress, marks the chunks, names the pages, and search finds them on their page', async () => {
      // Until the first scanned page nothing of OCR is loaded: no page-rendering library in the daemon.
      const canvasMapped = () => readFileSync(`/proc/${d.proc.pid}/maps`, 'utf8').includes('@napi-rs/canvas');
      expect(canvasMapped()).toBe(false);
      const { doc, seen } = await ingest(d, alice, 'scan.pdf', scan);
      expect(canvasMapped()).toBe(true);
      expect(doc).toMatchObject({ status: 'ready', pages: 2, error: null });
      expect(doc.chunk_count).toBeGreaterThan(0);
      expect(doc.warnings).toEqual([expect.stringMatching(/^OCR: pages 1–2 \(eng\), mean confidence \d{2,3} %$/)]);
      // Progress only rises, to 1. That it moves page by page is checked on the 20-page scan below: progress is
      // written at most once a second, and a fast machine reads these two small pages in less (CI saw 0 then 1).
      const values = [...seen];
      expect(values, `progress seen: ${values.join(', ')}`).toEqual([...values].sort((a, b) => a - b));
      expect(values.at(-1)).toBe(1);
      // The engine loaded on this first scanned page, and says which Tesseract it is.
      await d.logLine('"event":"ocr.loaded"');
      const loaded = d.stdout().split('\n').filter((l) => l.includes('"event":"ocr.loaded"')).map((l) => JSON.parse(l) as { engine: string; native_unusable?: string });
      expect(loaded.map((e) => e.engine)).toEqual([setup.native ? expect.stringMatching(/^tesseract \d+\.\d+/) : 'tesseract.js']);
      // `auto` without Tesseract on the PATH says why it fell back; the others say nothing.
      const fellBack = 'missing' in setup || ((setup.args as readonly string[]).includes('auto') && !installed);
      expect(loaded[0]!.native_unusable ?? 'nothing').toMatch(fellBack ? /tesseract is not installed/ : /^nothing$/);

      // Metrics (docs/operations.md): each page read counted by its outcome, and timed.
      const metrics = await (await fetch(`${d.url}/metrics`)).text();
      const sample = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1]);
      const ocrLines = metrics.split('\n').filter((l) => l.startsWith('docsearch_ocr_pages_total')).join('\n');
      expect(sample('docsearch_ocr_pages_total{outcome="read"}'), ocrLines).toBe(2);
      expect(sample('docsearch_ocr_pages_total{outcome="blank"}')).toBe(0);
      expect(sample('docsearch_ocr_pages_total{outcome="failed"}')).toBe(0);
      expect(sample('docsearch_ocr_page_duration_seconds_count')).toBe(2);
      expect(sample('docsearch_ocr_page_duration_seconds_sum')).toBeGreaterThan(0);

      const stored = await storedChunks(d.dataDir, doc.id);
      expect(stored.rows.length).toBe(doc.chunk_count);
      expect(stored.rows.every((r) => r.ocr === true)).toBe(true);

      for (const [query, sentence, page] of [
        ['how many ships did the lighthouse keeper count', 'The lighthouse keeper counted forty seven ships passing the northern cape', 1],
        ['clockmaker mended pocket watches at the inn', 'A travelling clockmaker stayed at the inn for a fortnight', 2],
      ] as const) {
        const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query, limit: 3 } });
        expect(search.status).toBe(200);
        const top = search.body.results[0];
        expect(top.document.id).toBe(doc.id);
        expect(top.text).toContain(sentence);
        expect(top.ocr).toBe(true);
        // A chunk may run across a page break; the sentence's page is inside its range.
        expect(top.page_start).toBeLessThanOrEqual(page);
        expect(top.page_end).toBeGreaterThanOrEqual(page);
      }
    }, 300_000);
  });
}

describe('a dense 20-page A4 scan (default --ocr auto)', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('is read page by page, and every page\'s marker sentence is found on its page', async () => {
    const { doc, seen } = await ingest(d, alice, 'dense.pdf', dense);
    expect(doc).toMatchObject({ status: 'ready', pages: 20, error: null });
    expect(doc.warnings).toEqual([expect.stringMatching(/^OCR: pages 1–20 \(eng\), mean confidence \d{2,3} %$/)]);
    // Progress moved as pages finished (polled every 250 ms: most of the 19 steps between 0.1 and 0.2 are seen).
    expect([...seen].filter((p) => p > 0.1 && p < 0.2).length, `progress seen: ${[...seen].join(', ')}`).toBeGreaterThanOrEqual(3);

    const normal = (s: string) => s.replace(/\s+/g, ' ').trim();
    const placed: string[] = [];
    for (const [i, truth] of denseTruth.entries()) {
      const marker = /^Marker \w+: .*$/m.exec(truth)![0];
      const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: marker, limit: 5 } });
      expect(search.status).toBe(200);
      const hit = (search.body.results as { text: string; page_start: number; page_end: number }[]).find((r) => normal(r.text).includes(marker));
      placed.push(hit ? `${hit.page_start}–${hit.page_end}` : 'not found');
    }
    expect(placed).toEqual(denseTruth.map((_, i) => `${i + 1}–${i + 1}`));
  }, 600_000);
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

describe('OCR settings at startup', () => {
  const serve = (args: string[], env: Record<string, string> = {}) => {
    const dataDir = join(REPO, 'node_modules/.cache/never-created');
    const res = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
    // A bad setting is refused before the data directory is touched.
    expect(existsSync(dataDir)).toBe(false);
    return res;
  };

  it('refuses to start when a language has no installed data, saying what to install', () => {
    const res = serve(['--ocr-languages', 'eng+qqq']);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/error: option "ocr-languages" \(from --ocr-languages\): no trained data for "qqq": install the npm package @tesseract\.js-data\/qqq/);
  });

  it('refuses --ocr native when native Tesseract cannot be run', () => {
    const res = serve(['--ocr', 'native'], { PATH: '/nonexistent' });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/error: option "ocr" \(from --ocr\): tesseract is not installed/);
  });
});
