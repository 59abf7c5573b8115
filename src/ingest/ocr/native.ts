/**
 * Native Tesseract (Debian's `tesseract-ocr`) as a child process: the probe that finds it, and one-page runs (the
 * page image on its stdin, its word table, TSV, on stdout; the engine reads pages through long-lived sessions,
 * native-session.ts, and uses these for its check). About twice as fast as the same network in tesseract.js's
 * WebAssembly (see docs/BENCHMARKS.md#ocr), and a crashed or hung process takes nothing else with it.
 * Every process runs through run-tool.ts (no shell, one OpenMP thread, a lower priority, a time limit, bounded
 * output).
 */
import { runTool, toolFailure as failure } from '../run-tool.js';

const PROBE_TIMEOUT_MS = 10_000;

export interface NativeTesseract {
  path: string;
  /** e.g. "5.3.0". */
  version: string;
  /** The trained data it reads by default (`--list-langs`), if it found a folder. */
  system: { dir: string; languages: ReadonlySet<string> } | undefined;
}

export interface NativeRecognizeOptions {
  /** A tessdata folder holding `<code>.traineddata` for every language. */
  tessdataDir: string;
  languages: string;
  dpi: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Checks that `path` is a Tesseract with the LSTM engine (4 or later) and finds its own trained data. Throws an
 * Error saying why it cannot be used.
 */
export async function probeTesseract(path: string): Promise<NativeTesseract> {
  const version = await runTool(path, ['--version'], { timeoutMs: PROBE_TIMEOUT_MS });
  // Tesseract 4 printed its version on stderr, 5 on stdout.
  const m = /^tesseract v?(\d+)\.(\d+)\S*/m.exec(`${version.stdout}\n${version.stderr}`);
  if (version.code !== 0 || !m) throw new Error(`${path} --version did not answer as Tesseract does${failure(version)}`);
  if (Number(m[1]) < 4) throw new Error(`${path} is Tesseract ${m[0].slice(10)}: version 4 or later is needed (LSTM models)`);
  const langs = await runTool(path, ['--list-langs'], { timeoutMs: PROBE_TIMEOUT_MS });
  return { path, version: m[0].slice(10), system: langs.code === 0 ? listedLanguages(langs.stdout) : undefined };
}

/** The folder and languages `tesseract --list-langs` printed, if it named a folder. */
export function listedLanguages(stdout: string): { dir: string; languages: ReadonlySet<string> } | undefined {
  const dir = /^List of available languages in "(.+)"/m.exec(stdout)?.[1];
  const languages = stdout
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => /^[a-z]{3}(_[a-z]+)*$/i.test(l));
  return dir ? { dir, languages: new Set(languages) } : undefined;
}

/** The arguments for reading page images from stdin with automatic page segmentation, as a TSV word table on stdout. */
export function tesseractArgs(options: { tessdataDir: string; languages: string; dpi: number }): string[] {
  return [
    '-',
    '-',
    '--tessdata-dir',
    options.tessdataDir,
    '-l',
    options.languages,
    '--oem',
    '1',
    '--psm',
    '3',
    '--dpi',
    String(options.dpi),
    '-c',
    'tessedit_create_tsv=1',
    '-c',
    'tessedit_create_txt=0',
  ];
}

/** Recognises one page image (PBM or PGM) in a process of its own; its text and mean word confidence. */
export async function recognizeNative(native: NativeTesseract, image: Uint8Array, options: NativeRecognizeOptions): Promise<{ text: string; confidence: number }> {
  const res = await runTool(native.path, tesseractArgs(options), { input: image, timeoutMs: options.timeoutMs, nice: true, signal: options.signal });
  if (res.code !== 0) throw new Error(`tesseract failed${failure(res)}`);
  return tsvText(res.stdout);
}

/**
 * Text from Tesseract's TSV word table, laid out as its plain-text output is: words of a line joined by spaces,
 * lines by newlines, paragraphs and blocks by a blank line. The confidence is the mean over words, as
 * Tesseract's MeanTextConf (and tesseract.js's `confidence`) is; 0 without words.
 */
export function tsvText(tsv: string): { text: string; confidence: number } {
  let text = '';
  let para = '';
  let line = '';
  let sum = 0;
  let words = 0;
  for (const row of tsv.split('\n')) {
    const cols = row.split('\t');
    // level page block par line word left top width height conf text
    if (cols[0] !== '5' || cols.length < 12) continue;
    const word = cols.slice(11).join('\t').trim();
    if (word === '') continue;
    const paraKey = `${cols[1]}.${cols[2]}.${cols[3]}`;
    const lineKey = `${paraKey}.${cols[4]}`;
    if (text !== '' && paraKey !== para) text += '\n\n';
    else if (text !== '' && lineKey !== line) text += '\n';
    else if (text !== '') text += ' ';
    text += word;
    para = paraKey;
    line = lineKey;
    const conf = Number(cols[10]);
    if (Number.isFinite(conf) && conf >= 0) {
      sum += conf;
      words++;
    }
  }
  return { text: text === '' ? '' : `${text}\n`, confidence: words ? sum / words : 0 };
}
