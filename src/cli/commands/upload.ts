import type { Command } from 'commander';
import type { DocumentRecord } from '../api-types.js';
import type { Context } from '../context.js';
import { ApiError, CliError } from '../errors.js';
import type { ApiClient } from '../http.js';
import { isStderrTTY, notice, writeJson } from '../io.js';
import { ProgressBoard } from '../output/progress.js';
import { printTable } from '../output/table.js';
import { collectFiles, type LocalFile } from '../upload/collect-files.js';
import { multipartBody } from '../upload/multipart.js';
import { parseMetadata } from './projects/create.js';
import { defineCommand, intOption } from './shared/command.js';
import { resolveProject } from './shared/resolve-project.js';

/** The API accepts at most 20 `file` parts per request (ARCHITECTURE.md §3). */
export const BATCH_SIZE = 20;
const POLL_MS = 500;

export interface UploadOptions {
  paths: string[];
  project?: string;
  createProject: boolean;
  recursive: boolean;
  wait: boolean;
  timeoutMs: number;
  metadata?: Record<string, unknown>;
  json: boolean;
}

/** One local file's fate: the document the server made of it, or why it has none. */
interface Outcome {
  file: LocalFile;
  document?: DocumentRecord;
  error?: string;
}

/** Statuses a caller can report per file without a TTY: one plain line each. */
interface Reporter {
  uploading(i: number, fraction: number): void;
  uploaded(i: number, o: Outcome): void;
  processing(i: number, d: DocumentRecord): void;
  stop(): void;
}

function reporter(ctx: Context, files: LocalFile[], opts: UploadOptions): Reporter {
  if (isStderrTTY(ctx.io) && !opts.json) {
    const board = new ProgressBoard(ctx.io, files.map((f) => f.path));
    return {
      uploading: (i, f) => board.update(i, f, 'uploading'),
      uploaded: (i, o) => board.update(i, o.error ? 1 : opts.wait ? 0 : 1, o.error ? `failed: ${o.error}` : o.document!.duplicate ? `already uploaded (${o.document!.status})` : opts.wait ? 'queued' : 'uploaded'),
      processing: (i, d) => board.update(i, d.status === 'ready' || d.status === 'failed' ? 1 : (d.progress ?? 0), d.status === 'failed' ? `failed: ${d.error ?? 'unknown error'}` : d.status),
      stop: () => board.stop(),
    };
  }
  // Plain lines (pipes, CI logs); none in --json mode, whose only output is the final document.
  const say = (line: string) => !opts.json && notice(ctx.io, line);
  return {
    uploading: () => {},
    uploaded: (_i, o) =>
      say(o.error ? `${o.file.path}: upload failed: ${o.error}` : `${o.file.path}: ${o.document!.duplicate ? 'already uploaded' : 'uploaded'} as ${o.document!.id} (${o.document!.status})`),
    processing: (_i, d) => {
      if (d.status === 'ready') say(`${files[_i]!.path}: ready (${d.chunk_count ?? 0} chunks${d.warnings?.length ? `; ${d.warnings.join('; ')}` : ''})`);
      if (d.status === 'failed') say(`${files[_i]!.path}: failed: ${d.error ?? 'unknown error'}`);
    },
    stop: () => {},
  };
}

async function postBatch(http: ApiClient, files: LocalFile[], fields: Record<string, string>, onProgress: (i: number, sent: number) => void): Promise<DocumentRecord[]> {
  const mp = multipartBody(fields, files, onProgress);
  const res = await http.json<{ documents: DocumentRecord[] }>('POST', '/api/v1/upload', {
    body: mp.body,
    headers: { 'content-type': mp.contentType, 'content-length': String(mp.contentLength) },
  });
  if (!res || !Array.isArray(res.documents) || res.documents.length !== files.length) {
    throw new CliError(`the server answered the upload of ${files.length} file(s) with ${res?.documents?.length ?? 'no'} document(s)`);
  }
  return res.documents;
}

/** A rejection that belongs to one file (type, size, content), not to the request as a whole. */
const isPerFileRejection = (err: unknown): err is ApiError => err instanceof ApiError && [400, 413, 415, 422].includes(err.status);

/** The server's own message without our "POST /api/v1/upload: " prefix. */
const serverMessage = (err: ApiError): string => err.message.replace(/^POST \/api\/v1\/upload: /, '');

async function uploadAll(http: ApiClient, files: LocalFile[], fields: Record<string, string>, report: Reporter): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let start = 0; start < files.length; start += BATCH_SIZE) {
    const batch = files.slice(start, start + BATCH_SIZE);
    const progress = (i: number, sent: number) => report.uploading(start + i, batch[i]!.size ? sent / batch[i]!.size : 1);
    try {
      const docs = await postBatch(http, batch, fields, progress);
      docs.forEach((document, i) => {
        outcomes.push({ file: batch[i]!, document });
        report.uploaded(start + i, outcomes.at(-1)!);
      });
    } catch (err) {
      if (!isPerFileRejection(err)) throw err;
      if (batch.length === 1) {
        outcomes.push({ file: batch[0]!, error: serverMessage(err) });
        report.uploaded(start, outcomes.at(-1)!);
        continue;
      }
      // One bad file must not sink the batch: send each alone to learn which one the server refused.
      for (let i = 0; i < batch.length; i++) {
        let outcome: Outcome;
        try {
          const [document] = await postBatch(http, [batch[i]!], fields, (_j, sent) => progress(i, sent));
          outcome = { file: batch[i]!, document: document! };
        } catch (single) {
          if (!isPerFileRejection(single)) throw single;
          outcome = { file: batch[i]!, error: serverMessage(single) };
        }
        outcomes.push(outcome);
        report.uploaded(start + i, outcome);
      }
    }
  }
  return outcomes;
}

/** Polls each document until it is ready or failed (GET /api/v1/documents/{id}). */
async function waitForProcessing(ctx: Context, outcomes: Outcome[], report: Reporter, timeoutMs: number): Promise<void> {
  const http = ctx.http();
  const deadline = ctx.now() + timeoutMs;
  const pending = new Set(outcomes.flatMap((o, i) => (o.document && o.document.status !== 'ready' && o.document.status !== 'failed' ? [i] : [])));
  for (const i of outcomes.keys()) if (!pending.has(i) && outcomes[i]!.document) report.processing(i, outcomes[i]!.document!);
  while (pending.size > 0) {
    if (ctx.now() > deadline) {
      const names = [...pending].map((i) => outcomes[i]!.file.path).join(', ');
      throw new CliError(`gave up waiting after ${Math.round(timeoutMs / 1000)} s; still processing: ${names}`, undefined, 'check later with `docsearch documents list`, or raise --timeout');
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
    for (const i of [...pending]) {
      const d = await http.get<DocumentRecord>(`/api/v1/documents/${encodeURIComponent(outcomes[i]!.document!.id)}`);
      outcomes[i]!.document = { ...outcomes[i]!.document!, ...d };
      report.processing(i, d);
      if (d.status === 'ready' || d.status === 'failed') pending.delete(i);
    }
  }
}

export async function run(opts: UploadOptions, ctx: Context): Promise<void> {
  const { files, skipped } = await collectFiles(opts.paths, opts.recursive);
  for (const s of skipped) notice(ctx.io, `skipped ${s}`);
  if (files.length === 0) throw new CliError('nothing to upload: no PDF, DOCX or text files found', undefined, 'name files or folders (add --recursive for subfolders)');

  const http = ctx.http();
  const project = opts.project ? await resolveProject(ctx, opts.project, { offerCreate: true, create: opts.createProject }) : undefined;
  const fields: Record<string, string> = {};
  if (project) fields.project_id = project.id;
  if (opts.metadata) fields.metadata = JSON.stringify(opts.metadata);

  if (!opts.json) notice(ctx.io, `uploading ${files.length} file(s) to ${project ? `project ${project.name}` : 'your default project'} on ${http.baseUrl}`);
  const report = reporter(ctx, files, opts);
  let outcomes: Outcome[];
  try {
    outcomes = await uploadAll(http, files, fields, report);
    if (opts.wait) await waitForProcessing(ctx, outcomes, report, opts.timeoutMs);
  } finally {
    report.stop();
  }

  const failed = outcomes.filter((o) => o.error || o.document?.status === 'failed');
  const errorOf = (o: Outcome) => o.error ?? o.document?.error ?? 'failed';
  if (opts.json) {
    writeJson(ctx.io, {
      documents: outcomes.filter((o) => o.document).map((o) => ({ path: o.file.path, ...o.document })),
      failed: failed.map((o) => ({ path: o.file.path, document_id: o.document?.id ?? null, error: errorOf(o) })),
      skipped,
    });
  } else {
    printTable(ctx.io, {
      headers: ['FILE', 'DOCUMENT', 'STATUS', 'CHUNKS'],
      rows: outcomes.map((o) => [o.file.path, o.document?.id, o.error ? 'rejected' : o.document!.status, o.document?.status === 'ready' ? o.document.chunk_count : undefined]),
      now: ctx.now(),
    });
  }
  if (failed.length > 0) {
    throw new CliError(
      `${failed.length} of ${outcomes.length} file(s) failed: ${failed.map((o) => `${o.file.path} (${errorOf(o)})`).join('; ')}`,
      undefined,
      'fix or remove those files and upload them again; `docsearch documents show <id>` has details',
    );
  }
  if (!opts.json) notice(ctx.io, opts.wait ? `done: ${outcomes.length} file(s) ready to search` : `done: ${outcomes.length} file(s) queued; add --wait to wait until they are searchable`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('upload', {
    summary: 'upload PDF, DOCX and text files',
    description:
      'Upload files and folders (PDF, DOCX, plain text) to a project; other files are skipped with a note. Files stream from disk, up to 20 per request. ' +
      'With --wait, waits until each is processed and searchable. Exits non-zero if any file failed, naming each one.',
    examples: [
      'docsearch upload report.pdf',
      'docsearch upload docs/ --project handbook --wait',
      'docsearch upload ~/contracts --recursive --project contracts --create-project',
      `docsearch upload notes.txt --metadata '{"source":"wiki"}'`,
      'DOCSEARCH_URL=https://docs.example.com DOCSEARCH_TOKEN=dsk_... npx docsearch upload docs/ --project handbook --wait',
    ],
  })
    .argument('<paths...>', 'files or folders')
    .option('-p, --project <project>', 'project name or id (default: your default project)')
    .option('--create-project', 'create the project if it does not exist (never asks)')
    .option('-r, --recursive', 'include files in subfolders')
    .option('-w, --wait', 'wait until every file is processed (ready or failed)')
    .option('--timeout <seconds>', 'with --wait, give up after this many seconds', intOption('--timeout', 1, 86_400), 1800)
    .option('--metadata <json>', 'a JSON object stored with each document')
    .action((paths: string[], flags: { project?: string; createProject?: boolean; recursive?: boolean; wait?: boolean; timeout: number; metadata?: string }) =>
      runF(
        {
          paths,
          project: flags.project,
          createProject: Boolean(flags.createProject),
          recursive: Boolean(flags.recursive),
          wait: Boolean(flags.wait),
          timeoutMs: flags.timeout * 1000,
          metadata: parseMetadata(flags.metadata),
          json: Boolean(ctx.globals().json),
        },
        ctx,
      ),
    );
}
