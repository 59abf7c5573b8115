import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { type Command, InvalidArgumentError } from 'commander';
import { DOCUMENT, DOCUMENT_PAGE, type DocumentRecord, type Project } from '../api-types.js';
import type { Context } from '../context.js';
import { ApiError, CliError, errorJson, InterruptedError, UsageError } from '../../terminal/errors.js';
import { type ApiClient, isTransient, UnreachableError } from '../http.js';
import { canPrompt, interruptSignal, notice, terminalWidth, warn } from '../../terminal/io.js';
import { emitJson } from '../output/json.js';
import { count } from '../output/plural.js';
import { sayStopped } from '../output/stopped.js';
import { printTable } from '../output/table.js';
import { wrap } from '../output/wrap.js';
import { cannotRead, type Collected, collectFiles, type LocalFile, READ_FORMATS, unreadableFile } from '../upload/collect-files.js';
import { giveAsked, lacksAsked, sayDuplicates } from '../upload/duplicates.js';
import { IGNORE_FILE } from '../upload/ignore-rules.js';
import { multipartBody } from '../upload/multipart.js';
import { type Outcome, type Reporter, reporter, settled } from '../upload/reporter.js';
import { watchFolder } from '../upload/watch.js';
import { defaultMaxDelete, HashCache, movedAway, movedFields, planSync, pruned, sha256File, type SyncPlan, syncedPath } from '../upload/sync-plan.js';
import { collectLabel, parseLanguage, parseOcrLanguages } from '../upload/setting-flags.js';
import { type WatchReport, watchReport } from '../upload/watch-report.js';
import { listDocuments } from './documents/list.js';
import { elsewhereLine, foundElsewhere } from './upload-elsewhere.js';
import { parseMetadata } from './projects/create.js';
import { defineCommand, intOption } from './shared/command.js';
import { confirmDestructive } from '../../terminal/confirm.js';
import { defaultProject, findProject, listAllProjects, projectNotFound, resolveProject } from './shared/resolve-project.js';

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
  /** Label names put on every document of the run. */
  labels?: string[];
  /** The language its text is analysed in (ISO 639-1) and the OCR languages ("deu+eng"); unset: the project's. */
  language?: string;
  ocrLanguages?: string;
  /** Mirror one folder: send only new and changed files, each with its relative path. */
  sync: boolean;
  /** With sync: delete documents whose path is gone from the folder. */
  prune: boolean;
  /** With sync: the folder's files are kept below this path in the project (another folder's sync keeps out of it). */
  prefix?: string;
  /** With prune: stop when more documents would be deleted (default: half of those the sync covers). */
  maxDelete?: number;
  /** With prune: delete past the guard, or empty the project's synced documents from an empty folder. */
  force: boolean;
  /** Print what would be sent and deleted; change nothing. */
  dryRun: boolean;
  /** With sync: after the first pass, keep the project following the folder's changes until stopped. */
  watch?: boolean;
  json: boolean;
}

/** The path a file is kept at in the project, or none. */
type PathOf = (f: LocalFile) => string | undefined;

/** A sync's files carry their path in the project as `rel` (see syncPlan). */
const syncedAt: PathOf = (f) => f.rel;

/** A plain upload keeps a folder's files at their path in it, the folder's name first; files named directly keep none. */
const plainAt: PathOf = (f) => f.inFolder;

/**
 * One upload request, sent again (its body streamed afresh) when it fails in flight: the server takes the same bytes
 * at the same path in a project once, so the files a lost request delivered come back as the same documents.
 */
async function postBatch(
  http: ApiClient,
  files: LocalFile[],
  fields: Record<string, string>,
  pathOf: PathOf,
  onProgress: (i: number, sent: number) => void,
  signal?: AbortSignal,
): Promise<DocumentRecord[]> {
  const paths = files.map((f) => pathOf(f) ?? null);
  const all = paths.some((p) => p !== null) ? { ...fields, paths: JSON.stringify(paths) } : fields;
  const res = await http.retrying(() => {
    const mp = multipartBody(all, files, onProgress);
    return http.json('POST', '/api/v1/upload', {
      shape: DOCUMENT_PAGE,
      body: mp.body,
      headers: { 'content-type': mp.contentType, 'content-length': String(mp.contentLength) },
      signal,
    });
  }, signal);
  if (!res || !Array.isArray(res.documents) || res.documents.length !== files.length) {
    throw new CliError(`the server answered the upload of ${count(files.length, 'file')} with ${count(res?.documents?.length ?? 0, 'document')}`);
  }
  return res.documents;
}

/**
 * A rejection that belongs to one file (type, size, content), not to the request as a whole. A quota passed (507) is
 * the batch's sum: sent alone, the files that fit get in and the others are named, as a plain `docsearch upload` of
 * each would have it.
 */
const isPerFileRejection = (err: unknown): err is ApiError => err instanceof ApiError && [400, 413, 415, 422, 507].includes(err.status);

/** The requests of a run: consecutive files sent with the same form fields, at most BATCH_SIZE in each. */
function batches(files: LocalFile[], fieldsOf: (f: LocalFile) => Record<string, string>): Array<{ start: number; batch: LocalFile[]; fields: Record<string, string> }> {
  const out: Array<{ start: number; batch: LocalFile[]; fields: Record<string, string> }> = [];
  files.forEach((f, i) => {
    const fields = fieldsOf(f);
    const last = out.at(-1);
    if (last && last.batch.length < BATCH_SIZE && isDeepStrictEqual(last.fields, fields)) last.batch.push(f);
    else out.push({ start: i, batch: [f], fields });
  });
  return out;
}

/** Sends `files` batch by batch, each file's fate pushed to `outcomes` as it settles (a run stopped later still reports it). */
async function uploadAll(
  http: ApiClient,
  files: LocalFile[],
  fieldsOf: (f: LocalFile) => Record<string, string>,
  pathOf: PathOf,
  report: Reporter,
  outcomes: Outcome[],
  signal?: AbortSignal,
): Promise<void> {
  for (const { start, batch, fields } of batches(files, fieldsOf)) {
    signal?.throwIfAborted();
    const progress = (i: number, sent: number) => report.uploading(start + i, batch[i]!.size ? sent / batch[i]!.size : 1);
    const settle = (i: number, outcome: Outcome) => {
      outcomes.push(outcome);
      report.uploaded(start + i, outcome);
    };
    const oneByOne = async (gone: Map<number, string>) => {
      for (let i = 0; i < batch.length; i++) {
        const vanished = gone.get(i);
        if (vanished) {
          settle(i, { file: batch[i]!, error: vanished });
          continue;
        }
        try {
          const [document] = await postBatch(http, [batch[i]!], fields, pathOf, (_j, sent) => progress(i, sent), signal);
          settle(i, { file: batch[i]!, document: document! });
        } catch (single) {
          if (!isPerFileRejection(single)) throw single;
          settle(i, { file: batch[i]!, error: single.message });
        }
      }
    };
    // A file gone since it was listed fails alone (named, exit 1), not the whole run: its batch goes file by file.
    const gone = await goneFiles(batch);
    if (gone.size > 0) {
      await oneByOne(gone);
      continue;
    }
    try {
      const docs = await postBatch(http, batch, fields, pathOf, progress, signal);
      docs.forEach((document, i) => settle(i, { file: batch[i]!, document }));
    } catch (err) {
      if (!isPerFileRejection(err)) throw err;
      if (batch.length === 1) settle(0, { file: batch[0]!, error: err.message });
      // One bad file must not sink the batch: send each alone to learn which one the server refused.
      else await oneByOne(new Map());
    }
  }
}

/** The files of a batch that cannot be read any more (index → why), looked at just before it is sent. */
async function goneFiles(batch: LocalFile[]): Promise<Map<number, string>> {
  const gone = new Map<number, string>();
  for (const [i, f] of batch.entries()) {
    await access(f.path, constants.R_OK).catch(async (err: unknown) => gone.set(i, await unreadableFile(f.path, err)));
  }
  return gone;
}

/** How long `--wait` keeps asking a server that stopped answering (a restart, a network blip) before giving up. */
const RETRY_FOR_MS = 60_000;
const MAX_BACKOFF_MS = 8_000;

/** Sleeps `ms`, or less when `signal` (Ctrl-C) fires first. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** The documents still processing, one per line with its id: what goes on on the server without the CLI. */
const stillProcessing = (outcomes: Outcome[], pending: Set<number>): string =>
  [...pending].map((i) => `  ${outcomes[i]!.file.path} (${outcomes[i]!.document!.id})`).join('\n');

/** Why a poll failed when the server held it past the wait's deadline. */
const NO_ANSWER = 'no answer';

const FOLLOW_HINT = 'follow them with `docsearch documents list --status processing` (or `docsearch documents show ID`)';

/**
 * Polls each document until it is ready or failed (GET /api/v1/documents/{id}); `outcomes[i]` is the reporter's row i.
 * The files are on the server already, so a server that stops answering (a restart) is asked again with backoff for
 * up to a minute, said once; after that, and on Ctrl-C, it names what is still processing there and how to follow it.
 */
async function waitForProcessing(ctx: Context, outcomes: Outcome[], report: Reporter, timeoutMs: number, interrupt: AbortSignal): Promise<void> {
  const http = ctx.http();
  const deadline = ctx.now() + timeoutMs;
  const pending = new Set(outcomes.flatMap((o, i) => (o.document && !settled(o.document) ? [i] : [])));
  let lostSince: number | undefined;
  let askedAt = ctx.now();
  let backoff = POLL_MS;
  while (pending.size > 0) {
    const interrupted = () =>
      new InterruptedError(`stopped waiting; ${count(pending.size, 'document')} still processing, which ${pending.size === 1 ? 'continues' : 'continue'} on the server:\n${stillProcessing(outcomes, pending)}`, FOLLOW_HINT);
    if (interrupt.aborted) throw interrupted();
    if (ctx.now() > deadline) {
      const unreachable = lostSince === undefined ? '' : ` (${http.baseUrl} has not answered for ${Math.round((ctx.now() - lostSince) / 1000)} s)`;
      throw new CliError(`gave up waiting after ${Math.round(timeoutMs / 1000)} s${unreachable}; still processing on the server:\n${stillProcessing(outcomes, pending)}`, undefined, `${FOLLOW_HINT}, or raise --timeout`, 'timeout');
    }
    await pause(lostSince === undefined ? POLL_MS : backoff, interrupt);
    if (interrupt.aborted) throw interrupted();
    try {
      for (const i of [...pending]) {
        // Not asked again by the client: this loop rides through lost contact itself, saying what is on the server.
        // A server that holds the request without answering (hung, stopped) must not outlast --timeout.
        // (The timer is held here and read in the catch: AbortSignal.any holds its sources weakly, and a timer only it
        // knew could be collected before it fired.)
        askedAt = ctx.now();
        const late = AbortSignal.timeout(Math.max(deadline - askedAt, 1000));
        const poll = AbortSignal.any([interrupt, late]);
        const d = await http.get(`/api/v1/documents/${encodeURIComponent(outcomes[i]!.document!.id)}`, { signal: poll, retry: false, shape: DOCUMENT }).catch((err: unknown) => {
          if (interrupt.aborted || !late.aborted) throw err;
          throw new UnreachableError(`${http.baseUrl} did not answer`, NO_ANSWER);
        });
        outcomes[i]!.document = { ...outcomes[i]!.document!, ...d };
        report.processing(i, d);
        if (settled(d)) pending.delete(i);
      }
      if (lostSince !== undefined && !ctx.io.quiet) report.note(`${http.baseUrl} answers again; still waiting`);
      lostSince = undefined;
      backoff = POLL_MS;
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw interrupted();
      if (!isTransient(err)) throw err;
      const why = err instanceof UnreachableError ? err.why : `${(err as ApiError).status}`;
      if (lostSince === undefined) {
        // A request held unanswered: the server has been silent since it was asked.
        lostSince = err instanceof UnreachableError && err.why === NO_ANSWER ? askedAt : ctx.now();
        report.note(
          `warning: lost contact with ${http.baseUrl} (${why}); ${pending.size === 1 ? 'the file still processing is' : `the ${pending.size} files still processing are`} already on the server. Retrying for up to ${RETRY_FOR_MS / 1000} s…`,
        );
      } else if (ctx.now() - lostSince >= RETRY_FOR_MS) {
        throw new CliError(
          `could not reach ${http.baseUrl} for ${Math.round((ctx.now() - lostSince) / 1000)} s while waiting (${why}). The server had accepted the files; still processing there when it stopped answering:\n${stillProcessing(outcomes, pending)}`,
          undefined,
          `once the server is back, ${FOLLOW_HINT}`,
          'unreachable',
        );
      }
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

/**
 * Hashes the folder's files (through `hashes` when a watch keeps them) and compares them with the project's
 * documents (none for a project not made yet).
 */
async function syncPlan(
  ctx: Context,
  files: LocalFile[],
  projectId: string | undefined,
  prune: boolean,
  prefix: string | undefined,
  hashes?: HashCache,
): Promise<{ plan: SyncPlan; unreadable: string[] }> {
  const documents = projectId ? await listDocuments(ctx.http(), { project_id: projectId }) : [];
  const hashed = [];
  // A file gone since the folder was listed (or unreadable now) is named as one that could not be read, and the
  // rest is synced; nothing is pruned then, as when it could not be read at listing.
  const unreadable: string[] = [];
  for (const f of files) {
    try {
      hashed.push({ ...f, rel: syncedPath(f.rel, prefix), sha256: await (hashes ? hashes.sha256(f.path) : sha256File(f.path)) });
    } catch (err) {
      if (!(err as NodeJS.ErrnoException).syscall) throw err;
      unreadable.push(await cannotRead(f.path, err));
    }
  }
  hashes?.retain(files.map((f) => f.path));
  return { plan: planSync(hashed, documents, prune && unreadable.length === 0, prefix), unreadable };
}

/**
 * Deletes documents in turn, each added to `deleted` once gone (a run stopped later still reports it); one already
 * gone (a sync of the same folder running at the same time got there first) counts as deleted.
 */
async function deleteDocuments(http: ApiClient, documents: DocumentRecord[], deleted: Set<string>, signal?: AbortSignal): Promise<void> {
  for (const document of documents) {
    await http.delete(`/api/v1/documents/${encodeURIComponent(document.id)}`, { signal }).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    });
    deleted.add(document.id);
  }
}

/**
 * The delete guard of `--sync --prune`: an empty folder (a missing mount) or one that would delete more than
 * --max-delete of the documents the sync covers (a wrong or mistyped folder, another folder's sync) stops before
 * anything is sent. A person at a terminal is asked; elsewhere it is a usage error naming --force. A dry run warns.
 */
async function checkDeletes(ctx: Context, opts: UploadOptions, plan: SyncPlan, fileCount: number, projectName: string): Promise<void> {
  const problem = deleteProblem(opts, plan, fileCount, projectName);
  if (!problem) return;
  if (opts.dryRun) return warn(ctx.io, `${problem.message}: a real run would stop here (${problem.hint})`);
  if (!canPrompt(ctx.io)) throw new UsageError(`${problem.message}: stopped, nothing was changed`, problem.hint);
  const deletes = pruned(plan).length;
  await confirmDestructive(ctx.io, { action: `delete ${deletes} of the ${plan.synced} synced documents of project ${projectName}`, consequence: problem.message }, false);
}

/** What the delete guard holds against the plan (see checkDeletes), or nothing. */
function deleteProblem(opts: UploadOptions, plan: SyncPlan, fileCount: number, projectName: string): { message: string; hint: string } | undefined {
  const deletes = pruned(plan).length;
  if (!opts.prune || opts.force || deletes === 0) return undefined;
  const max = opts.maxDelete ?? defaultMaxDelete(plan.synced);
  const folder = opts.paths[0]!;
  let problem: { message: string; hint: string } | undefined;
  if (fileCount === 0) {
    problem = {
      message: `${folder} has no files to sync, so --prune would delete all ${count(deletes, 'synced document')} of project ${projectName}`,
      hint: `check the folder (is a mount or checkout missing? does ${IGNORE_FILE} leave everything out?); to empty the project anyway add --force`,
    };
  } else if (deletes > max) {
    problem = {
      message: `--prune would delete ${deletes} of the ${plan.synced} synced documents of project ${projectName}, more than --max-delete ${max}`,
      hint: `check that ${folder} is the folder this project mirrors (two folders in one project need --prefix); to delete them anyway add --force or raise --max-delete`,
    };
  }
  return problem;
}

const isFailed = (o: Outcome) => Boolean(o.error) || o.document?.status === 'failed';
const failedEntry = (o: Outcome) => ({ path: o.file.path, document_id: o.document?.id ?? null, error: o.error ?? o.document?.error ?? 'failed' });

/** "2 of 3 file(s) failed:" and then each file on its own line, wrapped and indented to the terminal. */
function failureMessage(ctx: Context, failed: Outcome[], total: number, unreadable: string[]): string {
  const width = terminalWidth(ctx.io);
  const lines: string[] = [];
  if (failed.length > 0) lines.push(`${failed.length} of ${count(total, 'file')} failed:`);
  for (const o of failed) lines.push(...wrap(`${o.file.path}: ${o.error ?? o.document?.error ?? 'failed'}${o.document ? ` (document ${o.document.id})` : ''}`, width, '  ', '    '));
  if (unreadable.length > 0) lines.push(`${unreadable.length} ${unreadable.length === 1 ? 'file or folder' : 'files or folders'} could not be read:`);
  for (const u of unreadable) lines.push(...wrap(u, width, '  ', '    '));
  return lines.join('\n');
}

/** Why nothing was sent, with the hint that fits: --recursive only where subfolders were left out. */
function nothingToUpload(unsupported: number, subfolders: number): CliError {
  const types = `docsearch reads ${READ_FORMATS}: convert the file to one of them first`;
  if (subfolders > 0) return new CliError('nothing to upload: no documents docsearch reads found', undefined, `add --recursive to include subfolders${unsupported > 0 ? `; ${types}` : ''}`);
  if (unsupported > 0) return new CliError(`nothing to upload: ${unsupported === 1 ? 'that file type is' : 'those file types are'} not supported`, undefined, types);
  return new CliError('nothing to upload: no documents docsearch reads found', undefined, 'name files, or folders that hold some');
}

/** Checks the flags against each other and the one folder --sync mirrors; returns nothing or throws a usage error. */
async function checkFlags(opts: UploadOptions): Promise<void> {
  const example = 'docsearch upload docs/ --sync --prune --project handbook';
  if (opts.prune && !opts.sync) throw new UsageError('--prune only works with --sync', example);
  if (opts.prefix !== undefined && !opts.sync) throw new UsageError('--prefix only works with --sync', 'docsearch upload docs/ --sync --prefix handbook');
  if ((opts.maxDelete !== undefined || opts.force) && !opts.prune) throw new UsageError(`${opts.force ? '--force' : '--max-delete'} only works with --sync --prune`, example);
  if (opts.watch && !opts.sync) throw new UsageError('--watch keeps a --sync running: add --sync', 'docsearch upload notes/ --sync --prune --watch --project notes');
  if (opts.watch && (opts.dryRun || opts.wait)) throw new UsageError(`--watch runs until stopped, so it cannot be combined with ${opts.dryRun ? '--dry-run' : '--wait'}`, 'follow processing with `docsearch documents list --status processing`');
  if (!opts.sync) return;
  if (opts.paths.length !== 1) throw new UsageError(`--sync mirrors one folder: give exactly one (got ${opts.paths.length})`, example);
  const folder = opts.paths[0]!;
  const s = await stat(folder).catch(() => undefined);
  if (!s) throw new UsageError(`cannot read ${folder}: no such folder`, 'check the path (a typo? a checkout step that did not run?)');
  if (!s.isDirectory()) throw new UsageError(`--sync mirrors a folder, and ${folder} is a file`, 'upload single files without --sync, or sync the folder that holds them');
}

/**
 * The warning of a sync (without --prefix) of a folder whose files the project holds where a plain upload of it keeps
 * them (`notes/a.md` for `a.md`): this sync keeps them at `a.md` instead, so it would move them (with --prune), or
 * leave their old versions at `notes/…` as they change; `--prefix notes` syncs them where they are.
 */
function plainlyUploaded(plan: SyncPlan, opts: UploadOptions): string | undefined {
  if (opts.prefix !== undefined) return undefined;
  const held = [...plan.unchanged.map((u) => ({ file: u.file, document: u.document })), ...[...plan.add, ...plan.replace].flatMap((f) => (plan.moves.has(f.rel) ? [{ file: f, document: plan.moves.get(f.rel)! }] : []))];
  const there = held.filter((h) => h.file.inFolder !== undefined && h.file.inFolder !== h.file.rel && h.document.path === h.file.inFolder);
  if (there.length === 0) return undefined;
  const name = there[0]!.file.inFolder!.slice(0, -there[0]!.file.rel.length - 1);
  return (
    `the project holds ${count(there.length, 'file')} of ${opts.paths[0]} at ${name}/…, where a plain upload of the folder keeps them; ` +
    `this sync keeps its files at their path below the folder (${there[0]!.file.rel}): add --prefix ${name} to sync them where they are`
  );
}

/**
 * A plain upload's files whose bytes the project already held at another path (a sync of the folder, another folder):
 * the server answered with that document, which keeps its own path, so `--path` finds them there.
 */
function sayKeptElsewhere(ctx: Context, outcomes: Outcome[]): void {
  for (const { file, document: d } of outcomes) {
    const at = plainAt(file);
    if (d?.duplicate && at !== undefined && d.path !== at) notice(ctx.io, `${file.path}: the project already holds these bytes${d.path ? ` at ${d.path}` : ' without a path'} (${d.id}), which keeps its path`);
  }
}

/** How the sync line counts the unchanged files whose documents get the labels or metadata asked (see lacksAsked). */
const refreshNote = (n: number) => (n > 0 ? ` (${n} to be given the labels or metadata asked)` : '');

/** The --dry-run report on stdout: what a real run would send and delete (unchanged files only counted). */
function printPlan(ctx: Context, toSend: LocalFile[], refresh: LocalFile[], plan: SyncPlan | undefined): void {
  // A plain upload: each file as given, and the path it is kept at in the project (none for a file named directly).
  if (!plan) return printTable(ctx.io, { headers: ['ACTION', 'FILE', 'PATH'], rows: toSend.map((f) => ['upload', f.path, plainAt(f)]), now: ctx.now() });
  const rows = [
    ...plan.add.map((f) => ['new', f.rel, undefined]),
    ...plan.replace.map((f) => ['changed', f.rel, undefined]),
    // Unchanged files whose documents would get the labels or metadata the run asks.
    ...refresh.map((f) => ['update', f.rel, undefined]),
    ...plan.remove
      .map((r) => [{ pruned: 'delete', stale: 'delete old', moved: 'delete moved' }[r.reason], r.document.path ?? r.document.filename, r.document.id])
      .sort((x, y) => x[1]!.localeCompare(y[1]!)),
  ];
  printTable(ctx.io, { headers: ['ACTION', 'PATH', 'DOCUMENT'], rows, now: ctx.now() });
}

/** The project to upload to (the default one without --project); with --dry-run a missing one is not created. */
async function targetProject(ctx: Context, opts: UploadOptions): Promise<{ project: Project | undefined; missing: boolean }> {
  if (!opts.project) return { project: await defaultProject(ctx), missing: false };
  if (!opts.dryRun) return { project: await resolveProject(ctx, opts.project, { offerCreate: true, create: opts.createProject }), missing: false };
  const found = findProject(await listAllProjects(ctx.http()), opts.project);
  if (!found && !opts.createProject) throw projectNotFound(opts.project, ctx.http().baseUrl, 'add --create-project to create it');
  return { project: found, missing: !found };
}

/** --dry-run: the plan on stdout (or as JSON), nothing sent or deleted; files of the folder already failed still fail it. */
async function reportDryRun(
  ctx: Context,
  opts: UploadOptions,
  p: { toSend: LocalFile[]; refresh: LocalFile[]; plan: SyncPlan | undefined; kept: Outcome[]; missing: boolean; projectId: string | undefined; where: string; collected: Collected },
): Promise<void> {
  const { skipped, unreadable, ignored, files } = p.collected;
  const failedBefore = p.kept.filter(isFailed);
  if (opts.json) {
    await emitJson(ctx, {
      dry_run: true,
      project: p.missing ? null : (p.projectId ?? null),
      would_upload: p.toSend.map((f) => f.path),
      // Each file's path in the project (null: none), keyed by the file as given.
      paths: Object.fromEntries(p.toSend.map((f) => [f.path, (p.plan ? syncedAt(f) : plainAt(f)) ?? null])),
      // Unchanged files whose documents would get the labels or metadata asked (no bytes sent).
      would_update: p.refresh.map((f) => f.path),
      failed: failedBefore.map(failedEntry),
      skipped,
      unreadable,
      ...(p.plan ? { sync: syncSummary(p.plan, null, failedBefore.length, ignored) } : {}),
    });
  } else {
    if (p.missing) notice(ctx.io, `would create project ${opts.project}`);
    printPlan(ctx, p.toSend, p.refresh, p.plan);
    const update = p.refresh.length > 0 ? `, give ${count(p.refresh.length, 'document')} the labels or metadata asked` : '';
    notice(ctx.io, `dry run: would upload ${count(p.toSend.length, 'file')} to ${p.missing ? `project ${opts.project}` : p.where}${update}${p.plan ? ` and delete ${count(p.plan.remove.length, 'document')}` : ''}; nothing was changed`);
  }
  if (failedBefore.length > 0 || unreadable.length > 0) throw new CliError(failureMessage(ctx, failedBefore, files.length, unreadable), undefined, 'fix or remove those files');
}

/** The form fields every upload request of a run carries: the project (when one was named), the metadata and the labels. */
function uploadFields(opts: UploadOptions, project: Project | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  if (opts.project && project) fields.project_id = project.id;
  if (opts.metadata) fields.metadata = JSON.stringify(opts.metadata);
  if (opts.labels && opts.labels.length > 0) fields.labels = JSON.stringify(opts.labels);
  if (opts.language) fields.language = opts.language;
  if (opts.ocrLanguages) fields.ocr_languages = opts.ocrLanguages;
  return fields;
}

interface WatchTarget {
  project: Project | undefined;
  name: string;
  fields: Record<string, string>;
}

/**
 * One pass of `--sync --watch`: the same plan and delete guard as `--sync`. The first pass asks at the guard on a
 * terminal and stops elsewhere, as `--sync` does; a later one (nobody to ask) keeps what the guard protects, says so,
 * and still sends what changed. A moved file's old document goes first (see movedAway); each change is a line.
 */
async function watchPass(
  ctx: Context,
  opts: UploadOptions,
  target: WatchTarget,
  hashes: HashCache,
  report: WatchReport,
  pass: { first: boolean; signal: AbortSignal },
): Promise<void> {
  const { first, signal } = pass;
  const http = ctx.http();
  const { files, unreadable, ignored, outside, skipped } = await collectFiles(opts.paths, true);
  report.outside(outside);
  report.skipped(skipped);
  // A file that could not be read is not gone: pruning then would delete documents of files that still exist.
  const listed = await syncPlan(ctx, files, target.project?.id, opts.prune && unreadable.length === 0, opts.prefix, hashes);
  const plan = listed.plan;
  unreadable.push(...listed.unreadable);
  report.unreadable(unreadable);
  const prune = opts.prune && unreadable.length === 0;
  let removals = plan.remove;
  const plain = first ? plainlyUploaded(plan, opts) : undefined;
  if (plain) warn(ctx.io, plain);
  if (first) await checkDeletes(ctx, { ...opts, prune }, plan, files.length, target.name);
  else {
    const problem = deleteProblem({ ...opts, prune }, plan, files.length, target.name);
    if (problem) {
      report.refused(problem.message, problem.hint, pruned(plan).map((r) => r.document.path ?? r.document.filename));
      // A moved file's old document stays too: its bytes sent again are answered with it ("already uploaded"). One
      // whose path stays in the folder still goes (see rehomeHeldBytes): it is not what the guard protects.
      removals = removals.filter((r) => r.reason === 'stale' || plan.rehomed.has(r.document.id));
    }
  }
  const deleted = async (rs: SyncPlan['remove']) => {
    for (const r of rs) {
      await deleteDocuments(http, [r.document], new Set(), signal);
      report.change({ kind: 'deleted', path: r.document.path ?? r.document.filename, document: r.document, reason: r.reason });
    }
  };
  await deleted(removals.filter((r) => r.reason === 'moved'));
  for (const f of await foundElsewhere(http, plan.add, target.project?.id)) warn(ctx.io, elsewhereLine(f));
  const refresh = plan.unchanged.filter((u) => lacksAsked(u.document, opts)).map((u) => ({ file: u.file, document: u.document }));
  const changed = plan.add.length + plan.replace.length;
  const kind = (i: number) => (i < plan.add.length ? 'added' : i < changed ? 'replaced' : 'unchanged');
  const rows: Reporter = {
    uploading: () => {},
    uploaded: (i, o) => report.change(o.error ? { kind: 'rejected', path: o.file.rel, error: o.error } : { kind: kind(i), path: o.file.rel, document: o.document! }),
    processing: () => {},
    note: () => {},
    stop: () => {},
  };
  const outcomes: Outcome[] = [];
  await uploadAll(http, [...plan.add, ...plan.replace], movedFields(plan, target.fields, opts), syncedAt, rows, outcomes, signal);
  await giveAsked(http, refresh, opts, (o) => {
    rows.uploaded(outcomes.length, o);
    outcomes.push(o);
  }, signal);
  sayDuplicates(ctx.io, opts, outcomes.map((o) => ({ path: o.file.rel, document: o.document })));
  const pending = outcomes.flatMap((o) => (o.document && !o.document.duplicate && !settled(o.document) ? [{ path: o.file.rel, id: o.document.id }] : []));
  void reportSettled(http, pending, report, signal);
  await deleted(removals.filter((r) => r.reason !== 'moved'));
  const counts = { new: plan.add.length, changed: plan.replace.length, unchanged: plan.unchanged.length, deleted: removals.length, ignored: ignored.length };
  report.synced({ ...counts, failed: outcomes.filter(isFailed).length }, first);
}

/** How often `--watch` asks after the documents a pass sent until each is ready or failed (or gone). */
const SETTLE_POLL_MS = 1000;

/** One poll's wait; it keeps no process alive (the watch ends when stopped). */
const settlePoll = () => new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS).unref());

/**
 * Says each sent document's final state once the server has it (ready, or failed with the reason), while the watch
 * goes on: a file that fails must not pass for uploaded. Ends with the watch; a document deleted meanwhile is dropped.
 */
async function reportSettled(http: ApiClient, pending: { path: string; id: string }[], report: WatchReport, signal: AbortSignal): Promise<void> {
  let left = pending;
  while (left.length > 0 && !signal.aborted) {
    await settlePoll();
    const next: typeof left = [];
    for (const p of left) {
      let doc: DocumentRecord;
      try {
        doc = await http.get(`/api/v1/documents/${encodeURIComponent(p.id)}`, { signal, shape: DOCUMENT });
      } catch (err) {
        // Deleted meanwhile: nothing to say; the server away: ask again next round.
        if (!(err instanceof ApiError && err.status === 404)) next.push(p);
        continue;
      }
      if (settled(doc)) report.settled(p.path, doc);
      else next.push(p);
    }
    left = next;
  }
}

/** `--sync --watch`: a first pass, then one after each burst of changes, until stopped (upload/watch.ts says when). */
async function watchSync(parent: Context, opts: UploadOptions): Promise<void> {
  // A pass's requests are not asked again one by one: the watch retries whole passes, for as long as it runs.
  const client = parent.http().withoutRetry();
  const ctx: Context = { ...parent, http: () => client };
  const hashes = new HashCache();
  const report = watchReport(ctx.io, opts.json, ctx.now);
  let target: WatchTarget | undefined;
  await watchFolder({
    folder: opts.paths[0]!,
    baseUrl: ctx.http().baseUrl,
    where: () => (opts.project ? `project ${target?.name}` : 'your default project'),
    report,
    pass: async (first, signal) => {
      if (!target) {
        const { project } = await targetProject(ctx, opts);
        target = { project, name: project?.name ?? opts.project ?? 'default', fields: uploadFields(opts, project) };
      }
      await watchPass(ctx, opts, target, hashes, report, { first, signal });
    },
  });
}

export async function run(opts: UploadOptions, ctx: Context): Promise<void> {
  await checkFlags(opts);
  if (opts.watch) return watchSync(ctx, opts);
  const { files, skipped, unreadable, ignored, outside, unsupported = 0, subfolders = 0 } = await collectFiles(opts.paths, opts.recursive || opts.sync);
  for (const s of skipped) notice(ctx.io, `skipped ${s}`);
  for (const u of unreadable) notice(ctx.io, `skipped ${u}`);
  if (files.length === 0 && !opts.sync) {
    if (unreadable.length > 0) throw new CliError(failureMessage(ctx, [], 0, unreadable), undefined, 'check the permissions of those files and folders');
    throw nothingToUpload(unsupported, subfolders);
  }

  const http = ctx.http();
  const { project, missing } = await targetProject(ctx, opts);
  const projectName = project?.name ?? opts.project ?? 'default';
  const fields = uploadFields(opts, project);

  let plan: SyncPlan | undefined;
  // Unchanged files whose document lacks a label or metadata value this run asks for: given them (see giveAsked).
  let refresh: SyncPlan['unchanged'] = [];
  let toSend = files;
  if (opts.sync) {
    // A file that could not be read is not gone: pruning then would delete documents of files that still exist.
    const listed = await syncPlan(ctx, files, project?.id, opts.prune && unreadable.length === 0, opts.prefix);
    plan = listed.plan;
    for (const u of listed.unreadable) notice(ctx.io, `skipped ${u}`);
    unreadable.push(...listed.unreadable);
    const prune = opts.prune && unreadable.length === 0;
    if (opts.prune && !prune) warn(ctx.io, 'not pruning: some files or folders could not be read (listed above)');
    refresh = plan.unchanged.filter((u) => lacksAsked(u.document, opts));
    toSend = [...plan.add, ...plan.replace];
    if (!opts.json) notice(ctx.io, `sync: ${plan.add.length} new, ${plan.replace.length} changed, ${plan.unchanged.length} unchanged${refreshNote(refresh.length)}, ${plan.remove.length} to delete, ${ignored.length} ignored`);
    for (const f of await foundElsewhere(http, plan.add, project?.id)) warn(ctx.io, elsewhereLine(f));
    const plain = plainlyUploaded(plan, opts);
    if (plain) warn(ctx.io, plain);
    await checkDeletes(ctx, { ...opts, prune }, plan, files.length, projectName);
  }
  // Files of the folder whose document the project already holds: a failed one fails this run too (a re-run of an
  // unchanged folder must not turn green), and with --wait one still processing is waited for.
  const unchanged: Outcome[] = (plan?.unchanged ?? []).map((u) => ({ file: u.file, document: u.document }));
  const kept = unchanged.filter((o) => !refresh.some((u) => u.file === o.file));
  const where = opts.project ? `project ${projectName}` : 'your default project';

  if (opts.dryRun) return reportDryRun(ctx, opts, { toSend, refresh: refresh.map((u) => u.file), plan, kept: unchanged, missing, projectId: project?.id, where, collected: { files, skipped, unreadable, ignored, outside } });

  if (!opts.json && toSend.length > 0) notice(ctx.io, `uploading ${count(toSend.length, 'file')} to ${where} on ${http.baseUrl}`);
  const pendingKept = opts.wait ? kept.filter((o) => !settled(o.document!)) : [];
  const report = reporter(ctx.io, [...toSend, ...refresh.map((u) => u.file), ...pendingKept.map((o) => o.file)], opts);
  // Lost contact (a replica killed mid-upload) is said among the progress lines, not across them.
  const unroute = http.routeNotices((event, line) => (event === 'lost' ? report.note(`warning: ${line}`) : !ctx.io.quiet && report.note(line)));
  const outcomes: Outcome[] = [];
  const deleted = new Set<string>();
  // What stopped the run partway (the server gone, the key revoked, a 500, Ctrl-C): --json still gets what was done.
  let stopped: unknown;
  // Ctrl-C stops the run where it is (a batch in flight is abandoned) and still reports what the server took, exit
  // 130; a second Ctrl-C ends the process at once.
  const interrupt = interruptSignal();
  try {
    if (plan) await deleteDocuments(http, movedAway(plan), deleted, interrupt.signal);
    await uploadAll(http, toSend, plan ? movedFields(plan, fields, opts) : () => fields, plan ? syncedAt : plainAt, report, outcomes, interrupt.signal);
    interrupt.signal.throwIfAborted();
    await giveAsked(http, refresh, opts, (o) => {
      report.uploaded(outcomes.length, o);
      outcomes.push(o);
    });
    if (opts.wait) await waitForProcessing(ctx, [...outcomes, ...pendingKept], report, opts.timeoutMs, interrupt.signal);
    interrupt.signal.throwIfAborted();
    await deleteDocuments(http, (plan?.remove ?? []).filter((r) => r.reason !== 'moved').map((r) => r.document), deleted, interrupt.signal);
  } catch (err) {
    stopped = interrupt.signal.aborted && (err as Error).name === 'AbortError' ? new InterruptedError('interrupted (Ctrl-C)', 'what the server took goes on there; the same command again sends the rest') : err;
  } finally {
    interrupt.dispose();
    unroute();
    report.stop();
  }
  const removed = (plan?.remove ?? []).map((r) => r.document).filter((d) => deleted.has(d.id));

  const failed = [...outcomes, ...kept].filter(isFailed);
  if (opts.json) {
    await emitJson(ctx, {
      documents: outcomes.filter((o) => o.document).map((o) => ({ file: o.file.path, ...o.document })),
      failed: failed.map(failedEntry),
      skipped,
      unreadable,
      ...(plan ? { sync: syncSummary(plan, removed, failed.length, ignored) } : {}),
      ...(stopped === undefined ? {} : { error: errorJson(stopped) }),
    });
    if (stopped !== undefined) throw stopped;
  } else if (outcomes.length > 0) {
    printTable(ctx.io, {
      headers: ['FILE', 'DOCUMENT', 'STATUS', 'CHUNKS'],
      rows: outcomes.map((o) => [o.file.path, o.document?.id, o.error ? 'rejected' : o.document!.status, o.document?.status === 'ready' ? o.document.chunk_count : undefined]),
      now: ctx.now(),
    });
  }
  for (const d of removed) notice(ctx.io, `deleted ${d.path ?? d.filename} (${d.id})`);
  sayDuplicates(ctx.io, opts, outcomes.map((o) => ({ path: o.file.path, document: o.document })));
  if (!plan) sayKeptElsewhere(ctx, outcomes);
  if (stopped !== undefined) {
    sayUploadStopped(ctx, opts, { sent: [...toSend, ...refresh.map((u) => u.file)], outcomes, deletesLeft: (plan?.remove.length ?? 0) - removed.length });
    throw stopped;
  }
  // The summary comes before any failure, so a CI log always shows it.
  const failures = failed.length > 0 ? `, ${failed.length} failed` : '';
  const waiting = !opts.wait && outcomes.some((o) => o.document && !settled(o.document)) ? ' (still processing; add --wait to wait)' : '';
  if (plan) {
    // Each file is counted once: a failed one under "failed", not also as added, replaced or unchanged.
    const ok = (os: Outcome[]) => os.filter((o) => !isFailed(o)).length;
    const changed = plan.add.length + plan.replace.length;
    const [added, replaced] = [ok(outcomes.slice(0, plan.add.length)), ok(outcomes.slice(plan.add.length, changed))];
    notice(ctx.io, `done: ${added} added, ${replaced} replaced, ${removed.length} deleted, ${ok(kept) + ok(outcomes.slice(changed))} unchanged${failures}${waiting}`);
  }
  else {
    const ok = outcomes.length - failed.length;
    notice(ctx.io, opts.wait ? `done: ${count(ok, 'file')} ready to search${failures}` : `done: ${count(ok, 'file')} queued${failures}; add --wait to wait until they are searchable`);
  }
  if (failed.length > 0 || unreadable.length > 0) {
    const withDoc = failed.find((o) => o.document);
    throw new CliError(
      failureMessage(ctx, failed, outcomes.length + kept.length, unreadable),
      undefined,
      `${opts.sync ? 'fix those files (or remove them from the folder) and sync again' : 'fix those files and upload them again'}${withDoc ? `; \`docsearch documents show ${withDoc.document!.id}\` has details` : ''}`,
    );
  }
}

/**
 * The `stopped with…` line of a run stopped partway (output/stopped.ts): of the files it meant to send, those the
 * server took; the ones it did not, by path to upload again, or for a sync, what the same command again would finish.
 * A wait stopped after every file was taken names what is still processing itself, so it gets no line; nor does one
 * file alone.
 */
function sayUploadStopped(ctx: Context, opts: UploadOptions, run: { sent: LocalFile[]; outcomes: Outcome[]; deletesLeft: number }): void {
  const taken = new Set(run.outcomes.filter((o) => o.document).map((o) => o.file));
  const notSent = run.sent.filter((f) => !taken.has(f));
  // Nothing left, or one file alone (its error says it all, as for one document: shared/each-document.ts).
  if ((notSent.length === 0 || run.sent.length === 1) && run.deletesLeft === 0) return;
  const failed = run.outcomes.filter(isFailed);
  const left = [notSent.length > 0 ? `${count(notSent.length, 'file')} not sent` : '', run.deletesLeft > 0 ? `${count(run.deletesLeft, 'document')} not deleted` : ''].filter(Boolean);
  sayStopped(ctx.io, {
    done: run.outcomes.length - failed.length,
    total: run.sent.length,
    noun: 'file',
    failed: failed.map((o) => `${o.file.path}: ${o.error ?? o.document?.error ?? 'failed'}${o.document ? ` (document ${o.document.id})` : ''}`),
    // A folder's files named alone would be sent without their path: the same command again finishes, as for a sync
    // (the files it sent come back as the same documents).
    notDone: opts.sync
      ? `${left.join(', ')} (the same command again finishes the sync)`
      : notSent.some((f) => plainAt(f) !== undefined)
        ? `${left.join(', ')} (the same command again finishes the upload)`
        : notSent.map((f) => f.path),
  });
}

/** The `sync` object of --json: the paths of each kind, and their counts (`removed`: null in a dry run, the planned deletes). */
function syncSummary(plan: SyncPlan, removed: DocumentRecord[] | null, failed: number, ignored: string[]) {
  const deleted = removed ?? plan.remove.map((r) => r.document);
  const reason = new Map(plan.remove.map((r) => [r.document.id, r.reason]));
  return {
    added: plan.add.map((f) => f.rel),
    replaced: plan.replace.map((f) => f.rel),
    unchanged: plan.unchanged.map((u) => u.file.rel),
    removed: deleted.map((d) => ({ id: d.id, path: d.path, reason: reason.get(d.id) })),
    ignored,
    counts: { new: plan.add.length, changed: plan.replace.length, unchanged: plan.unchanged.length, deleted: deleted.length, failed, ignored: ignored.length },
  };
}

/** A --prefix value: a relative path like "handbook/guides", without slashes at either end. */
function parsePrefix(value: string): string {
  const p = value.replace(/^\/+|\/+$/g, '');
  if (!p || p.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) throw new InvalidArgumentError('--prefix must be a relative path like "handbook" or "team/guides"');
  return p;
}

export function build(ctx: Context, runF: typeof run = run): Command {
  return defineCommand('upload', {
    summary: 'upload documents (PDF, office files, e-books, e-mail, images, text)',
    description:
      'Upload files and folders (PDF, office files, e-books, e-mail, images, text) to a project; other files are skipped with a note, unreadable ones are named and make the exit code 1 once the rest is uploaded. ' +
      `Files stream from disk, up to 20 per request. In a folder, dotfiles, node_modules/ and what its ${IGNORE_FILE} (gitignore syntax) names are left out. ` +
      "A folder's files keep their path in the project, the folder's own name first (contracts/2024/lease.pdf), as the web's folder upload does, so new bytes there replace the old version; files named directly keep none. " +
      'With --wait, waits until each is processed and searchable. Exits non-zero if any file failed, naming each one.\n\n' +
      'With --sync the project mirrors one folder (subfolders included): each document remembers its path in the folder; unchanged files cost one hash and are not sent; ' +
      'a changed file replaces its old version, which leaves search exactly when the new one is ready (it stays if the new one fails); --prune deletes documents whose file is gone. ' +
      'A sync exits non-zero while any file of the folder is failed on the server, even when nothing was sent. ' +
      'A prune that would delete more than --max-delete documents (default: half of those the sync covers), or all of them because the folder is empty, stops unless --force is given. ' +
      '--dry-run prints the plan and changes nothing.\n\n' +
      'With --watch, after the first sync the folder is watched and each burst of changes is synced the same way (same delete guard, which then keeps the documents and says so), ' +
      'one line per change (--json: one JSON object per line). A server that stops answering is retried with backoff, said once; the changes made meanwhile are caught up from the folder as it is then. ' +
      'Runs until Ctrl-C (exit 130) or SIGTERM (exit 0).',
    examples: [
      'docsearch upload report.pdf',
      'docsearch upload docs/ --project handbook --wait',
      'docsearch upload ~/contracts --recursive --project contracts --create-project',
      `docsearch upload notes.txt --metadata '{"source":"wiki"}'`,
      'docsearch upload docs/ --project handbook --sync --prune --dry-run',
      'docsearch upload policies/ --project handbook --sync --prune --prefix policies   # a second folder in the same project',
      'docsearch upload ~/notes --project notes --create-project --sync --prune --watch',
      'DOCSEARCH_URL=https://docs.example.com DOCSEARCH_TOKEN=dsk_... npx docsearch upload docs/ --project handbook --sync --prune --wait',
    ],
  })
    .argument('<paths...>', 'files or folders')
    .option('-p, --project <project>', 'project name or id (default: your default project)')
    .option('--create-project', 'create the project if it does not exist (never asks)')
    .option('-r, --recursive', 'include files in subfolders')
    .option('-w, --wait', 'wait until every file is processed (ready or failed)')
    .option('--timeout <seconds>', 'with --wait, give up after this many seconds', intOption('--timeout', 1, 86_400), 1800)
    .option('--metadata <json>', 'a JSON object stored with each document (merged over the metadata of a file the project already holds)')
    .option('--label <name>', "a label put on each document (made in the project's labels where missing); repeatable", collectLabel, [])
    .option('--language <code>', "the language the documents' text is analysed in (ISO 639-1: de, zh), rather than detected (default: the project's setting)", parseLanguage)
    .option('--ocr-languages <langs>', "the languages scanned pages are read in, Tesseract codes joined by + (deu, deu+eng; default: the project's setting, else the server's)", parseOcrLanguages)
    .option('--sync', 'mirror one folder: send only new and changed files (with their paths); changed ones replace their old version')
    .option('--prune', 'with --sync, delete documents whose file is gone from the folder')
    .option('--prefix <path>', 'with --sync, keep the folder\'s files below this path in the project; documents outside it are left alone', parsePrefix)
    .option('--max-delete <n>', 'with --prune, stop when more documents would be deleted (default: half of those the sync covers, at least 1)', intOption('--max-delete', 0, 1_000_000))
    .option('--force', 'with --prune, delete past --max-delete, or every synced document when the folder is empty')
    .option('--dry-run', 'print what would be uploaded and deleted; change nothing')
    .option('--watch', 'with --sync, keep watching the folder after the first sync and follow each change until stopped')
    .action(
      (
        paths: string[],
        flags: {
          project?: string;
          createProject?: boolean;
          recursive?: boolean;
          wait?: boolean;
          timeout: number;
          metadata?: string;
          label: string[];
          language?: string;
          ocrLanguages?: string;
          sync?: boolean;
          prune?: boolean;
          prefix?: string;
          maxDelete?: number;
          force?: boolean;
          dryRun?: boolean;
          watch?: boolean;
        },
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
            labels: flags.label,
            language: flags.language,
            ocrLanguages: flags.ocrLanguages,
            sync: Boolean(flags.sync),
            prune: Boolean(flags.prune),
            prefix: flags.prefix,
            maxDelete: flags.maxDelete,
            force: Boolean(flags.force),
            dryRun: Boolean(flags.dryRun),
            watch: Boolean(flags.watch),
            json: Boolean(ctx.globals().json),
          },
          ctx,
        ),
    );
}
