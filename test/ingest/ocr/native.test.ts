/**
 * Native Tesseract as a child process: the probe, the TSV reading, and what goes wrong with a real program
 * (missing, not Tesseract, too old, failing with noise on stderr, hanging, a data folder with shell syntax in its
 * name). Misbehaving programs are shell scripts standing in for `tesseract` (only they can misbehave on demand);
 * the real /usr/bin/tesseract is used where a test needs it and skipped with a reason where it is not installed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stageForNative, resolveOcrLanguages } from '../../../src/ingest/ocr/languages.js';
import { probeTesseract, recognizeNative, tsvText } from '../../../src/ingest/ocr/native.js';
import { runTool, ToolTimeout } from '../../../src/ingest/run-tool.js';
import { TesseractSession } from '../../../src/ingest/ocr/native-session.js';
import { openPdf, pageImage } from '../../../src/pdf/page-image.js';
import { unmet } from '../../helpers/requirement.js';

const temp = mkdtempSync(join(tmpdir(), 'docsearch-native-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
const installed = unmet(spawnSync('tesseract', ['--version']).status === 0 ? null : 'native Tesseract is not installed (apt-get install -y tesseract-ocr tesseract-ocr-eng)') === null;

let scripts = 0;
/** A program standing in for tesseract: `body` is POSIX shell. */
function fake(body: string): string {
  const path = join(temp, `tesseract-${++scripts}`);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const TSV_HEADER = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
const word = (block: number, par: number, line: number, n: number, conf: number, text: string) => `5\t1\t${block}\t${par}\t${line}\t${n}\t0\t0\t10\t10\t${conf}\t${text}`;
const TSV = [
  TSV_HEADER,
  '1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t',
  word(1, 1, 1, 1, 90, 'The'),
  word(1, 1, 1, 2, 80, 'first'),
  word(1, 1, 2, 1, 70, 'line-'),
  word(1, 1, 2, 2, 100, 'two.'),
  word(1, 2, 1, 1, 60, 'Second'),
  word(2, 1, 1, 1, 50, 'Block.'),
  word(2, 1, 1, 2, -1, ' '),
].join('\n');

describe('native Tesseract', () => {
  it('reads the TSV word table as Tesseract lays out its text, with the mean word confidence', () => {
    expect(tsvText(TSV)).toEqual({ text: 'The first\nline- two.\n\nSecond\n\nBlock.\n', confidence: (90 + 80 + 70 + 100 + 60 + 50) / 6 });
    expect(tsvText(`${TSV_HEADER}\n`)).toEqual({ text: '', confidence: 0 });
  });

  it('refuses a program that is missing, is not Tesseract, or is older than 4, saying which', async () => {
    await expect(probeTesseract(join(temp, 'no-such-tesseract'))).rejects.toThrow(/no-such-tesseract is not installed/);
    await expect(probeTesseract(fake('echo "usage: something else" >&2; exit 2'))).rejects.toThrow(/--version did not answer as Tesseract does \(exit status 2\): usage: something else/);
    await expect(probeTesseract(fake('echo "tesseract 3.05.02"'))).rejects.toThrow(/is Tesseract 3\.05\.02: version 4 or later is needed/);
    await expect(probeTesseract(join(temp))).rejects.toThrow(/could not run/);
  });

  it.runIf(installed)('finds the installed Tesseract, its version and its own trained data', async () => {
    const t = await probeTesseract('tesseract');
    expect(t.version).toMatch(/^\d+\.\d+/);
    expect(t.system?.dir).toBeTruthy();
    expect(existsSync(t.system!.dir)).toBe(true);
  });

  it('kills a hung process (and what it started) at its time limit', async () => {
    const pids = join(temp, 'hung.pids');
    const hung = fake(`sleep 1000 & echo $! > ${pids}; echo $$ >> ${pids}; wait`);
    await expect(runTool(hung, [], { timeoutMs: 500 })).rejects.toBeInstanceOf(ToolTimeout);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(started).toHaveLength(2);
    for (let i = 0; i < 50 && started.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    expect(started.filter(alive)).toEqual([]);
  });

  it('stops a process when asked (the engine closing)', async () => {
    const stop = new AbortController();
    const running = runTool(fake('exec sleep 1000'), [], { timeoutMs: 60_000, signal: stop.signal });
    stop.abort();
    await expect(running).rejects.toThrow('stopped');
  });

  it('takes the text from stdout whatever is on stderr, and explains a failure by its last stderr line', async () => {
    const tsv = join(temp, 'page.tsv');
    writeFileSync(tsv, TSV);
    const native = { path: fake(`cat > /dev/null; echo "Estimating resolution as 301" >&2; echo "Detected 12 diacritics" >&2; cat ${tsv}`), version: '5.3.0', system: undefined };
    const opts = { tessdataDir: temp, languages: 'eng', dpi: 300, timeoutMs: 10_000 };
    expect((await recognizeNative(native, Buffer.from('P4\n1 1\n\0'), opts)).text).toBe('The first\nline- two.\n\nSecond\n\nBlock.\n');

    const failing = { ...native, path: fake('cat > /dev/null; echo "Tesseract Open Source OCR Engine" >&2; echo "Error: Failed loading language \'eng\'" >&2; exit 1') };
    await expect(recognizeNative(failing, Buffer.from('P4\n1 1\n\0'), opts)).rejects.toThrow("tesseract failed (exit status 1): Error: Failed loading language 'eng'");

    // A program that exits without reading its input closes the pipe: a failure, not a crash of the caller.
    const closes = { ...native, path: fake('exit 3') };
    await expect(recognizeNative(closes, Buffer.alloc(4 * 1024 * 1024), opts)).rejects.toThrow('tesseract failed (exit status 3)');
  });

  it.runIf(installed)('passes its arguments as an array: a data folder named with spaces and shell syntax is just a folder', async () => {
    const native = await probeTesseract('tesseract');
    const staged = stageForNative(resolveOcrLanguages('eng'), undefined);
    const odd = join(temp, 'tess data; $(touch INJECTED) `touch INJECTED2`');
    mkdirSync(odd);
    copyFileSync(join(staged.dir, 'eng.traineddata'), join(odd, 'eng.traineddata'));
    staged.dispose();
    // "Hi" would need a real page; an empty white image is read as no text, with the language loaded from `odd`.
    const image = Buffer.concat([Buffer.from('P4\n16 16\n'), Buffer.alloc(32)]);
    const read = await recognizeNative(native, image, { tessdataDir: odd, languages: 'eng', dpi: 300, timeoutMs: 60_000 });
    expect(read).toEqual({ text: '', confidence: 0 });
    expect(readdirSync(temp).filter((f) => f.startsWith('INJECTED'))).toEqual([]);
    expect(readdirSync(process.cwd()).filter((f) => f.startsWith('INJECTED'))).toEqual([]);
    await expect(recognizeNative(native, image, { tessdataDir: join(temp, 'missing'), languages: 'eng', dpi: 300, timeoutMs: 60_000 })).rejects.toThrow(/tesseract failed \(exit status 1\)/);
  });
});

describe('a native Tesseract session (one process, page after page)', () => {
  const sessionDirs = () => readdirSync(tmpdir()).filter((f) => f.startsWith('docsearch-ocr-pages-'));
  const image = Buffer.from('P4\n1 1\n\0');
  const fakeNative = (body: string) => ({ path: fake(body), version: '5.3.0', system: undefined });
  const opts = { tessdataDir: temp, languages: 'eng', dpi: 300 };

  it('cuts the stream of word tables into pages, however the output arrives', async () => {
    // As tesseract does with stream_filelist: each path on stdin is an image; its table is written when it is read
    // (here in two writes a moment apart, with progress notes on stderr).
    const streaming = fakeNative(`n=0
while read path; do
  n=$((n + 1))
  echo "Page $((n - 1)) : $path" >&2
  if [ $((n % 2)) -eq 1 ]; then
    printf '1\t%d\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n5\t%d\t1\t1\t1\t1\t0\t0\t1\t1\t90\tpage\n' $n $n
    sleep 0.2
    printf '5\t%d\t1\t1\t1\t2\t0\t0\t1\t1\t80\t%d\n' $n $n
  else
    printf '1\t%d\t0\t0\t0\t0\t0\t0\t8\t8\t-1\t\n' $n
  fi
done`);
    const session = new TesseractSession(streaming, opts);
    expect(await session.recognize(image, 10_000)).toEqual({ text: 'page 1\n', confidence: 85 });
    expect(await session.recognize(image, 10_000)).toEqual({ text: 'page 3\n', confidence: 85 });
    expect(session.pages).toBe(2);
    session.end();
    expect(session.dead).toBe(true);
    await expect(session.recognize(image, 10_000)).rejects.toThrow('stopped');
  });

  it('fails the page of a process that dies, explains why, and leaves no folder behind', async () => {
    const before = sessionDirs().length;
    const session = new TesseractSession(fakeNative('read path; echo "Page 0 : $path" >&2; echo "Error in pixReadMem: unknown format" >&2; exit 1'), opts);
    await expect(session.recognize(image, 10_000)).rejects.toThrow('tesseract failed (exit status 1): Error in pixReadMem: unknown format');
    expect(session.dead).toBe(true);
    expect(sessionDirs()).toHaveLength(before);
    const missing = new TesseractSession({ path: join(temp, 'no-such-tesseract'), version: '5', system: undefined }, opts);
    await expect(missing.recognize(image, 10_000)).rejects.toThrow(/no-such-tesseract is not installed/);
  });

  it('kills a process that takes too long, and one still reading when the session ends', async () => {
    const hung = new TesseractSession(fakeNative('exec sleep 1000'), opts);
    await expect(hung.recognize(image, 500)).rejects.toBeInstanceOf(ToolTimeout);
    expect(hung.dead).toBe(true);
    const ended = new TesseractSession(fakeNative('exec sleep 1000'), opts);
    const reading = ended.recognize(image, 60_000);
    await new Promise((r) => setTimeout(r, 100));
    ended.end();
    await expect(reading).rejects.toThrow('stopped');
  });

  it.runIf(installed)('reads real pages one after another in one process', async () => {
    const native = await probeTesseract('tesseract');
    const staged = stageForNative(resolveOcrLanguages('eng'), native.system);
    const doc = await openPdf(new Uint8Array(readFileSync(join(import.meta.dirname, '../../fixtures/ocr/scan-300dpi.pdf'))));
    const session = new TesseractSession(native, { tessdataDir: staged.dir, languages: 'eng', dpi: 300 });
    try {
      const first = await session.recognize((await pageImage(doc, 1)).pnm, 120_000);
      const second = await session.recognize((await pageImage(doc, 2)).pnm, 120_000);
      expect(first.text).toContain('The lighthouse keeper counted forty seven ships');
      expect(second.text).toContain('Copper kettles were sold at the Thursday market');
      expect(first.confidence).toBeGreaterThan(80);
    } finally {
      session.end();
      staged.dispose();
      await doc.destroy();
    }
  }, 300_000);
});

if (!installed) describe('native Tesseract', () => {
  it.skip('needs tesseract-ocr (Debian) for the tests that run the real program', () => {});
});
