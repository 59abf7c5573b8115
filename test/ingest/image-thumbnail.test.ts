/**
 * Scans' thumbnails (ingest/image-thumbnail.ts): drawn upright and 320 wide, kept by content (the original is read
 * once), two decoded at once while the rest wait, and a broken image is null, not an error.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { imageThumbnail } from '../../src/ingest/image-thumbnail.js';

const jpeg = (width: number, height: number, orientation?: number) => {
  const s = sharp({ create: { width, height, channels: 3, background: { r: 120, g: 60, b: 30 } } }).jpeg();
  return (orientation ? s.withMetadata({ orientation }) : s).toBuffer();
};

describe('image thumbnails', () => {
  it('draws a JPEG upright, 320 wide, as WebP, and reads the original once for the same content', async () => {
    const bytes = await jpeg(1200, 800, 6); // stored sideways: upright it is portrait
    let reads = 0;
    const read = async () => (reads++, new Uint8Array(bytes));
    const first = await imageThumbnail('a'.repeat(64), read, 1, 320);
    const meta = await sharp(first!).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 320, 480]);
    expect(await imageThumbnail('a'.repeat(64), read, 1, 320)).toBe(first);
    expect(reads).toBe(1);
  });

  it('decodes two at once; a third waits until one is done', async () => {
    const bytes = new Uint8Array(await jpeg(64, 64));
    const gates: (() => void)[] = [];
    let started = 0;
    const read = () => {
      started++;
      return new Promise<Uint8Array>((resolve) => gates.push(() => resolve(bytes)));
    };
    const all = ['b', 'c', 'd'].map((c) => imageThumbnail(c.repeat(64), read, 1, 320));
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(2);
    gates[0]!();
    await all[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(3);
    gates[1]!();
    gates[2]!();
    expect((await Promise.all(all)).every((x) => x !== null)).toBe(true);
  });

  it('answers null for bytes that are no image', async () => {
    expect(await imageThumbnail('e'.repeat(64), async () => new Uint8Array([1, 2, 3]), 1, 320)).toBeNull();
  });
});
