/**
 * pdf.js for every caller: its legacy build (the modern one needs DOMMatrix and other browser globals Node lacks),
 * with its worker side loaded here too, since in Node pdf.js runs that side on the calling thread.
 * Both bundles carry core-js polyfills. On V8 before 12.2 (Node 20) core-js replaces Array.prototype.push for the
 * whole thread, only so that a push onto an array whose length is read-only throws the spec's TypeError — a case
 * pdf.js never meets. Its push reads a property descriptor on every call: a seventh of a long PDF's parse (see
 * "pdf.js's Array.prototype.push polyfill" in bench/results/extract.md). The engine's push is put back once both
 * bundles have run.
 */
import { NATIVE_PUSH } from './native-push.js';
import * as worker from 'pdfjs-dist/legacy/build/pdf.worker.mjs';

export { getDocument, ImageKind, OPS, Util, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
export type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
export type { TextItem } from 'pdfjs-dist/types/src/display/api.js';

// pdf.js takes its worker side from here instead of importing the file itself after the push is restored.
(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
Object.defineProperty(Array.prototype, 'push', { value: NATIVE_PUSH, writable: true, enumerable: false, configurable: true });
