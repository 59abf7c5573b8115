/**
 * The OCR engine from the built dist/ (its worker script lies next to engine.js there): accuracy on a clean
 * 300-dpi scan, no network use in any thread, page time limits, and the language option.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { characterAccuracy, truthPages } from '../../helpers/char-accuracy.js';
import { REPO } from '../../helpers/daemon.js';

type EngineModule = typeof import('../../../src/ingest/ocr/engine.js');
type LanguagesModule = typeof import('../../../src/ingest/ocr/languages.js');
type StageModule = typeof import('../../../src/ingest/ocr-stage.js');

const dist = join(REPO, 'dist');
const built = existsSync(join(dist, 'ingest/ocr/engine.js'));
const fixtures = join(REPO, 'test/fixtures/ocr');
const scan = join(fixtures, 'scan-300dpi.pdf');
const truth = truthPages(readFileSync(join(fixtures, 'scan-300dpi.truth.txt'), 'utf8'));

const load = async () => ({
  ...((await import(join(dist, 'ingest/ocr/engine.js'))) as EngineModule),
  ...((await import(join(dist, 'ingest/ocr/languages.js'))) as LanguagesModule),
  ...((await import(join(dist, 'ingest/ocr-stage.js'))) as StageModule),
});

describe.runIf(built)('OCR engine', () => {
  const temp = mkdtempSync(join(tmpdir(), 'docsearch-ocr-test-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('reads a clean 300-dpi image-only PDF with character accuracy ≥ 97 %, pages in order', async () => {
    const { OcrEngine, resolveOcrLanguages, paragraphs } = await load();
    const engine = new OcrEngine({ languages: resolveOcrLanguages('eng') });
    try {
      const progress: number[] = [];
      const run = await engine.recognize(readFileSync(scan), [2, 1], { onPage: (done) => void progress.push(done) });
      expect(run.failed).toEqual([]);
      expect(run.pages.map((p) => p.page)).toEqual([1, 2]);
      expect(progress).toEqual([1, 2]);
      for (const page of run.pages) {
        const { accuracy } = characterAccuracy(paragraphs(page.text).join(' '), truth[page.page - 1]!);
        expect(accuracy, `page ${page.page}`).toBeGreaterThanOrEqual(0.97);
        expect(page.confidence).toBeGreaterThan(80);
      }
    } finally {
      await engine.close();
    }
    expect(engine.threads).toBe(0);
  }, 300_000);

  it('reads a two-column page column by column', async () => {
    const { OcrEngine, resolveOcrLanguages, paragraphs } = await load();
    const engine = new OcrEngine({ languages: resolveOcrLanguages('eng') });
    try {
      const run = await engine.recognize(readFileSync(join(fixtures, 'extract-latex-2col.image.pdf')), [1]);
      const text = paragraphs(run.pages[0]!.text).join('\n');
      // Both sentences cross line ends (and one a hyphenated word) within the left column.
      expect(text).toContain('The licenses for most software and other practical works are designed to take away your freedom to share and change the works.');
      expect(text).toContain('When we speak of free software, we are referring to freedom, not price.');
    } finally {
      await engine.close();
    }
  }, 300_000);

  it('never touches the network: every thread is trapped, none tries, and the text is still read', () => {
    const trap = join(temp, 'net.log');
    const child = (mode: string) => {
      // Without a network namespace where possible (root), and with every way out trapped in every thread.
      const node = [process.execPath, '--require', join(fixtures, 'no-network.cjs'), join(fixtures, 'ocr-child.mjs'), mode, dist, scan, '1'];
      const unshare = process.getuid?.() === 0 && spawnSync('unshare', ['-n', 'true']).status === 0;
      const [cmd, ...args] = unshare ? ['unshare', '-n', ...node] : node;
      const res = spawnSync(cmd!, args, { env: { ...process.env, NET_TRAP_LOG: trap }, encoding: 'utf8', timeout: 280_000 });
      expect(res.status, res.stderr).toBe(0);
      return JSON.parse(res.stdout.trim().split('\n').pop()!);
    };
    const entries = () => readFileSync(trap, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { thread: number; loaded?: true; attempt?: string });

    // The trap works in a worker thread: a fetch there is recorded and refused.
    expect(child('control')).toEqual({ code: 3 });
    expect(entries().some((e) => e.thread > 0 && e.attempt?.startsWith('fetch'))).toBe(true);

    rmSync(trap);
    const run = child('ocr');
    expect(run.failed).toEqual([]);
    expect(characterAccuracy(run.pages[0].text, truth[0]!).accuracy).toBeGreaterThanOrEqual(0.97);
    const log = entries();
    // Main thread, the OCR thread, and tesseract.js's own thread below it.
    expect(new Set(log.filter((e) => e.loaded).map((e) => e.thread)).size).toBeGreaterThanOrEqual(3);
    expect(log.filter((e) => e.attempt)).toEqual([]);
  }, 300_000);

  it('gives up on a hung page after its time limit and goes on with the next page in a fresh thread', async () => {
    const { OcrEngine } = await load();
    const engine = new OcrEngine({
      languages: { code: 'eng', langPath: temp, dispose: () => {} },
      concurrency: 1,
      pageTimeoutMs: 300,
      workerUrl: new URL(`file://${join(fixtures, 'hang-page-worker.mjs')}`),
    });
    try {
      const started = performance.now();
      const run = await engine.recognize(Buffer.from('%PDF-1.4'), [1, 2, 4]);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(run.failed).toEqual([{ page: 1, reason: 'took longer than 0.3 s', timedOut: true }]);
      expect(run.pages.map((p) => [p.page, p.text])).toEqual([
        [2, 'text of page 2'],
        [4, 'text of page 4'],
      ]);

      // A file whose pages keep hanging: after 3 in a row the rest are not tried.
      const hung = await engine.recognize(Buffer.from('%PDF-1.4'), [9, 7, 5, 3, 2, 1]);
      expect(hung.pages.map((p) => p.page)).toEqual([2]);
      expect(hung.failed.map((f) => [f.page, f.timedOut ?? false])).toEqual([
        [1, true],
        [3, true],
        [5, true],
        [7, true],
        [9, false],
      ]);
      expect(hung.failed.at(-1)!.reason).toBe('skipped after 3 pages in a row took too long');
    } finally {
      await engine.close();
    }
  });

  it("stops a document whose pages use up its budget (base + per page), naming the pages not read", async () => {
    const { OcrEngine } = await load();
    const engine = new OcrEngine({
      languages: { code: 'eng', langPath: temp, dispose: () => {} },
      concurrency: 1,
      pageTimeoutMs: 10_000,
      baseBudgetMs: 200,
      pageBudgetMs: 100,
      workerUrl: new URL(`file://${join(fixtures, 'hang-page-worker.mjs')}`),
    });
    try {
      expect(engine.budgetMs(40)).toBe(200 + 40 * 100);
      const started = performance.now();
      const run = await engine.recognize(Buffer.from('%PDF-1.4'), [1, 1, 1]);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(run.failed.map((f) => f.page)).toEqual([1]);
    } finally {
      await engine.close();
    }
  });

  it('stops at close: a document being read fails as stopped (to be retried), not as read', async () => {
    const { OcrEngine } = await load();
    const engine = new OcrEngine({
      languages: { code: 'eng', langPath: temp, dispose: () => {} },
      concurrency: 1,
      workerUrl: new URL(`file://${join(fixtures, 'hang-page-worker.mjs')}`),
    });
    const reading = engine.recognize(Buffer.from('%PDF-1.4'), [1, 2]);
    const waiting = engine.recognize(Buffer.from('%PDF-1.4'), [3]);
    const outcomes = Promise.allSettled([reading, waiting]);
    await new Promise((r) => setTimeout(r, 200));
    await engine.close();
    expect((await outcomes).map((o) => o.status === 'rejected' && (o.reason as Error).message)).toEqual([
      'OCR was stopped (the service is shutting down)',
      'OCR was stopped (the service is shutting down)',
    ]);
    expect(engine.threads).toBe(0);
    await expect(engine.recognize(Buffer.from('%PDF-1.4'), [2])).rejects.toThrow('the OCR engine is closed');
  });

  it('resolves languages from installed packages or a folder, and says what to install when one is missing', async () => {
    const { resolveOcrLanguages } = await load();
    const eng = resolveOcrLanguages('eng');
    expect(eng.code).toBe('eng');
    expect(readdirSync(eng.langPath)).toContain('eng.traineddata.gz');

    expect(() => resolveOcrLanguages('eng+xyz')).toThrow(/no trained data for "xyz": install the npm package @tesseract.js-data\/xyz/);
    expect(() => resolveOcrLanguages('en g')).toThrow(/not a Tesseract language code/);
    expect(() => resolveOcrLanguages(join(temp, 'missing'))).toThrow(/is not a folder/);

    const folder = join(temp, 'tessdata');
    mkdirSync(folder);
    expect(() => resolveOcrLanguages(folder)).toThrow(/holds no <lang>.traineddata files/);
    // An uncompressed file and a compressed one, as an operator's tessdata folder may hold.
    symlinkSync(join(eng.langPath, 'eng.traineddata.gz'), join(folder, 'eng.traineddata.gz'));
    symlinkSync(join(eng.langPath, 'eng.traineddata.gz'), join(folder, 'enm.traineddata'));
    symlinkSync(join(eng.langPath, 'eng.traineddata.gz'), join(folder, 'osd.traineddata'));
    const both = resolveOcrLanguages(folder);
    expect(both.code).toBe('eng+enm');
    expect(readdirSync(both.langPath).sort()).toEqual(['eng.traineddata.gz', 'enm.traineddata.gz'].sort());
    both.dispose();
    expect(existsSync(both.langPath)).toBe(false);
  });
});

describe.skipIf(built)('OCR engine', () => {
  it.skip('needs the build: run `npm run build` so dist/ingest/ocr/engine.js exists', () => {});
});
