/**
 * The thumbnail renderer (#21), from the built dist/ (its worker script is resolved next to thumbnail.js there):
 * a real PDF's first page becomes a WebP image, drawn once per content; a file pdf.js can't read, and a render
 * that hangs, cost one answer (null, remembered) and at most a thread — never the process. A thread's loading is not
 * counted against the file: a slow start draws the page, a thread that never starts is not held against it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';

type ThumbnailModule = typeof import('../../src/pdf/thumbnail.js');
const load = async (): Promise<ThumbnailModule> => (await import(new URL('../../dist/pdf/thumbnail.js', import.meta.url).href)) as ThumbnailModule;

describe('thumbnail renderer', () => {
  it('draws the first page once per content, and a broken file is a null answer that is not tried again', async () => {
    const { ThumbnailRenderer } = await load();
    const renderer = new ThumbnailRenderer({ width: 200 });
    try {
      let reads = 0;
      const pdf = readFileSync(`${REPO}/test/fixtures/extract/latex-2col.pdf`);
      const read = (bytes: Buffer) => async () => {
        reads++;
        return bytes;
      };
      const [a, b] = await Promise.all([renderer.render('sha-a', read(pdf)), renderer.render('sha-a', read(pdf))]);
      expect(a).not.toBeNull();
      expect(Buffer.from(a!).subarray(8, 12).toString()).toBe('WEBP');
      expect(Buffer.from(a!).readUIntLE(24, 3) + 1).toBe(200);
      expect(b).toBe(a); // the second waited for the first and was answered from the cache
      expect(reads).toBe(1);
      const broken = Buffer.from('%PDF-1.7\nthis is no PDF at all\n');
      expect(await renderer.render('sha-broken', read(broken))).toBeNull();
      expect(await renderer.render('sha-broken', read(broken))).toBeNull();
      expect(reads).toBe(2);
      // The thread that failed a file goes on to draw the next.
      expect(await renderer.render('sha-other', read(makePdf([[{ lines: ['Another first page.'] }]])))).not.toBeNull();
      expect(renderer.started).toBe(1);
    } finally {
      await renderer.close();
    }
  });

  it('ends a render that takes too long with its thread, and refuses renders beyond its queue', async () => {
    const { ThumbnailRenderer } = await load();
    const renderer = new ThumbnailRenderer({ timeoutMs: 500, threads: 1, maxWaiting: 1, workerUrl: new URL('../fixtures/thumbnails/hang-worker.mjs', import.meta.url) });
    try {
      const pdf = async () => Buffer.from('%PDF-1.7\n');
      const started = Date.now();
      const runs = [renderer.render('a', pdf), renderer.render('b', pdf)];
      await expect(renderer.render('c', pdf)).rejects.toThrow('too many previews are waiting to be drawn; try again in a few seconds');
      expect(await Promise.all(runs)).toEqual([null, null]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(renderer.started).toBe(2); // each hung render took its thread with it
      expect(await renderer.render('a', pdf)).toBeNull(); // remembered: not tried again
      expect(renderer.started).toBe(2);
    } finally {
      await renderer.close();
    }
  });

  it("counts a render's time from its thread's start: a thread 5 s slow to load still draws within the 4 s budget", async () => {
    const { ThumbnailRenderer } = await load();
    const renderer = new ThumbnailRenderer({ width: 200, threads: 1, workerUrl: new URL('../fixtures/thumbnails/slow-start-worker.mjs', import.meta.url) });
    try {
      const image = await renderer.render('sha-slow', async () => makePdf([[{ lines: ['A plain first page.'] }]]));
      expect(Buffer.from(image!).subarray(8, 12).toString()).toBe('WEBP');
    } finally {
      await renderer.close();
    }
  }, 60_000);

  it('a thread that never loads fails its render without remembering the file: the next request tries again', async () => {
    const { ThumbnailRenderer } = await load();
    const renderer = new ThumbnailRenderer({ startTimeoutMs: 300, threads: 1, workerUrl: new URL('../fixtures/ingest/hang-worker.mjs', import.meta.url) });
    try {
      const pdf = async () => Buffer.from('%PDF-1.7\n');
      expect(await renderer.render('a', pdf)).toBeNull();
      expect(await renderer.render('a', pdf)).toBeNull();
      expect(renderer.started).toBe(2); // tried again, on a new thread
    } finally {
      await renderer.close();
    }
  });
});
