/**
 * `--ocr-languages` and the folders of trained data laid out for each engine: tesseract.js reads
 * `<code>.traineddata.gz` from one folder; native Tesseract reads uncompressed `<code>.traineddata` from one
 * folder, its own system data where it has the language.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveOcrLanguages, stageForNative, stageForTesseractJs } from '../../../src/ingest/ocr/languages.js';

const temp = mkdtempSync(join(tmpdir(), 'docsearch-ocr-lang-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
const isGzip = (file: string) => readFileSync(file).subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]));

/** An operator's tessdata folder: eng compressed, enm not, and osd (which is no language). */
function operatorFolder(name: string): string {
  const eng = resolveOcrLanguages('eng').files.get('eng')!;
  const folder = join(temp, name);
  mkdirSync(folder);
  symlinkSync(eng, join(folder, 'eng.traineddata.gz'));
  writeFileSync(join(folder, 'enm.traineddata'), gunzipSync(readFileSync(eng)));
  symlinkSync(eng, join(folder, 'osd.traineddata'));
  return folder;
}

describe('OCR languages', () => {
  it('resolves installed packages, and says what to install when one is missing, without touching the disk', () => {
    const eng = resolveOcrLanguages('eng');
    expect(eng.code).toBe('eng');
    expect(eng.packaged).toBe(true);
    expect(eng.files.get('eng')).toMatch(/@tesseract\.js-data\/eng\/4\.0\.0_best_int\/eng\.traineddata\.gz$/);

    expect(() => resolveOcrLanguages('eng+xyz')).toThrow(/no trained data for "xyz": install the npm package @tesseract\.js-data\/xyz/);
    expect(() => resolveOcrLanguages('en g')).toThrow(/not a Tesseract language code/);
    expect(() => resolveOcrLanguages('eng+$(touch x)')).toThrow(/not a Tesseract language code/);
    expect(() => resolveOcrLanguages(join(temp, 'missing'))).toThrow(/is not a folder/);
    expect(() => resolveOcrLanguages('  ')).toThrow(/is empty/);
  });

  it('reads a folder of compressed and uncompressed files, skipping osd; tesseract.js gets them linked into one folder', () => {
    const eng = resolveOcrLanguages('eng').files.get('eng')!;
    const empty = join(temp, 'empty');
    mkdirSync(empty);
    expect(() => resolveOcrLanguages(empty)).toThrow(/holds no <lang>.traineddata files/);
    const folder = operatorFolder('tessdata');
    const both = resolveOcrLanguages(folder);
    expect(both.code).toBe('eng+enm');
    expect(both.packaged).toBe(false);

    const staged = stageForTesseractJs(both);
    expect(readdirSync(staged.dir).sort()).toEqual(['eng.traineddata.gz', 'enm.traineddata.gz']);
    staged.dispose();
    expect(existsSync(staged.dir)).toBe(false);
    expect(existsSync(folder)).toBe(true);

    // A package folder is used as it is.
    const pkg = stageForTesseractJs(resolveOcrLanguages('eng'));
    expect(pkg.dir).toBe(join(eng, '..'));
    pkg.dispose();
    expect(existsSync(eng)).toBe(true);
  });

  it('gives native Tesseract its system data when it has every language, else a folder with the npm data unpacked', () => {
    const eng = resolveOcrLanguages('eng');
    const system = join(temp, 'system-tessdata');
    mkdirSync(system);
    writeFileSync(join(system, 'eng.traineddata'), 'system eng');

    const fromSystem = stageForNative(eng, { dir: system, languages: new Set(['eng', 'osd']) });
    expect(fromSystem.dir).toBe(system);
    fromSystem.dispose();
    expect(existsSync(join(system, 'eng.traineddata'))).toBe(true);

    // The system lacks the language (or there is no system data at all): the package's file, unpacked.
    for (const sys of [{ dir: system, languages: new Set(['osd']) }, undefined]) {
      const unpacked = stageForNative(eng, sys);
      expect(unpacked.dir).not.toBe(system);
      expect(readdirSync(unpacked.dir)).toEqual(['eng.traineddata']);
      expect(isGzip(join(unpacked.dir, 'eng.traineddata'))).toBe(false);
      expect(readFileSync(join(unpacked.dir, 'eng.traineddata')).equals(gunzipSync(readFileSync(eng.files.get('eng')!)))).toBe(true);
      unpacked.dispose();
      expect(existsSync(unpacked.dir)).toBe(false);
    }

    // An operator's folder is what they asked for, even where the system has the language.
    const own = stageForNative(resolveOcrLanguages(operatorFolder('own')), { dir: system, languages: new Set(['eng', 'enm']) });
    expect(readdirSync(own.dir).sort()).toEqual(['eng.traineddata', 'enm.traineddata']);
    expect(readFileSync(join(own.dir, 'eng.traineddata'), 'utf8')).not.toBe('system eng');
    expect(isGzip(join(own.dir, 'eng.traineddata'))).toBe(false);
    own.dispose();
  });
});
