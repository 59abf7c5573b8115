/** Array.prototype.push as the engine made it, kept before pdf.js's polyfills replace it (pdfjs.ts imports this first). */
export const NATIVE_PUSH = Array.prototype.push;
