/**
 * Which Tesseract languages OCR reads with, and where their trained data lies on this machine. Nothing is ever
 * downloaded: a language comes from its installed npm data package (`@tesseract.js-data/<lang>`), else from the
 * system Tesseract's own data (Debian's `tesseract-ocr-<lang>`: deu, fra, chi_sim, jpn …, which have no npm
 * package installed with docsearch), or from a folder of `<lang>.traineddata[.gz]` files the operator provides.
 *
 * Resolving only checks and lists the files (the daemon does it at start, to refuse a bad setting early); the
 * folders each engine reads from are laid out when OCR is first needed (`stageForTesseractJs`, `stageForNative`)
 * and removed when the engine is released.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { listedLanguages } from './native.js';

export interface OcrLanguages {
  /** Tesseract's language argument, e.g. "eng" or "eng+fra". */
  code: string;
  /** Each language's trained data (`.traineddata` or `.traineddata.gz`), in the order given. */
  files: ReadonlyMap<string, string>;
  /**
   * The data came from npm packages (not an operator's folder), so a system Tesseract may read its own
   * installed data for the same language instead.
   */
  packaged: boolean;
}

/** A folder laid out for one engine; `dispose` removes what was made for it. */
export interface StagedData {
  dir: string;
  dispose(): void;
}

/**
 * The LSTM-only integer models (what tesseract.js itself uses with its default engine mode): a quarter of the
 * size of the package's `4.0.0` files, which hold the same LSTM network plus the legacy engine's data.
 */
const PACKAGE_MODELS = '4.0.0_best_int';
const LANGUAGE_CODE = /^[a-z]{3}(_[a-z]+)*$/i;
/** Files in tessdata folders that are not languages. */
const NOT_LANGUAGES = new Set(['osd', 'equ']);

/** The trained data a system Tesseract reads by default (`tesseract --list-langs`: its folder and languages). */
export interface SystemTessdata {
  dir: string;
  languages: ReadonlySet<string>;
}

/**
 * Resolves `--ocr-languages`: `eng`, `eng+fra` (each from its installed data package, else from `system`'s data),
 * or a folder path whose `.traineddata` / `.traineddata.gz` files are all used. Throws an Error that says what to
 * install otherwise.
 */
export function resolveOcrLanguages(spec: string, from: string = import.meta.url, system?: SystemTessdata): OcrLanguages {
  const trimmed = spec.trim();
  if (trimmed === '') throw new Error('is empty: name languages such as "eng" or "eng+fra", or a folder of .traineddata files');
  const packaged = !looksLikePath(trimmed);
  const files = packaged ? packageLanguages(trimmed, from, system) : folderLanguages(resolve(trimmed));
  return { code: [...files.keys()].join('+'), files, packaged };
}

/**
 * What keeps `--ocr-languages` from ever working on this machine with OCR `mode`, or null: the configuration's check
 * before the daemon opens anything. The system Tesseract is asked for its data only when a language has no npm package.
 */
export function ocrLanguagesProblem(spec: string, mode: string, from: string = import.meta.url): string | null {
  if (mode === 'off') return null;
  const listed = unpackagedLanguages(spec, from).length > 0 ? listLangs() : undefined;
  try {
    resolveOcrLanguages(spec, from, listed?.status === 0 ? listedLanguages(listed.stdout) : undefined);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why `--ocr native` can never work here (no Tesseract to run), or null. */
export function nativeOcrProblem(): string | null {
  const error = listLangs().error as NodeJS.ErrnoException | undefined;
  if (!error) return null;
  return error.code === 'ENOENT' ? 'tesseract is not installed (Debian: tesseract-ocr)' : `tesseract could not be run: ${error.message}`;
}

// Synchronous: configuration is read before anything starts, and this answers in tens of milliseconds.
const listLangs = () => spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8', timeout: 10_000 });

/**
 * A document's OCR languages (its upload's or project's setting, codes joined by "+"): those installed here, and
 * the codes that are not (`missing`), which the document's warnings name — never read silently in another
 * language. `languages` is undefined when none is installed.
 */
export function installedOcrLanguages(spec: string, system: SystemTessdata | undefined, from: string = import.meta.url): { languages?: OcrLanguages; missing: string[] } {
  const files = new Map<string, string>();
  const missing: string[] = [];
  for (const code of splitCodes(spec)) {
    try {
      for (const [c, file] of packageLanguages(code, from, system)) files.set(c, file);
    } catch {
      missing.push(code);
    }
  }
  return { ...(files.size > 0 ? { languages: { code: [...files.keys()].join('+'), files, packaged: true } } : {}), missing };
}

/**
 * Every language this server can read scans in: those with an installed data package (`@tesseract.js-data/<code>`
 * in any node_modules folder above `from`) and those in the system Tesseract's data, sorted.
 */
export function installedOcrCodes(system: SystemTessdata | undefined, from: string = import.meta.url): string[] {
  const codes = new Set<string>([...(system?.languages ?? [])].filter((c) => LANGUAGE_CODE.test(c) && !NOT_LANGUAGES.has(c)));
  // The folders require.resolve looks in, as packageLanguages finds one language's package.
  for (const dir of createRequire(from).resolve.paths('@tesseract.js-data') ?? []) {
    const scope = join(dir, '@tesseract.js-data');
    if (!existsSync(scope)) continue;
    for (const code of readdirSync(scope)) if (LANGUAGE_CODE.test(code) && existsSync(join(scope, code, PACKAGE_MODELS, `${code}.traineddata.gz`))) codes.add(code);
  }
  return [...codes].sort();
}

/** What a missing language's note says to install. */
export function ocrPackageHint(code: string): string {
  return `Debian: tesseract-ocr-${code.replaceAll('_', '-').toLowerCase()}, or the npm package @tesseract.js-data/${code}`;
}

const splitCodes = (spec: string): string[] => [...new Set(spec.split('+').map((c) => c.trim()).filter((c) => c !== ''))];

/** The language codes of `spec` (codes joined by "+") that no npm data package provides; none for a folder. */
export function unpackagedLanguages(spec: string, from: string = import.meta.url): string[] {
  if (looksLikePath(spec.trim())) return [];
  const require = createRequire(from);
  return spec
    .split('+')
    .map((c) => c.trim())
    .filter((code) => {
      try {
        require.resolve(`@tesseract.js-data/${code}/package.json`);
        return false;
      } catch {
        return true;
      }
    });
}

/**
 * tesseract.js reads every language from one folder as `<code>.traineddata.gz`: the package folder itself when
 * the languages already lie like that, else a folder of links. tesseract.js checks the gzip magic itself, so an
 * uncompressed file behind a `.gz` name is read correctly.
 */
export function stageForTesseractJs(languages: OcrLanguages): StagedData {
  const files = [...languages.files.values()];
  const dirs = new Set(files.map((f) => dirname(f)));
  if (dirs.size === 1 && files.every((f) => f.endsWith('.gz'))) return { dir: [...dirs][0]!, dispose: () => {} };
  const staged = mkdtempSync(join(tmpdir(), 'docsearch-ocr-lang-'));
  for (const [code, file] of languages.files) symlinkSync(file, join(staged, `${code}.traineddata.gz`));
  return { dir: staged, dispose: () => rmSync(staged, { recursive: true, force: true }) };
}

/**
 * A tessdata folder native Tesseract can read: uncompressed `<code>.traineddata` for every language. Packaged
 * languages that the system Tesseract has data for (`system`, from `tesseract --list-langs`) are read from there:
 * Debian's `tesseract-ocr-<lang>` packages hold the smaller, faster tessdata_fast models. When
 * the system folder has them all it is used as it is; otherwise a folder is made with links to system files and
 * unpacked copies of the rest.
 */
export function stageForNative(languages: OcrLanguages, system: { dir: string; languages: ReadonlySet<string> } | undefined): StagedData {
  const fromSystem = (code: string) => languages.packaged && system !== undefined && system.languages.has(code);
  const codes = [...languages.files.keys()];
  if (system && codes.every(fromSystem)) return { dir: system.dir, dispose: () => {} };
  const staged = mkdtempSync(join(tmpdir(), 'docsearch-tessdata-'));
  try {
    for (const [code, file] of languages.files) {
      const target = join(staged, `${code}.traineddata`);
      if (fromSystem(code)) symlinkSync(join(system!.dir, `${code}.traineddata`), target);
      else if (isGzip(file)) writeFileSync(target, gunzipSync(readFileSync(file)));
      else symlinkSync(file, target);
    }
  } catch (err) {
    rmSync(staged, { recursive: true, force: true });
    throw err;
  }
  return { dir: staged, dispose: () => rmSync(staged, { recursive: true, force: true }) };
}

function isGzip(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

function looksLikePath(spec: string): boolean {
  return spec.includes('/') || spec.includes('\\') || spec.startsWith('.');
}

function packageLanguages(spec: string, from: string, system: SystemTessdata | undefined): Map<string, string> {
  const require = createRequire(from);
  const files = new Map<string, string>();
  for (const code of spec.split('+').map((c) => c.trim())) {
    if (!LANGUAGE_CODE.test(code)) throw new Error(`"${code}" is not a Tesseract language code (such as eng, fra, chi_sim)`);
    let pkg: string;
    try {
      pkg = dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
    } catch {
      // Debian's data is plain `.traineddata`: native Tesseract reads it where it lies, tesseract.js through a
      // `.gz`-named link (it checks the gzip magic itself).
      const installed = system?.languages.has(code) ? join(system.dir, `${code}.traineddata`) : undefined;
      if (installed && existsSync(installed)) {
        files.set(code, installed);
        continue;
      }
      throw new Error(
        `no trained data for "${code}": install the npm package @tesseract.js-data/${code} or Tesseract's own ` +
          `(Debian: tesseract-ocr-${code.replaceAll('_', '-').toLowerCase()}), or give a folder of .traineddata files instead`,
      );
    }
    const file = join(pkg, PACKAGE_MODELS, `${code}.traineddata.gz`);
    if (!existsSync(file)) throw new Error(`the package @tesseract.js-data/${code} has no ${PACKAGE_MODELS}/${code}.traineddata.gz`);
    files.set(code, file);
  }
  return files;
}

function folderLanguages(dir: string): Map<string, string> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder`);
  const files = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const m = /^(.+)\.traineddata(\.gz)?$/.exec(name);
    if (!m || !LANGUAGE_CODE.test(m[1]!) || NOT_LANGUAGES.has(m[1]!)) continue;
    // A language present both compressed and not: either will do, keep the first.
    if (!files.has(m[1]!)) files.set(m[1]!, join(dir, name));
  }
  if (files.size === 0) throw new Error(`${dir} holds no <lang>.traineddata files`);
  return files;
}
