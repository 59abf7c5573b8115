/**
 * The worker-thread extractor, from the built dist/ (the worker script is resolved next to extract.js there):
 * run `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDocx, makePdf, para } from './build-fixtures.js';
import { missingFile, unmet } from '../helpers/requirement.js';

const dist = new URL('../../dist/ingest/extract.js', import.meta.url);
const built = unmet(existsSync(dist) ? null : 'dist/ is not built (npm run build)') === null;
const fixture = (name: string): URL => new URL(`../fixtures/ingest/${name}`, import.meta.url);

type ExtractModule = typeof import('../../src/ingest/extract.js');
const load = async (): Promise<ExtractModule> => (await import(dist.href)) as ExtractModule;

describe.skipIf(!built)('extract (worker thread)', () => {
  it('parses PDF, DOCX and TXT in a worker', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor();
    const pdf = await extractor.extract(makePdf([[{ lines: ['Hello from a PDF.'] }]]), 'application/pdf');
    expect(pdf.pages).toBe(1);
    expect(pdf.blocks[0]).toMatchObject({ text: 'Hello from a PDF.', page: 1 });
    const docx = await extractor.extract(
      makeDocx(para('Hello from Word.')),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(docx.blocks[0]!.text).toBe('Hello from Word.');
    const txt = await extractor.extract(Buffer.from('Hello from text.'), 'text/plain');
    expect(txt.blocks[0]!.text).toBe('Hello from text.');
  });

  it('reads a CSV cell of 48 MiB, quoted or not, within the worker’s heap (it ran out of memory)', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ concurrency: 1 });
    try {
      // Appended character by character (unquoted), or collapsed with a regex match per word (quoted), each ran
      // the 512 MB worker out of memory: "the file could not be parsed (out of memory)".
      const words = await extractor.extract(Buffer.from(`notes\n"${'word '.repeat(9 * 1024 * 1024)}"\n`), 'text/csv');
      expect(words.blocks).toHaveLength(1);
      expect(words.blocks[0]!.text).toHaveLength('notes: '.length + 9 * 1024 * 1024 * 5 - 1);
      expect(words.blocks[0]!.text.startsWith('notes: word word')).toBe(true);
      const letters = await extractor.extract(Buffer.from(`id,blob\n7,${'a'.repeat(48 * 1024 * 1024)}\n`), 'text/csv');
      expect(letters.blocks[0]!.text).toHaveLength('id: 7 · blob: '.length + 48 * 1024 * 1024);
    } finally {
      await extractor.close();
    }
  }, 60_000);

  it('passes a parser’s ParseError through unchanged', async () => {
    const { createExtractor } = await load();
    const err = await createExtractor().extract(Buffer.alloc(64, 1), 'text/plain').catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ name: 'ParseError', message: 'binary file, not text', permanent: true });
  });

  it('gives up at the time limit', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ timeoutMs: 1000, workerUrl: fixture('hang-worker.mjs') });
    // The message says the limit ended it (a hang would end in the test's own timeout instead).
    const err = (await extractor.extract(Buffer.from('x'), 'text/plain').catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('parsing took longer than 1 s — gave up');
  });

  // On a loaded machine (load 20 on 2 cores) a 206-page PDF needing 8 s of processor time took over 50 s of wall
  // time and failed "parsing took longer than 50 s". Here the parse shares one core with four busy loops.
  // Processor time per thread comes from Linux's /proc: without it the limit is wall time (the test above), and under CI a missing one fails.
  const noThreadTimes = unmet(existsSync('/proc/thread-self') ? null : 'no /proc/thread-self (not Linux)');
  const noTaskset = noThreadTimes ?? missingFile('/usr/bin/taskset', 'Debian: util-linux');
  it.skipIf(noTaskset !== null)('counts the time a parse works, not the time it waits for a core on a busy machine', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-extract-'));
    const pdf = join(dir, 'long.pdf');
    writeFileSync(pdf, makePdf(Array.from({ length: 60 }, (_, p) => [{ lines: Array.from({ length: 40 }, (_, l) => `Page ${p + 1}, line ${l + 1} of a long document.`) }])));
    writeFileSync(
      join(dir, 'parse.mjs'),
      `const { createExtractor } = await import(${JSON.stringify(dist.href)});
      const extractor = createExtractor({ concurrency: 1, timeoutMs: 2000 });
      await extractor.extract(Buffer.from('warm'), 'text/plain'); // the worker is up; the PDF stack loads with the PDF
      const doc = await extractor.extract((await import('node:fs')).readFileSync(${JSON.stringify(pdf)}), 'application/pdf').catch((err) => ({ error: err.message }));
      console.log(JSON.stringify({ pages: doc.pages, error: doc.error }));
      await extractor.close();`,
    );
    const busy = Array.from({ length: 4 }, () => spawn('taskset', ['-c', '0', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }));
    try {
      const child = spawn('taskset', ['-c', '0', process.execPath, join(dir, 'parse.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await new Promise((resolve) => child.on('exit', resolve));
      expect(JSON.parse(out)).toEqual({ pages: 60 });
    } finally {
      for (const b of busy) b.kill();
    }
  }, 60_000);

  it.skipIf(noThreadTimes !== null)('counts the time a parse waits on its event loop, and gives up on a blocked one at 10 times the limit', async () => {
    const { createExtractor, WALL_FACTOR } = await load();
    const extractor = createExtractor({ concurrency: 1, timeoutMs: 1000, workerUrl: fixture('counted-hang-worker.mjs') });
    try {
      let started = Date.now();
      const idle = (await extractor.extract(Buffer.from('idle'), 'text/plain').catch((e: unknown) => e)) as Error;
      expect(idle.message).toBe('parsing took longer than 1 s — gave up');
      expect(Date.now() - started).toBeLessThan(5000);
      started = Date.now();
      // Neither processor nor idle time: only the wall-time bound ends it.
      const blocked = (await extractor.extract(Buffer.from('sleep'), 'text/plain').catch((e: unknown) => e)) as Error;
      expect(blocked.message).toBe('parsing took longer than 1 s — gave up');
      expect(Date.now() - started).toBeGreaterThanOrEqual(WALL_FACTOR * 1000 - 50);
    } finally {
      await extractor.close();
    }
  }, 60_000);

  it('reports a worker that runs out of memory', async () => {
    const { createExtractor, OUT_OF_MEMORY } = await load();
    const extractor = createExtractor({ maxOldGenerationSizeMb: 32, workerUrl: fixture('oom-worker.mjs') });
    const err = await extractor.extract(Buffer.from('x'), 'text/plain').catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ name: 'ParseError', message: OUT_OF_MEMORY });
  });

  it('contains an exception thrown from a parser’s timer', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ workerUrl: fixture('async-throw-worker.mjs') });
    const err = (await extractor.extract(Buffer.from('x'), 'text/plain').catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ name: 'ParseError' });
    expect(err.message).toMatch(/^the file could not be parsed \(/);
  });

  it('reuses its workers: 12 documents, at most `concurrency` workers started', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ concurrency: 2 });
    try {
      const docs = await Promise.all(Array.from({ length: 12 }, (_, i) => extractor.extract(Buffer.from(`Document ${i}.`), 'text/plain')));
      expect(docs.map((d) => d.blocks[0]!.text)).toEqual(Array.from({ length: 12 }, (_, i) => `Document ${i}.`));
      expect(extractor.started).toBeLessThanOrEqual(2);
    } finally {
      await extractor.close();
    }
  });

  it('replaces a worker that timed out and keeps parsing', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ concurrency: 1, timeoutMs: 1000, workerUrl: fixture('hang-once-worker.mjs') });
    try {
      const first = (await extractor.extract(Buffer.from('hang'), 'text/plain').catch((e: unknown) => e)) as Error;
      expect(first.message).toBe('parsing took longer than 1 s — gave up');
      const second = await extractor.extract(Buffer.from('fine'), 'text/plain');
      expect(second.blocks[0]!.text).toBe('fine');
      expect(extractor.started).toBe(2);
    } finally {
      await extractor.close();
    }
  });

  it('runs at most `concurrency` parsers at once', async () => {
    const { createExtractor } = await load();
    const extractor = createExtractor({ concurrency: 1, timeoutMs: 500, workerUrl: fixture('hang-worker.mjs') });
    const started = Date.now();
    const runs = [1, 2, 3].map(() => extractor.extract(Buffer.from('x'), 'text/plain').catch(() => Date.now() - started));
    expect(extractor.active).toBe(1);
    const finished = await Promise.all(runs);
    // One after another: the third gives up about three time limits after the start.
    expect(Math.max(...(finished as number[]))).toBeGreaterThanOrEqual(1400);
  });
});

if (!built) describe('extract (worker thread)', () => {
  it.skip('needs the build: run `npm run build` so dist/ingest/extract.js exists', () => {});
});
