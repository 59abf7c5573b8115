// The resolve hook of record-imports.mjs and record-requires.cjs (module hooks run on their own thread, so it writes
// synchronously); `prefix` opens each line (record-requires.cjs's thread id).
import { appendFileSync } from 'node:fs';

let file;
let prefix = '';
export function initialize(data) {
  file = data.file;
  prefix = data.prefix ?? '';
}
export async function resolve(specifier, context, next) {
  if (file && !specifier.startsWith('.') && !specifier.startsWith('node:') && !specifier.startsWith('file:') && !specifier.startsWith('/')) appendFileSync(file, `${prefix}${specifier}\n`);
  return next(specifier, context);
}
