/**
 * The OCR engine from the built dist/ (its worker script lies next to engine.js there): accuracy with each
 * Tesseract (native where installed, tesseract.js always), blank pages, no network use in any thread, page time
 * limits, and its lifecycle (nothing loaded until the first page, all of it released when idle, loaded again).
 * Native Tesseract that is missing, broken, failing or hung is played by shell scripts (only they can misbehave
 * on demand); the engine must fall back to tesseract.js or fail the page, saying why.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { characterAccuracy, truthPages } from '../../helpers/char-accuracy.js';
import { REPO } from '../../helpers/daemon.js';
import { waitFor } from '../../helpers/eventually.js';
import { unmet } from '../../helpers/requirement.js';

type EngineModule = typeof import('../../../src/ingest/ocr/engine.js');
type LanguagesModule = typeof import('../../../src/ingest/ocr/languages.js');
type StageModule = typeof import('../../../src/ingest/ocr-stage.js');
type Engine = InstanceType<EngineModule['OcrEngine']>;
type EngineOptions = ConstructorParameters<EngineModule['OcrEngine']>[0];
type State = Parameters<NonNullable<EngineOptions['onState']>>[0];

const dist = join(REPO, 'dist');
const built = unmet(existsSync(join(dist, 'ingest/ocr/engine.js')) ? null : 'dist/ is not built (npm run build)') === null;
const installed = unmet(spawnSync('tesseract', ['--version']).status === 0 ? null : 'native Tesseract is not installed (apt-get install -y tesseract-ocr tesseract-ocr-eng)') === null;
const fixtures = join(REPO, 'test/fixtures/ocr');
const scan = join(fixtures, 'scan-300dpi.pdf');
const truth = truthPages(readFileSync(join(fixtures, 'scan-300dpi.truth.txt'), 'utf8'));
const dense = join(fixtures, 'scan-a4-dense-20p.pdf');
const denseTruth = truthPages(readFileSync(join(fixtures, 'scan-a4-dense-20p.truth.txt'), 'utf8'));
const hangWorker = new URL(`file://${join(fixtures, 'hang-page-worker.mjs')}`);
const slowDrawingWorker = new URL(`file://${join(fixtures, 'slow-drawing-worker.mjs')}`);

const load = async () => ({
  ...((await import(join(dist, 'ingest/ocr/engine.js'))) as EngineModule),
  ...((await import(join(dist, 'ingest/ocr/languages.js'))) as LanguagesModule),
  ...((await import(join(dist, 'ingest/ocr-stage.js'))) as StageModule),
});

/** An engine for the test, closed after it. */
async function withEngine<T>(options: Omit<EngineOptions, 'languages'> & { languages?: EngineOptions['languages'] }, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const { OcrEngine, resolveOcrLanguages } = await load();
  const engine = new OcrEngine({ languages: resolveOcrLanguages('eng'), ...options });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

const ENGINES = installed ? (['native', 'tesseract.js'] as const) : (['tesseract.js'] as const);

describe.runIf(built)('OCR engine', () => {
  const temp = mkdtempSync(join(tmpdir(), 'docsearch-ocr-test-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  let scripts = 0;
  /**
   * A program standing in for native Tesseract. It answers the probe as Tesseract 5 does (no system data, so the
   * npm data is unpacked for it) and the probe's first recognition with an empty table; every later start (the
   * engine's session, which streams image paths on stdin) runs `page` (POSIX shell). Starts are counted in
   * `<path>.pages`.
   */
  function fakeTesseract(page: string, probe = 'cat > /dev/null; echo "level"'): string {
    const path = join(temp, `tesseract-${++scripts}`);
    writeFileSync(
      path,
      `#!/bin/sh
case "$1" in
  --version) echo "tesseract 5.3.0"; exit 0 ;;
  --list-langs) echo 'List of available languages in "/nonexistent/" (0):'; exit 0 ;;
esac
if [ ! -e "${path}.probed" ]; then touch "${path}.probed"; ${probe}; exit 0; fi
echo x >> "${path}.pages"
${page}
`,
    );
    chmodSync(path, 0o755);
    return path;
  }
  const pagesAsked = (path: string) => (existsSync(`${path}.pages`) ? readFileSync(`${path}.pages`, 'utf8').split('\n').filter(Boolean).length : 0);

  for (const choice of ENGINES) {
    describe(`with ${choice}`, () => {
      it('reads a clean 300-dpi image-only PDF with character accuracy ≥ 97 %, pages in order, progress page by page', async () => {
        const { paragraphs } = await load();
        await withEngine({ engine: choice }, async (engine) => {
          const progress: number[] = [];
          const run = await engine.recognize(readFileSync(scan), [2, 1], { onPage: (done) => void progress.push(done) });
          expect(run.failed).toEqual([]);
          expect(run.engine).toMatch(choice === 'native' ? /^tesseract \d+\.\d+/ : /^tesseract\.js$/);
          expect(run.pages.map((p) => p.page)).toEqual([1, 2]);
          expect(progress).toEqual([1, 2]);
          for (const page of run.pages) {
            const { accuracy } = characterAccuracy(paragraphs(page.text).join(' '), truth[page.page - 1]!);
            expect(accuracy, `page ${page.page}`).toBeGreaterThanOrEqual(0.97);
            expect(page.confidence).toBeGreaterThan(80);
          }
        });
      }, 300_000);

      it('reads a two-column page column by column', async () => {
        const { paragraphs } = await load();
        await withEngine({ engine: choice }, async (engine) => {
          const run = await engine.recognize(readFileSync(join(fixtures, 'extract-latex-2col.image.pdf')), [1]);
          const text = paragraphs(run.pages[0]!.text).join('\n');
          // Both sentences cross line ends (and one a hyphenated word) within the left column.
          expect(text).toContain('The licenses for most software and other practical works are designed to take away your freedom to share and change the works.');
          expect(text).toContain('When we speak of free software, we are referring to freedom, not price.');
        });
      }, 300_000);

      it('reads dense 1-bit A4 scan pages, two at once, with character accuracy ≥ 97 %, and skips a blank page', async () => {
        const { paragraphs } = await load();
        await withEngine({ engine: choice, concurrency: 2 }, async (engine) => {
          const run = await engine.recognize(readFileSync(dense), [3, 4]);
          expect(run.failed).toEqual([]);
          expect(engine.threads).toBe(2);
          for (const page of run.pages) {
            const { accuracy } = characterAccuracy(paragraphs(page.text).join(' '), denseTruth[page.page - 1]!);
            expect(accuracy, `page ${page.page}`).toBeGreaterThanOrEqual(0.97);
          }

          const blank = await engine.recognize(readFileSync(join(fixtures, 'blank-page.pdf')), [1, 2, 3]);
          expect(blank.pages.map((p) => [p.page, p.blank ?? false, p.recognizeMs === 0])).toEqual([
            [1, false, false],
            [2, true, true],
            [3, false, false],
          ]);
          expect(blank.pages[1]!.text).toBe('');
          expect(paragraphs(blank.pages[0]!.text)).toEqual(['The first page holds a short paragraph about the weather in the valley.']);
          expect(paragraphs(blank.pages[2]!.text)).toEqual(['The third page holds a short paragraph about the harvest in the hills.']);
        });
      }, 300_000);
    });
  }

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

  it('loads nothing until the first page, releases threads and data folders when idle, and loads again', async () => {
    const { resolveOcrLanguages } = await load();
    // Staged data folders go to the OS temp folder: this test's own, so it can see them come and go.
    const tmp = join(temp, 'tmp');
    mkdirSync(tmp);
    const before = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      // A language folder of .gz files: each engine gets a folder made for it (tesseract.js: links, native: unpacked).
      const folder = join(temp, 'gz-languages');
      mkdirSync(folder);
      writeFileSync(join(folder, 'eng.traineddata.gz'), readFileSync(resolveOcrLanguages('eng').files.get('eng')!));
      const states: State[] = [];
      await withEngine({ languages: resolveOcrLanguages(folder), idleMs: 300, onState: (s) => void states.push(s) }, async (engine) => {
        expect(engine.isLoaded).toBe(false);
        expect(engine.threads).toBe(0);
        expect(engine.engine).toBeUndefined();
        expect(readdirSync(tmp)).toEqual([]);

        for (const round of [1, 2]) {
          const run = await engine.recognize(readFileSync(scan), [1]);
          expect(run.failed, `round ${round}`).toEqual([]);
          expect(run.pages[0]!.text).toContain('lighthouse keeper');
          expect(engine.isLoaded).toBe(true);
          expect(engine.threads).toBe(1);
          // Native Tesseract gets the data unpacked and a folder for its session's page images; tesseract.js reads
          // the language folder as it is.
          const made = readdirSync(tmp).map((f) => f.replace(/-[^-]+$/, '-')).sort();
          expect(made).toEqual(installed ? ['docsearch-ocr-pages-', 'docsearch-tessdata-'] : []);
          await waitFor(() => !engine.isLoaded, 60_000, 'the idle engine to be released');
          expect(engine.threads).toBe(0);
          expect(readdirSync(tmp)).toEqual([]);
        }
        const engineName = installed ? expect.stringMatching(/^tesseract \d/) : 'tesseract.js';
        expect(states).toEqual([
          { event: 'loaded', engine: engineName, ...(installed ? {} : { nativeUnusable: expect.any(String) }) },
          { event: 'released' },
          { event: 'loaded', engine: engineName, ...(installed ? {} : { nativeUnusable: expect.any(String) }) },
          { event: 'released' },
        ]);
      });
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  }, 300_000);

  it('falls back to tesseract.js when native Tesseract is missing or broken, saying why', async () => {
    const cases = [
      [join(temp, 'no-such-tesseract'), /no-such-tesseract is not installed/],
      [fakeTesseract('exit 0', 'kill -SEGV $$'), /tesseract failed \(killed by SIGSEGV\)/],
      [fakeTesseract('exit 0', 'cat > /dev/null; echo "Error opening data file /x/eng.traineddata" >&2; exit 1'), /tesseract failed \(exit status 1\): Error opening data file/],
    ] as const;
    for (const [tesseractPath, why] of cases) {
      const states: State[] = [];
      await withEngine({ tesseractPath, onState: (s) => void states.push(s) }, async (engine) => {
        const run = await engine.recognize(readFileSync(scan), [1]);
        expect(run.engine).toBe('tesseract.js');
        expect(characterAccuracy(run.pages[0]!.text, truth[0]!).accuracy).toBeGreaterThanOrEqual(0.97);
        expect(states).toEqual([{ event: 'loaded', engine: 'tesseract.js', nativeUnusable: expect.stringMatching(why) }]);
      });
    }
  }, 300_000);

  it('with --ocr native and no usable native Tesseract, fails the pages saying why, and starts no thread', async () => {
    await withEngine({ engine: 'native', tesseractPath: join(temp, 'no-such-tesseract') }, async (engine) => {
      const run = await engine.recognize(readFileSync(scan), [1, 2]);
      expect(run.pages).toEqual([]);
      expect(run.failed.map((f) => f.reason)).toEqual([
        expect.stringMatching(/^native Tesseract is not usable: .*no-such-tesseract is not installed/),
        expect.stringMatching(/^native Tesseract is not usable/),
      ]);
      expect(engine.threads).toBe(0);
    });
  }, 60_000);

  it('reads a page native Tesseract fails on with tesseract.js, and stays with tesseract.js after 3 such pages in a row', async () => {
    const failing = fakeTesseract('echo "Tesseract Open Source OCR Engine v5.3.0" >&2; echo "Error: boom" >&2; exit 1');
    const states: State[] = [];
    await withEngine({ tesseractPath: failing, concurrency: 1, onState: (s) => void states.push(s) }, async (engine) => {
      const first = await engine.recognize(readFileSync(scan), [1, 2]);
      expect(first.failed).toEqual([]);
      expect(first.engine).toBe('tesseract.js');
      expect(first.pages.map((p) => characterAccuracy(p.text, truth[p.page - 1]!).accuracy >= 0.97)).toEqual([true, true]);
      expect(pagesAsked(failing)).toBe(2);
      expect(engine.engine).toBe('tesseract 5.3.0');

      await engine.recognize(readFileSync(scan), [1]);
      expect(pagesAsked(failing)).toBe(3);
      expect(engine.engine).toBe('tesseract.js');
      expect(states.at(-1)).toEqual({ event: 'fallback', engine: 'tesseract.js', reason: '3 pages in a row failed, the last: tesseract failed (exit status 1): Error: boom' });

      const after = await engine.recognize(readFileSync(scan), [2]);
      expect(after.failed).toEqual([]);
      expect(pagesAsked(failing)).toBe(3);
    });
  }, 300_000);

  it('kills a hung native Tesseract at the page time limit and reports the page as timed out', async () => {
    const pids = join(temp, 'hung.pids');
    const hung = fakeTesseract(`echo $$ >> ${pids}; exec sleep 1000`);
    // 10 s: the limit counts from the page's start, and on a loaded machine the script may not run for seconds.
    await withEngine({ tesseractPath: hung, pageTimeoutMs: 10_000, concurrency: 1 }, async (engine) => {
      const run = await engine.recognize(readFileSync(scan), [1]);
      expect(run.pages).toEqual([]);
      expect(run.failed).toEqual([{ page: 1, reason: expect.stringMatching(/^took longer than \d\.\d s$/), timedOut: true }]);
      const pid = Number(readFileSync(pids, 'utf8').trim());
      await waitFor(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 60_000, 'the hung process to be gone');
    });
  }, 120_000);

  it('gives up on a hung page after its time limit and goes on with the next page in a fresh thread', async () => {
    // A page's time includes starting its thread, which a loaded machine (load 30 on 2 cores) stretches past 2 s:
    // 5 s a page, and the run well within one default page limit (120 s).
    await withEngine({ engine: 'tesseract.js', concurrency: 1, pageTimeoutMs: 5_000, workerUrl: hangWorker }, async (engine) => {
      const run = await engine.recognize(Buffer.from('%PDF-1.4'), [1, 2, 4]);
      expect(run.failed).toEqual([{ page: 1, reason: 'took longer than 5.0 s', timedOut: true }]);
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
    });
  }, 120_000);

  it('starts each page only when no search is in flight (the foreground gate lets it)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let asked = 0;
    const background = { yieldToForeground: () => (asked++, gate) };
    await withEngine({ engine: 'tesseract.js', concurrency: 1, workerUrl: hangWorker, background }, async (engine) => {
      const run = engine.recognize(Buffer.from('%PDF-1.4'), [2, 4]);
      await new Promise((r) => setTimeout(r, 300));
      expect(asked).toBe(1);
      expect(engine.threads).toBe(0);
      open();
      expect((await run).pages.map((p) => p.page)).toEqual([2, 4]);
      expect(asked).toBe(2);
    });
  });

  it('gives up a drawing over its budget (processor time by its size), or a blocked one at 4 times it in wall time', async () => {
    // Budget 0.2 s + 0.3 s for the 1-megapixel page: 0.5 s, far within the page's own 30 s limit.
    await withEngine({ engine: 'tesseract.js', concurrency: 1, pageTimeoutMs: 30_000, drawBaseMs: 200, drawMsPerMegapixel: 300, workerUrl: slowDrawingWorker }, async (engine) => {
      expect(engine.drawBudgetMs(8_415_000)).toBeCloseTo(200 + 8.415 * 300);
      const skipped = { page: 1, reason: 'drawing the page took longer than its budget of 0.5 s: skipped', timedOut: true };
      let started = performance.now();
      const busy = await engine.recognize(Buffer.from('%PDF-1.4'), [1]);
      const busyMs = performance.now() - started;
      expect(busy.failed).toEqual([skipped]);
      // Counted from the drawing's start (not the thread's), so a slow thread start on a busy machine is not in it.
      expect(busyMs, 'ms for a drawing burning processor time').toBeLessThan(15_000);
      started = performance.now();
      const blocked = await engine.recognize(Buffer.from('%PDF-1.4'), [2]);
      const blockedMs = performance.now() - started;
      expect(blocked.failed).toEqual([{ ...skipped, page: 2 }]);
      // Neither processor nor idle time: only the wall-time bound (4 × 0.5 s) ends it, well before the page's 30 s.
      expect(blockedMs, 'ms for a blocked drawing').toBeGreaterThanOrEqual(2_000 - 50);
      expect(blockedMs, 'ms for a blocked drawing').toBeLessThan(15_000);
    });
  }, 60_000);

  it("stops a document whose pages use up its budget (base + per page), naming the pages not read", async () => {
    await withEngine({ engine: 'tesseract.js', concurrency: 1, pageTimeoutMs: 10_000, baseBudgetMs: 200, pageBudgetMs: 100, workerUrl: hangWorker }, async (engine) => {
      expect(engine.budgetMs(40)).toBe(200 + 40 * 100);
      const run = await engine.recognize(Buffer.from('%PDF-1.4'), [1, 1, 1]);
      // Cut at what the document's budget left it (200 + 100 ms for its one page), not at the page's own 10 s limit.
      expect(run.failed).toEqual([{ page: 1, reason: 'took longer than 0.3 s', timedOut: true }]);
    });
  });

  it('stops at close: a document being read fails as stopped (to be retried), not as read', async () => {
    const { OcrEngine, resolveOcrLanguages } = await load();
    const engine = new OcrEngine({ languages: resolveOcrLanguages('eng'), engine: 'tesseract.js', concurrency: 1, workerUrl: hangWorker });
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
});

if (!built) describe('OCR engine', () => {
  it.skip('needs the build: run `npm run build` so dist/ingest/ocr/engine.js exists', () => {});
});

if (!installed) describe('OCR engine with native Tesseract', () => {
  it.skip('needs tesseract-ocr (Debian) for the native accuracy tests; tesseract.js ran them', () => {});
});
