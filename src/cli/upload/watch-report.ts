import type { DocumentRecord } from '../api-types.js';
import { errorJson } from '../../terminal/errors.js';
import { type IO, notice, warn } from '../../terminal/io.js';

/** What one pass of `upload --sync --watch` did, in the words of the `sync` summary of `--sync`. */
export interface PassCounts {
  new: number;
  changed: number;
  unchanged: number;
  deleted: number;
  failed: number;
  ignored: number;
}

export type Change =
  /** `unchanged`: a document given the labels or metadata the run asks, its file unchanged (said as `duplicate`). */
  | { kind: 'added' | 'replaced' | 'unchanged'; path: string; document: DocumentRecord }
  | { kind: 'deleted'; path: string; document: DocumentRecord; reason: 'pruned' | 'stale' | 'moved' }
  | { kind: 'rejected'; path: string; error: string };

/**
 * What `--watch` tells: one line per change on stderr, in the plain lines of the upload reporter ("path: what"); with
 * `--json`, one JSON object per line on stdout (`event` names it) for scripts and log shippers. Warnings (lost
 * contact, a refused delete) also go to stderr under `--json`, as every warning does.
 */
export interface WatchReport {
  /** The first pass is done and the folder is watched. */
  watching(folder: string, where: string): void;
  change(c: Change): void;
  /** A document a pass sent reached its final state: ready, or failed with the reason. */
  settled(path: string, document: DocumentRecord): void;
  /** The end of a pass that changed something (or the first pass). */
  synced(counts: PassCounts, first: boolean): void;
  /** The delete guard held: `paths` stay in the project (said once per distinct refusal). */
  refused(message: string, hint: string, paths: string[]): void;
  /** Contact lost (said once until it is back). */
  lost(url: string, why: string): void;
  back(url: string): void;
  /** A pass that could not finish for a local reason (a file or the folder changing under it); it runs again. */
  retrying(message: string): void;
  /** Files or folders a pass could not read (each said once). */
  unreadable(lines: string[]): void;
  /** Symbolic links that lead out of the folder, not followed (each said once). */
  outside(lines: string[]): void;
  /** Files a pass does not send, with why: an unsupported type, not a regular file (each said once). */
  skipped(lines: string[]): void;
  /** The watch ended: stopped by a signal, or by an error retrying cannot fix (which ends the command after this). */
  stopped(folder: string, by: { signal: NodeJS.Signals } | { error: unknown }): void;
}

export function watchReport(io: IO, json: boolean, now: () => number = Date.now): WatchReport {
  const said = new Set<string>();
  const fresh = (lines: string[]) => lines.filter((l) => !said.has(l) && said.add(l));
  // A refusal is told by the documents it holds, not its message: that counts the synced documents, so each file the
  // watch adds would make the same held delete "new" and say it again.
  const freshRefusal = (paths: string[]) => fresh([`delete refused:\0${[...paths].sort().join('\0')}`]).length > 0;
  if (json) {
    let began = false;
    const emit = (event: string, data: Record<string, unknown> = {}) => {
      began = true;
      io.stdout.write(`${JSON.stringify({ event, time: new Date(now()).toISOString(), ...data })}\n`);
    };
    const emitFresh = (event: string) => (lines: string[]) => {
      const news = fresh(lines);
      if (news.length > 0) emit(event, { paths: news });
    };
    return {
      watching: (folder) => emit('watching', { folder }),
      change: (c) =>
        c.kind === 'rejected'
          ? emit('rejected', { path: c.path, error: c.error })
          : emit(c.kind, {
              path: c.path,
              document_id: c.document.id,
              status: c.document.status,
              ...(c.kind === 'deleted' ? { reason: c.reason } : {}),
              // What the document the project already held now carries, as `upload --json` shows it.
              ...(c.kind !== 'deleted' && c.document.duplicate ? { duplicate: true, labels: c.document.labels, metadata: c.document.metadata } : {}),
            }),
      settled: (path, d) => emit(d.status, { path, document_id: d.id, ...(d.status === 'failed' ? { error: d.error } : { chunk_count: d.chunk_count }) }),
      synced: (counts) => emit('synced', { counts }),
      refused: (message, hint, paths) => {
        if (!freshRefusal(paths)) return;
        warn(io, `${message}: not deleting (${hint})`);
        emit('delete_refused', { message, paths });
      },
      lost: (url, why) => {
        warn(io, `lost contact with ${url} (${why}); retrying with backoff, changes are caught up when it answers`);
        emit('unreachable', { url, error: why });
      },
      back: (url) => emit('reconnected', { url }),
      retrying: (message) => emit('retrying', { message }),
      unreadable: emitFresh('unreadable'),
      outside: emitFresh('skipped'),
      skipped: emitFresh('skipped'),
      // An error before any line (a project not found) leaves stdout empty, as every command failing before its work does.
      stopped: (folder, by) => {
        if ('signal' in by) emit('stopped', { folder, signal: by.signal });
        else if (began) emit('stopped', { folder, error: errorJson(by.error) });
      },
    };
  }
  const say = (line: string) => notice(io, line);
  const skippedOnce = (lines: string[]) => {
    for (const l of fresh(lines)) say(`skipped ${l}`);
  };
  return {
    watching: (folder, where) => say(`watching ${folder} for changes, mirrored to ${where} (Ctrl-C to stop)`),
    change: (c) => {
      if (c.kind === 'rejected') return say(`${c.path}: rejected: ${c.error}`);
      if (c.kind === 'deleted') return say(`${c.path}: deleted ${c.document.id}${c.reason === 'moved' ? ' (its file moved; sent again at its new path)' : c.reason === 'stale' ? ' (an old version)' : ''}`);
      say(`${c.path}: ${c.document.duplicate ? 'already uploaded' : c.kind === 'added' ? 'added' : 'replaced'} as ${c.document.id} (${c.document.status})`);
    },
    settled: (path, d) => say(d.status === 'failed' ? `${path}: failed: ${d.error ?? 'no reason given'}` : `${path}: ready (${d.chunk_count ?? 0} chunk${d.chunk_count === 1 ? '' : 's'})`),
    synced: (n, first) => {
      if (!first && n.new + n.changed + n.deleted + n.failed === 0) return;
      say(`synced: ${n.new} added, ${n.changed} replaced, ${n.deleted} deleted, ${n.unchanged} unchanged${n.failed ? `, ${n.failed} failed` : ''}`);
    },
    refused: (message, hint, paths) => freshRefusal(paths) && warn(io, `${message}: not deleting (${hint})`),
    lost: (url, why) => warn(io, `lost contact with ${url} (${why}); retrying with backoff, changes are caught up when it answers`),
    back: (url) => say(`${url} answers again; caught up with the folder`),
    retrying: (message) => say(`${message}; trying again`),
    unreadable: skippedOnce,
    outside: skippedOnce,
    skipped: skippedOnce,
    // After Ctrl-C the interruption's own line says it (exit 130), after an error the error's.
    stopped: (folder, by) => 'signal' in by && by.signal !== 'SIGINT' && say(`stopped watching ${folder}`),
  };
}
