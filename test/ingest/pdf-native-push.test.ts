/**
 * pdf.js's legacy build replaces Array.prototype.push with core-js's on Node 20 (a descriptor read on every call,
 * a seventh of a long PDF's parse); src/pdf/pdfjs.ts puts the engine's back. Checked in a process of its own,
 * as the parse worker runs: the built parser loaded and a PDF read, push is still the engine's. Needs `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';
import { unmet } from '../helpers/requirement.js';

const PARSER = join(REPO, 'dist/ingest/parsers/pdf.js');
const built = unmet(existsSync(PARSER) ? null : 'dist/ is not built (npm run build)');

const SCRIPT = `
import { readFileSync } from 'node:fs';
const native = Array.prototype.push;
const { parse } = await import(process.argv[1]);
const doc = await parse(new Uint8Array(readFileSync(process.argv[2])));
console.log(JSON.stringify({ pages: doc.pages, native: Array.prototype.push === native }));
`;

describe.skipIf(built)(`Array.prototype.push beside pdf.js${built ? ` (skipped: ${built})` : ''}`, () => {
  it("is the engine's after a PDF is parsed", () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, pathToFileURL(PARSER).href, join(REPO, 'test/fixtures/extract/libreoffice.pdf')], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ pages: expect.any(Number), native: true });
  });
});
