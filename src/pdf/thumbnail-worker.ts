/**
 * Worker-thread entry for thumbnail.ts: renders the first page of one PDF at a time with pdf.js (opened as
 * page-image.ts opens it, with its pixel budget) onto an @napi-rs/canvas, and answers with a WebP image (quality
 * 80: a page of text is a fraction of its PNG's size, bench/results/web.md#thumbnail-figures). The renderer gives
 * this thread a heap limit and ends it when a page takes too long, so a hostile file costs a thread, never the
 * daemon.
 */
import { parentPort } from 'node:worker_threads';
import { createCanvas } from '@napi-rs/canvas';
import { openPdf, withImageBudget } from './page-image.js';

export interface ThumbnailRequest {
  id: number;
  data: Uint8Array;
  /** Width of the image in pixels; the height follows the page, at most `maxHeight`. */
  width: number;
  maxHeight: number;
  /** The page to draw, from 1 (default 1). */
  page?: number;
}

export type ThumbnailReply = { id: number; ok: true; image: Uint8Array } | { id: number; ok: false; message: string };

const port = parentPort!;

async function render(req: ThumbnailRequest): Promise<Uint8Array> {
  const doc = await openPdf(req.data);
  try {
    const page = await doc.getPage(req.page ?? 1);
    const base = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: req.width / Math.max(1, base.width) });
    const width = Math.max(1, Math.ceil(viewport.width));
    // A very tall page keeps its top: that is what a person recognises a document by.
    const height = Math.max(1, Math.min(req.maxHeight, Math.ceil(viewport.height)));
    const canvas = createCanvas(width, height);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff'; // paper, also under transparent scans
    context.fillRect(0, 0, width, height);
    // An image over the pixel budget is not decoded; the page fails rather than show without it.
    await withImageBudget(() => page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise);
    return new Uint8Array(await canvas.encode('webp', 80));
  } finally {
    await doc.destroy();
  }
}

port.on('message', (req: ThumbnailRequest) => {
  render(req).then(
    (image) => port.postMessage({ id: req.id, ok: true, image } satisfies ThumbnailReply, [image.buffer as ArrayBuffer]),
    (err: unknown) => port.postMessage({ id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies ThumbnailReply),
  );
});

// Loaded (pdf.js and the canvas with it): the renderer counts a render's time from here.
port.postMessage({ ready: true });
