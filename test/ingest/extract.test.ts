/**
 * The worker-thread extractor, from the built dist/ (the worker script is resolved next to extract.js there):
 * run `npm run build` first.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeDocx, makePdf, para } from './build-fixtures.js';
import { unmet } from '../helpers/requirement.js';

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
