/**
 * One long-lived native Tesseract process reading page after page: with `stream_filelist` it takes image paths on
 * its stdin and writes each page's word table (TSV) to its stdout as soon as the page is read. Starting tesseract
 * for every page cost a few percent of a dense A4 page's CPU (loading the model and dictionaries, faulting in
 * its memory); a session pays that once, and the engine keeps one per OCR lane while it is loaded.
 *
 * Each page image is written to the session's own temporary folder and followed by a tiny blank "sentinel" image:
 * the sentinel's page row on stdout marks the end of the page's table. The process gets what a one-page process
 * gets (native.ts: argument array, one OpenMP thread, nice 10, its own process group); a page that runs out of
 * time kills it, so does `end`, and a process that dies fails its page: the engine starts a new session for the
 * next one.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { boundaryAfter, cutChars } from '../../core/code-points.js';
import { seconds } from './duration.js';
import { BACKGROUND_NICE, ToolTimeout } from '../run-tool.js';
import { type NativeTesseract, tesseractArgs, tsvText } from './native.js';

const MAX_OUTPUT_CHARS = 16 * 1024 * 1024;
/** Tesseract's last words are what explains a failure; earlier stderr is progress notes. */
const STDERR_KEPT = 4096;
/** The end of what tesseract said, from a whole character on (a cut between an emoji's halves leaves half of it). */
const keptTail = (text: string): string => (text.length <= STDERR_KEPT ? text : text.slice(boundaryAfter(text, text.length - STDERR_KEPT)));
/** A blank 8×8 PBM. */
const SENTINEL = Buffer.concat([Buffer.from('P4\n8 8\n', 'ascii'), Buffer.alloc(8)]);

interface Pending {
  /** Tesseract's page number of the sentinel that ends this page. */
  sentinel: RegExp;
  resolve(read: { text: string; confidence: number }): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class TesseractSession {
  readonly dpi: number;
  /** Tesseract's language argument it reads with ("deu+eng"). */
  readonly languages: string;
  /** Pages read so far. */
  pages = 0;
  dead = false;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly dir: string;
  private readonly image: string;
  private readonly sentinel: string;
  private out = '';
  private err = '';
  private pending: Pending | undefined;
  /** Why the process is gone. */
  private failure: Error | undefined;

  constructor(native: NativeTesseract, options: { tessdataDir: string; languages: string; dpi: number }) {
    this.dpi = options.dpi;
    this.languages = options.languages;
    this.dir = mkdtempSync(join(tmpdir(), 'docsearch-ocr-pages-'));
    this.image = join(this.dir, 'page.pnm');
    this.sentinel = join(this.dir, 'sentinel.pbm');
    writeFileSync(this.sentinel, SENTINEL);
    this.child = spawn(native.path, [...tesseractArgs(options), '-c', 'stream_filelist=1'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    });
    if (this.child.pid !== undefined && process.platform === 'linux') {
      try {
        setPriority(this.child.pid, BACKGROUND_NICE);
      } catch {
        // it has already exited
      }
    }
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.read(chunk));
    this.child.stderr.on('data', (chunk: string) => (this.err = keptTail(this.err + chunk)));
    this.child.stdin.on('error', () => {}); // a process that died closes the pipe; 'close' explains it
    this.child.on('error', (e: NodeJS.ErrnoException) => this.fail(new Error(e.code === 'ENOENT' ? `${native.path} is not installed` : `could not run ${native.path}: ${e.message}`)));
    this.child.on('close', (code, signal) => {
      const how = signal ? ` (killed by ${signal})` : code ? ` (exit status ${code})` : ' (it ended)';
      const said = this.err.split('\n').map((l) => l.trim()).filter((l) => l && !/^Page \d+ : /.test(l)).at(-1);
      this.fail(new Error(`tesseract failed${how}${said ? `: ${cutChars(said, 200)}` : ''}`));
    });
  }

  /** Reads one page image (PBM or PGM at this session's dpi). One page at a time. */
  async recognize(image: Uint8Array, timeoutMs: number): Promise<{ text: string; confidence: number }> {
    if (this.pending) throw new Error('a tesseract session reads one page at a time');
    if (!this.dead) await writeFile(this.image, image).catch((err: unknown) => this.fail(err as Error));
    // It may have died before or while the image was written (a missing program is only known then).
    if (this.failure) throw this.failure;
    // Tesseract numbers every image it is given: this page is 2k - 1, its sentinel 2k.
    const sentinelPage = 2 * ++this.pages;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new ToolTimeout(`took longer than ${seconds(timeoutMs)}`));
      }, timeoutMs);
      this.pending = { sentinel: new RegExp(`(?:^|\\n)1\\t${sentinelPage}\\t[^\\n]*\\n`), resolve, reject, timer };
      this.child.stdin.write(`${this.image}\n${this.sentinel}\n`);
      this.read('');
    });
  }

  /** Kills the process (a page being read fails) and removes the session's folder. */
  end(): void {
    this.fail(new Error('stopped'));
  }

  private read(chunk: string): void {
    this.out += chunk;
    if (this.out.length > MAX_OUTPUT_CHARS) return this.fail(new Error('tesseract printed more than 16 MB for a page'));
    const p = this.pending;
    const m = p && p.sentinel.exec(this.out);
    if (!p || !m) return;
    const tsv = this.out.slice(0, m.index);
    this.out = this.out.slice(m.index + m[0].length);
    this.pending = undefined;
    clearTimeout(p.timer);
    p.resolve(tsvText(tsv));
  }

  private fail(err: Error): void {
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    if (this.dead) return;
    this.dead = true;
    this.failure = err;
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
