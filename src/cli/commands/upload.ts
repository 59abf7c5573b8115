import type { Command } from 'commander';
import type { DocumentRecord } from '../api-types.js';
import type { Context } from '../context.js';
import { ApiError, CliError, UsageError } from '../errors.js';
import type { ApiClient } from '../http.js';
import { isStderrTTY, notice, terminalWidth, warn } from '../io.js';
import { emitJson } from '../output/json.js';
import { ProgressBoard } from '../output/progress.js';
import { printTable } from '../output/table.js';
import { wrap } from '../output/wrap.js';
import { collectFiles, type LocalFile } from '../upload/collect-files.js';
import { multipartBody } from '../upload/multipart.js';
import { planSync, sha256File, type SyncPlan } from '../upload/sync-plan.js';
import { listDocuments } from './documents/list.js';
import { parseMetadata } from './projects/create.js';
import { defineCommand, intOption } from './shared/command.js';
import { defaultProject, resolveProject } from './shared/resolve-project.js';

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
  /** Mirror one folder: send only new and changed files, each with its relative path. */
  sync: boolean;
  /** With sync: delete documents whose path is gone from the folder. */
  prune: boolean;
  json: boolean;
}

/** One local file's fate: the document the server made of it, or why it has none. */
interface Outcome {
  file: LocalFile;
  document?: DocumentRecord;
  error?: string;
}

/** What the person sees per file: redrawn bars on a terminal, one plain line per event elsewhere. */
interface Reporter {
  uploading(i: number, fraction: number): void;
  uploaded(i: number, o: Outcome): void;
  processing(i: number, d: DocumentRecord): void;
  stop(): void;
}

const settled = (d: DocumentRecord) => d.status === 'ready' || d.status === 'failed';

function reporter(ctx: Context, files: LocalFile[], opts: UploadOptions): Reporter {
  if (isStderrTTY(ctx.io) && !opts.json) {
    const board = new ProgressBoard(ctx.io, files.map((f) => f.path));
    const processing = (i: number, d: DocumentRecord) => {
      if (d.status === 'ready') board.update(i, 'done', 1, `ready (${d.chunk_count ?? 0} chunks)`);
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
      stop: () => board.stop(),
    };
  }
  // Plain lines (pipes, CI logs); none in --json mode, whose only output is the final document.
  const say = (line: string) => notice(ctx.io, line);
  return {
    uploading: () => {},
    uploaded: (_i, o) => say(o.error ? `${o.file.path}: rejected: ${o.error}` : `${o.file.path}: ${o.document!.duplicate ? 'already uploaded' : 'uploaded'} as ${o.document!.id} (${o.document!.status})`),
    processing: (i, d) => {
      if (d.status === 'ready') say(`${files[i]!.path}: ready (${d.chunk_count ?? 0} chunks${d.warnings?.length ? `; ${d.warnings.join('; ')}` : ''})`);
      if (d.status === 'failed') say(`${files[i]!.path}: failed: ${d.error ?? 'unknown error'}`);
    },
    stop: () => {},
  };
}

async function postBatch(http: ApiClient, files: LocalFile[], fields: Record<string, string>, withPaths: boolean, onProgress: (i: number, sent: number) => void): Promise<DocumentRecord[]> {
  const all = withPaths ? { ...fields, paths: JSON.stringify(files.map((f) => f.rel)) } : fields;
  const mp = multipartBody(all, files, onProgress);
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

async function uploadAll(http: ApiClient, files: LocalFile[], fields: Record<string, string>, withPaths: boolean, report: Reporter): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let start = 0; start < files.length; start += BATCH_SIZE) {
    const batch = files.slice(start, start + BATCH_SIZE);
    const progress = (i: number, sent: number) => report.uploading(start + i, batch[i]!.size ? sent / batch[i]!.size : 1);
    try {
      const docs = await postBatch(http, batch, fields, withPaths, progress);
      docs.forEach((document, i) => {
        outcomes.push({ file: batch[i]!, document });
        report.uploaded(start + i, outcomes.at(-1)!);
      });
    } catch (err) {
      if (!isPerFileRejection(err)) throw err;
      if (batch.length === 1) {
        outcomes.push({ file: batch[0]!, error: err.message });
        report.uploaded(start, outcomes.at(-1)!);
        continue;
      }
      // One bad file must not sink the batch: send each alone to learn which one the server refused.
      for (let i = 0; i < batch.length; i++) {
        let outcome: Outcome;
        try {
          const [document] = await postBatch(http, [batch[i]!], fields, withPaths, (_j, sent) => progress(i, sent));
          outcome = { file: batch[i]!, document: document! };
        } catch (single) {
          if (!isPerFileRejection(single)) throw single;
          outcome = { file: batch[i]!, error: single.message };
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
  const pending = new Set(outcomes.flatMap((o, i) => (o.document && !settled(o.document) ? [i] : [])));
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
      if (settled(d)) pending.delete(i);
    }
  }
}

/** Hashes the folder's files and compares them with the project's documents. */
async function syncPlan(ctx: Context, files: LocalFile[], projectId: string, prune: boolean): Promise<SyncPlan> {
  const documents = await listDocuments(ctx.http(), { project_id: projectId });
  const hashed = [];
  for (const f of files) hashed.push({ ...f, sha256: await sha256File(f.path) });
  return planSync(hashed, documents, prune);
}

/** "2 of 3 file(s) failed:" and then each file on its own line, wrapped and indented to the terminal. */
function failureMessage(ctx: Context, failed: Outcome[], total: number, unreadable: string[]): string {
  const width = terminalWidth(ctx.io);
  const lines: string[] = [];
  if (failed.length > 0) lines.push(`${failed.length} of ${total} file(s) failed:`);
  for (const o of failed) lines.push(...wrap(`${o.file.path}: ${o.error ?? o.document?.error ?? 'failed'}${o.document ? ` (document ${o.document.id})` : ''}`, width, '  ', '    '));
  if (unreadable.length > 0) lines.push(`${unreadable.length} file(s) or folder(s) could not be read:`);
  for (const u of unreadable) lines.push(...wrap(u, width, '  ', '    '));
  return lines.join('\n');
}

export async function run(opts: UploadOptions, ctx: Context): Promise<void> {
  if (opts.prune && !opts.sync) throw new UsageError('--prune only works with --sync', 'docsearch upload docs/ --sync --prune');
  if (opts.sync && opts.paths.length !== 1) throw new UsageError('--sync mirrors one folder: give exactly one', 'docsearch upload docs/ --sync --project handbook');
  const { files, skipped, unreadable } = await collectFiles(opts.paths, opts.recursive || opts.sync);
  for (const s of skipped) notice(ctx.io, `skipped ${s}`);
  for (const u of unreadable) notice(ctx.io, `skipped ${u}`);
  if (files.length === 0 && !opts.sync) {
    if (unreadable.length > 0) throw new CliError(failureMessage(ctx, [], 0, unreadable), undefined, 'check the permissions of those files and folders');
    throw new CliError('nothing to upload: no PDF, DOCX or text files found', undefined, 'name files or folders (add --recursive for subfolders)');
  }

  const http = ctx.http();
  const project = opts.project ? await resolveProject(ctx, opts.project, { offerCreate: true, create: opts.createProject }) : undefined;
  const fields: Record<string, string> = {};
  if (project) fields.project_id = project.id;
  if (opts.metadata) fields.metadata = JSON.stringify(opts.metadata);

  let plan: SyncPlan | undefined;
  let toSend = files;
  if (opts.sync) {
    const projectId = project?.id ?? (await defaultProject(ctx)).id;
    // A file that could not be read is not gone: pruning then would delete documents of files that still exist.
    const prune = opts.prune && unreadable.length === 0;
    if (opts.prune && !prune) warn(ctx.io, 'not pruning: some files or folders could not be read (listed above)');
    plan = await syncPlan(ctx, files, projectId, prune);
    toSend = [...plan.add, ...plan.replace];
    if (!opts.json) notice(ctx.io, `sync: ${plan.add.length} new, ${plan.replace.length} changed, ${plan.unchanged.length} unchanged, ${plan.remove.length} to delete`);
  }
  const where = project ? `project ${project.name}` : 'your default project';
  if (!opts.json && toSend.length > 0) notice(ctx.io, `uploading ${toSend.length} file(s) to ${where} on ${http.baseUrl}`);
  const report = reporter(ctx, toSend, opts);
  let outcomes: Outcome[] = [];
  try {
    outcomes = await uploadAll(http, toSend, fields, opts.sync, report);
    if (opts.wait) await waitForProcessing(ctx, outcomes, report, opts.timeoutMs);
  } finally {
    report.stop();
  }
  const removed: DocumentRecord[] = [];
  for (const { document } of plan?.remove ?? []) {
    await http.delete(`/api/v1/documents/${encodeURIComponent(document.id)}`);
    removed.push(document);
  }

  const failed = outcomes.filter((o) => o.error || o.document?.status === 'failed');
  if (opts.json) {
    await emitJson(ctx, {
      documents: outcomes.filter((o) => o.document).map((o) => ({ file: o.file.path, ...o.document })),
      failed: failed.map((o) => ({ path: o.file.path, document_id: o.document?.id ?? null, error: o.error ?? o.document?.error ?? 'failed' })),
      skipped,
      unreadable,
      ...(plan
        ? {
            sync: {
              added: plan.add.map((f) => f.rel),
              replaced: plan.replace.map((f) => f.rel),
              unchanged: plan.unchanged.map((f) => f.rel),
              removed: plan.remove.map((r) => ({ id: r.document.id, path: r.document.path, reason: r.reason })),
            },
          }
        : {}),
    });
  } else if (outcomes.length > 0) {
    printTable(ctx.io, {
      headers: ['FILE', 'DOCUMENT', 'STATUS', 'CHUNKS'],
      rows: outcomes.map((o) => [o.file.path, o.document?.id, o.error ? 'rejected' : o.document!.status, o.document?.status === 'ready' ? o.document.chunk_count : undefined]),
      now: ctx.now(),
    });
  }
  for (const d of removed) notice(ctx.io, `deleted ${d.path ?? d.filename} (${d.id})`);
  if (failed.length > 0 || unreadable.length > 0) {
    const withDoc = failed.find((o) => o.document);
    throw new CliError(
      failureMessage(ctx, failed, outcomes.length, unreadable),
      undefined,
      withDoc ? `fix those files and upload them again; \`docsearch documents show ${withDoc.document!.id}\` has details` : 'fix or remove those files and upload them again',
    );
  }
  if (opts.json) return;
  if (plan) notice(ctx.io, `done: ${plan.add.length} added, ${plan.replace.length} replaced, ${removed.length} deleted, ${plan.unchanged.length} unchanged${opts.wait || toSend.length === 0 ? '' : ' (still processing; add --wait to wait)'}`);
  else notice(ctx.io, opts.wait ? `done: ${outcomes.length} file(s) ready to search` : `done: ${outcomes.length} file(s) queued; add --wait to wait until they are searchable`);
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('upload', {
    summary: 'upload PDF, DOCX and text files',
    description:
      'Upload files and folders (PDF, DOCX, plain text) to a project; other files are skipped with a note, unreadable ones are named and make the exit code 1 once the rest is uploaded. ' +
      'Files stream from disk, up to 20 per request. With --wait, waits until each is processed and searchable. Exits non-zero if any file failed, naming each one.\n\n' +
      'With --sync the project mirrors one folder (subfolders included): each document remembers its path in the folder; unchanged files cost one hash and are not sent; ' +
      'a changed file replaces its old version, which leaves search exactly when the new one is ready (it stays if the new one fails); --prune deletes documents whose file is gone.',
    examples: [
      'docsearch upload report.pdf',
      'docsearch upload docs/ --project handbook --wait',
      'docsearch upload ~/contracts --recursive --project contracts --create-project',
      `docsearch upload notes.txt --metadata '{"source":"wiki"}'`,
      'DOCSEARCH_URL=https://docs.example.com DOCSEARCH_TOKEN=dsk_... npx docsearch upload docs/ --project handbook --sync --prune --wait',
    ],
  })
    .argument('<paths...>', 'files or folders')
    .option('-p, --project <project>', 'project name or id (default: your default project)')
    .option('--create-project', 'create the project if it does not exist (never asks)')
    .option('-r, --recursive', 'include files in subfolders')
    .option('-w, --wait', 'wait until every file is processed (ready or failed)')
    .option('--timeout <seconds>', 'with --wait, give up after this many seconds', intOption('--timeout', 1, 86_400), 1800)
    .option('--metadata <json>', 'a JSON object stored with each document')
    .option('--sync', 'mirror one folder: send only new and changed files (with their paths); changed ones replace their old version')
    .option('--prune', 'with --sync, delete documents whose file is gone from the folder')
    .action(
      (
        paths: string[],
        flags: { project?: string; createProject?: boolean; recursive?: boolean; wait?: boolean; timeout: number; metadata?: string; sync?: boolean; prune?: boolean },
      ) =>
        runF(
          {
            paths,
            project: flags.project,
            createProject: Boolean(flags.createProject),
            recursive: Boolean(flags.recursive),
            wait: Boolean(flags.wait),
            timeoutMs: flags.timeout * 1000,
            metadata: parseMetadata(flags.metadata),
            sync: Boolean(flags.sync),
            prune: Boolean(flags.prune),
            json: Boolean(ctx.globals().json),
          },
          ctx,
        ),
    );
}
