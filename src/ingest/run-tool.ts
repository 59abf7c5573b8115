/**
 * Runs a native tool (Tesseract, LibreOffice) as a child process. Every process gets an argument array (no shell),
 * a process group of its own (a wrapper script and whatever it started are killed together), one OpenMP thread
 * (work runs in parallel across processes instead: Debian's Tesseract otherwise spins threads against each other),
 * optionally a lower CPU priority than searches, a time limit after which its group is killed, and bounded output;
 * whatever it prints on stderr is only used to explain a failure.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { basename } from 'node:path';
import { cutChars } from '../core/code-points.js';
import { seconds } from './ocr/duration.js';

/** Nice 10, as the embedder's passage threads: a search competing for the cores gets them first. */
export const BACKGROUND_NICE = 10;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

export class ToolTimeout extends Error {
  override name = 'ToolTimeout';
}

export interface ToolResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `path args…`, feeding `input`; rejects with ToolTimeout after `timeoutMs`, or when `signal` aborts (the
 * process is killed either way).
 */
export function runTool(path: string, args: readonly string[], options: { input?: Uint8Array; timeoutMs: number; nice?: boolean; signal?: AbortSignal; env?: NodeJS.ProcessEnv }): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a wrapper script and whatever it started are killed together.
    const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...(options.env ?? process.env), OMP_THREAD_LIMIT: '1' } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let settled = false;
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      fn();
    };
    const abort = () => {
      kill();
      finish(() => reject(new Error('stopped')));
    };
    const timer = setTimeout(() => {
      kill();
      finish(() => reject(new ToolTimeout(`took longer than ${seconds(options.timeoutMs)}`)));
    }, options.timeoutMs);
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) {
        kill();
        finish(() => reject(new Error(`${basename(path)} printed more than 16 MB`)));
        return;
      }
      into.push(chunk);
    };
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener('abort', abort);
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.on('error', (e: NodeJS.ErrnoException) =>
      finish(() => reject(new Error(e.code === 'ENOENT' ? `${path} is not installed` : `could not run ${path}: ${e.message}`))),
    );
    child.on('close', (code, signal) =>
      finish(() => resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') })),
    );
    if (options.nice && child.pid !== undefined && process.platform === 'linux') {
      try {
        setPriority(child.pid, BACKGROUND_NICE);
      } catch {
        // it has already exited
      }
    }
    // A process that exits without reading its input closes the pipe: that is its exit status's to explain.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? null);
  });
}

/** Why a run failed, for a message: how it ended and the last line it printed on stderr. */
export function toolFailure(res: ToolResult): string {
  const how = res.signal ? ` (killed by ${res.signal})` : res.code !== null && res.code !== 0 ? ` (exit status ${res.code})` : '';
  // The last line that says something; a tool's progress notes come before it.
  const said = res.stderr.split('\n').map((l) => l.trim()).filter(Boolean).at(-1);
  return `${how}${said ? `: ${cutChars(said, 200)}` : ''}`;
}
