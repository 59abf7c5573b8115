/** pdfjs-dist ships no types for its worker bundle; pdfjs.ts only hands the module to pdf.js whole. */
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
