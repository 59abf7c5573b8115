/**
 * The ingest pipeline's embedder and OCR engine, told to the metrics: each passage embedding call's time and texts,
 * each OCR'd page's time and outcome. Wrappers here rather than hooks in ingest/: the pipeline stays as it is.
 */
import type { OcrStage } from '../../ingest/ocr-stage.js';
import type { EmbedOptions, Embedder, TextWithUnits } from '../../models/embedder.js';
import type { DaemonMetrics } from './metrics.js';

/** `embedder` as the pipeline uses it, timing its passage calls (the id, dimension and status are the model's own). */
export function timedPassages(embedder: Embedder, metrics: Pick<DaemonMetrics, 'embedded'>): Embedder {
  return {
    get id() {
      return embedder.id;
    },
    get dimension() {
      return embedder.dimension;
    },
    get maxTokens() {
      return embedder.maxTokens;
    },
    get tokenizer() {
      return embedder.tokenizer;
    },
    init: () => embedder.init(),
    status: () => embedder.status(),
    close: () => embedder.close(),
    async embed(texts: string[], opts: EmbedOptions) {
      const started = performance.now();
      const out = await embedder.embed(texts, opts);
      metrics.embedded(opts.kind, texts.length, (performance.now() - started) / 1000);
      return out;
    },
    ...(embedder.embedUnits
      ? {
          async embedUnits(items: TextWithUnits[], opts: EmbedOptions) {
            const started = performance.now();
            const out = await embedder.embedUnits!(items, opts);
            metrics.embedded(opts.kind, items.length, (performance.now() - started) / 1000);
            return out;
          },
        }
      : {}),
  };
}

/** `ocr` counting each page it reads by outcome, with the render and recognition time of those it got through. */
export function timedOcr(ocr: OcrStage, metrics: Pick<DaemonMetrics, 'ocrPage'>): OcrStage {
  return {
    languages: ocr.languages,
    languagesFor: (spec) => ocr.languagesFor(spec),
    async recognize(...args: Parameters<OcrStage['recognize']>) {
      const run = await ocr.recognize(...args);
      for (const page of run.pages) metrics.ocrPage(page.text.trim() === '' ? 'blank' : 'read', (page.renderMs + page.recognizeMs) / 1000);
      for (const _ of run.failed) metrics.ocrPage('failed');
      return run;
    },
  };
}
