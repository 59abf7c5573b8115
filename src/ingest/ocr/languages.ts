/**
 * Which Tesseract languages OCR reads with, and where their trained data lies on this machine. Nothing is ever
 * downloaded: a language comes from its installed npm data package (`@tesseract.js-data/<lang>`) or from a
 * folder of `<lang>.traineddata[.gz]` files the operator provides.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface OcrLanguages {
  /** Tesseract's language argument, e.g. "eng" or "eng+fra". */
  code: string;
  /** One folder holding `<lang>.traineddata.gz` for every language (tesseract.js reads a single folder). */
  langPath: string;
  /** Removes the folder of links made when the languages lie in several places. */
  dispose(): void;
}

/**
 * The LSTM-only integer models (what tesseract.js itself uses with its default engine mode): a third of the
 * size of the combined models and as accurate on print.
 */
const PACKAGE_MODELS = '4.0.0_best_int';
const LANGUAGE_CODE = /^[a-z]{3}(_[a-z]+)*$/i;
/** Files in tessdata folders that are not languages. */
const NOT_LANGUAGES = new Set(['osd', 'equ']);

/**
 * Resolves `--ocr-languages`: `eng`, `eng+fra` (each from its installed data package), or a folder path whose
 * `.traineddata` / `.traineddata.gz` files are all used. Throws an Error that says what to install otherwise.
 */
export function resolveOcrLanguages(spec: string, from: string = import.meta.url): OcrLanguages {
  const trimmed = spec.trim();
  if (trimmed === '') throw new Error('--ocr-languages is empty: name languages such as "eng" or "eng+fra", or a folder of .traineddata files');
  const files = looksLikePath(trimmed) ? folderLanguages(resolve(trimmed)) : packageLanguages(trimmed, from);
  const codes = [...files.keys()];
  const dirs = new Set([...files.values()].map((f) => dirname(f)));
  const allGzip = [...files.values()].every((f) => f.endsWith('.gz'));
  if (dirs.size === 1 && allGzip) return { code: codes.join('+'), langPath: [...dirs][0]!, dispose: () => {} };
  // tesseract.js reads every language from one folder under one file suffix: link them together. It checks
  // the gzip magic itself, so an uncompressed file behind a `.gz` name is read correctly.
  const staged = mkdtempSync(join(tmpdir(), 'docsearch-ocr-lang-'));
  for (const [code, file] of files) symlinkSync(file, join(staged, `${code}.traineddata.gz`));
  return { code: codes.join('+'), langPath: staged, dispose: () => rmSync(staged, { recursive: true, force: true }) };
}

function looksLikePath(spec: string): boolean {
  return spec.includes('/') || spec.includes('\\') || spec.startsWith('.');
}

function packageLanguages(spec: string, from: string): Map<string, string> {
  const require = createRequire(from);
  const files = new Map<string, string>();
  for (const code of spec.split('+').map((c) => c.trim())) {
    if (!LANGUAGE_CODE.test(code)) throw new Error(`--ocr-languages: "${code}" is not a Tesseract language code (such as eng, fra, chi_sim)`);
    let pkg: string;
    try {
      pkg = dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
    } catch {
      throw new Error(
        `--ocr-languages: no trained data for "${code}": install the npm package @tesseract.js-data/${code}, ` +
          'or give a folder of .traineddata files instead',
      );
    }
    const file = join(pkg, PACKAGE_MODELS, `${code}.traineddata.gz`);
    if (!existsSync(file)) throw new Error(`--ocr-languages: the package @tesseract.js-data/${code} has no ${PACKAGE_MODELS}/${code}.traineddata.gz`);
    files.set(code, file);
  }
  return files;
}

function folderLanguages(dir: string): Map<string, string> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`--ocr-languages: ${dir} is not a folder`);
  const files = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const m = /^(.+)\.traineddata(\.gz)?$/.exec(name);
    if (!m || !LANGUAGE_CODE.test(m[1]!) || NOT_LANGUAGES.has(m[1]!)) continue;
    // A language present both compressed and not: either will do, keep the first.
    if (!files.has(m[1]!)) files.set(m[1]!, join(dir, name));
  }
  if (files.size === 0) throw new Error(`--ocr-languages: ${dir} holds no <lang>.traineddata files`);
  return files;
}

