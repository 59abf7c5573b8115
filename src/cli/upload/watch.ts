import type { Stats } from 'node:fs';
import { extname, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, CliError, EXIT, InterruptedError } from '../../terminal/errors.js';
import { isTransient, UnreachableError } from '../http.js';
import { SUPPORTED_EXTENSIONS } from './collect-files.js';
import { IGNORE_FILE, type IgnoreRules, loadIgnoreRules } from './ignore-rules.js';
import type { WatchReport } from './watch-report.js';

export interface WatchOptions {
  folder: string;
  /** The server, as the lost-contact line names it. */
  baseUrl: string;
  /** Where the folder is mirrored, in words ("project handbook"), for the watching line. */
  where: () => string;
  report: WatchReport;
  /**
   * One sync pass: the folder as it is now against the project as it is now. The first may ask at, or stop on, the
   * delete guard; later ones refuse past it and go on. `signal` ends its requests when the watch stops.
   */
  pass: (first: boolean, signal: AbortSignal) => Promise<void>;
  /** Quiet time after the last change before a pass, and the longest a pass waits for a folder that keeps changing. */
  quietMs?: number;
  maxDelayMs?: number;
}

/** A save or a checkout is a burst of events; one pass follows each burst. */
const QUIET_MS = 300;
const MAX_DELAY_MS = 2_000;
/** Between tries while the server does not answer: short at first (a restart), then capped so catching up stays prompt. */
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;
/** A file is sent once its size has held still this long (a large copy in progress is not sent half-written). */
const WRITE_SETTLED_MS = 200;

/**
 * What a failed pass means: the server is away (retry, said once), a local hitch such as a file vanishing while it
 * was read or the folder missing for a moment (retry), or an error that retrying cannot fix (stop: a credential
 * refused, a project deleted, a bug). On the first pass only the server being away is retried.
 */
function classify(err: unknown, first: boolean): 'lost' | 'local' | 'fatal' {
  if (isTransient(err)) return 'lost';
  if (first || err instanceof ApiError || !(err instanceof CliError) || err.exitCode === EXIT.auth) return 'fatal';
  return 'local';
}

/**
 * Whether a path below the folder can change what a sync sends or says: a supported file, a folder, the ignore file,
 * or a new file of another type (the pass says it is skipped, as a one-off run does).
 */
const matters = (event: string, rel: string): boolean =>
  event === 'addDir' || event === 'unlinkDir' || event === 'add' || rel === IGNORE_FILE || SUPPORTED_EXTENSIONS.has(extname(rel).toLowerCase());

/**
 * Watches the folder (chokidar) and runs a full sync pass after each burst of changes. A pass always plans from the
 * folder and the project as they are — events only say when — so changes made while the server was away are caught
 * up by the first pass that reaches it, never replayed. SIGTERM ends it cleanly (exit 0, as a service manager
 * expects); SIGINT (Ctrl-C) ends it with exit 130, like every interrupted wait of the CLI.
 */
export async function watchFolder(o: WatchOptions): Promise<void> {
  const quietMs = o.quietMs ?? QUIET_MS;
  const maxDelayMs = o.maxDelayMs ?? MAX_DELAY_MS;
  const stop = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  let failure: unknown;
  let wakeUp: (() => void) | undefined;
  const wake = () => {
    wakeUp?.();
    wakeUp = undefined;
  };
  const halt = (signal: NodeJS.Signals) => {
    stoppedBy ??= signal;
    stop.abort();
    wake();
  };
  const onInt = () => halt('SIGINT');
  const onTerm = () => halt('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);

  let dirty = true;
  let burstSince: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    burstSince = undefined;
    dirty = true;
    wake();
  };
  const changed = () => {
    const now = Date.now();
    burstSince ??= now;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, Math.min(quietMs, burstSince + maxDelayMs - now)));
  };

  // Loaded only here: the rest of the CLI never pays for the watcher.
  const { watch } = await import('chokidar');
  let rules: IgnoreRules = await loadIgnoreRules(o.folder);
  const relOf = (p: string) => relative(o.folder, p).split(sep).join('/');
  const ignored = (p: string, stats?: Stats) => {
    const rel = relOf(p);
    if (rel === '' || rel === IGNORE_FILE) return false;
    return rules.ignores(rel) || ((stats === undefined || stats.isDirectory()) && rules.ignores(`${rel}/`));
  };
  // Links are not followed: one to a folder elsewhere (even `/`) would be watched whole. A pass judges each link
  // (collect-files.ts) and a new one is an event like any new file.
  const watcher = watch(o.folder, { ignoreInitial: true, ignored, followSymlinks: false, awaitWriteFinish: { stabilityThreshold: WRITE_SETTLED_MS, pollInterval: 50 } });
  watcher.on('all', (event, p) => {
    const rel = relOf(p);
    if (!matters(event, rel)) return;
    if (rel === IGNORE_FILE) {
      // New rules decide what the next pass sends; a bad ignore file stops that pass, which says why.
      void loadIgnoreRules(o.folder).then((r) => (rules = r), () => undefined).finally(changed);
    } else changed();
  });
  watcher.on('error', (err) => {
    const code = (err as NodeJS.ErrnoException).code;
    failure ??= new CliError(
      `cannot watch ${o.folder} (${code ?? (err as Error).message})`,
      undefined,
      code === 'ENOSPC' ? 'the system ran out of inotify watches: raise fs.inotify.max_user_watches (sysctl), or leave big folders out with .docsearchignore' : undefined,
    );
    stop.abort();
    wake();
  });

  let first = true;
  let lost = false;
  let backoff = FIRST_BACKOFF_MS;
  try {
    await Promise.race([new Promise<void>((resolve) => watcher.once('ready', () => resolve())), new Promise((resolve) => stop.signal.addEventListener('abort', resolve))]);
    while (!stop.signal.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => (wakeUp = resolve));
        continue;
      }
      dirty = false;
      try {
        await o.pass(first, stop.signal);
        if (first) o.report.watching(o.folder, o.where());
        if (lost) o.report.back(o.baseUrl);
        first = false;
        lost = false;
        backoff = FIRST_BACKOFF_MS;
      } catch (err) {
        if (stop.signal.aborted) break;
        const kind = classify(err, first);
        if (kind === 'fatal') {
          failure ??= err;
          break;
        }
        if (kind === 'lost' && !lost) o.report.lost(o.baseUrl, err instanceof UnreachableError ? err.why : String((err as ApiError).status));
        if (kind === 'local') o.report.retrying((err as Error).message);
        lost ||= kind === 'lost';
        dirty = true;
        await sleep(backoff, undefined, { signal: stop.signal }).catch(() => undefined);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    await watcher.close();
  }
  if (failure !== undefined) {
    o.report.stopped(o.folder, { error: failure });
    throw failure;
  }
  if (stoppedBy) o.report.stopped(o.folder, { signal: stoppedBy });
  if (stoppedBy === 'SIGINT') throw new InterruptedError(`stopped watching ${o.folder}`);
}
