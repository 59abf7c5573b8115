import type { DocumentRecord } from '../api-types.js';
import { terminalSafe } from '../../core/unsafe-text.js';
import { canRedraw, type IO, notice } from '../../terminal/io.js';
import { count } from '../output/plural.js';
import { ProgressBoard } from '../output/progress.js';
import type { LocalFile } from './collect-files.js';

/** One local file's fate: the document the server made of it (or already held), or why it has none. */
export interface Outcome {
  file: LocalFile;
  document?: DocumentRecord;
  error?: string;
}

/** What the person sees per file: redrawn bars on a terminal, one plain line per event elsewhere. */
export interface Reporter {
  uploading(i: number, fraction: number): void;
  uploaded(i: number, o: Outcome): void;
  processing(i: number, d: DocumentRecord): void;
  /** A line about the whole run (lost contact, retrying), kept clear of the bars. */
  note(line: string): void;
  stop(): void;
}

export const settled = (d: DocumentRecord) => d.status === 'ready' || d.status === 'failed';

/** `files` are the rows: the files sent, then (for a sync with --wait) unchanged ones still processing. */
export function reporter(io: IO, files: LocalFile[], opts: { wait: boolean; json: boolean }): Reporter {
  if (canRedraw(io) && !opts.json) {
    const board = new ProgressBoard(io, files.map((f) => f.path));
    const processing = (i: number, d: DocumentRecord) => {
      if (d.status === 'ready') board.update(i, 'done', 1, `ready (${count(d.chunk_count ?? 0, 'chunk')})`);
      else if (d.status === 'failed') board.update(i, 'done', 1, 'failed (see below)');
      else board.update(i, 'processing', d.progress ?? 0, d.status);
    };
    return {
      uploading: (i, f) => board.update(i, 'uploading', f),
      uploaded: (i, o) => {
        if (o.error) board.update(i, 'done', 1, 'rejected (see below)');
        else if (!opts.wait || settled(o.document!)) board.update(i, 'done', 1, o.document!.duplicate ? `already uploaded (${o.document!.status})` : o.document!.status);
        else processing(i, o.document!);
      },
      processing,
      note: (line) => board.note(line),
      stop: () => board.stop(),
    };
  }
  // Plain lines (pipes, CI logs); none in --json mode, whose only output is the final document.
  const say = (line: string) => notice(io, line);
  return {
    uploading: () => {},
    uploaded: (_i, o) => say(o.error ? `${o.file.path}: rejected: ${o.error}` : `${o.file.path}: ${o.document!.duplicate ? 'already uploaded' : 'uploaded'} as ${o.document!.id} (${o.document!.status})`),
    processing: (i, d) => {
      if (d.status === 'ready') say(`${files[i]!.path}: ready (${count(d.chunk_count ?? 0, 'chunk')}${d.warnings?.length ? `; ${d.warnings.join('; ')}` : ''})`);
      if (d.status === 'failed') say(`${files[i]!.path}: failed: ${d.error ?? 'unknown error'}`);
    },
    note: (line) => io.stderr.write(`${terminalSafe(line)}\n`),
    stop: () => {},
  };
}
