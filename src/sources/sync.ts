/**
 * One pass of one source: list, compare with what earlier passes recorded, fetch only what changed, and make the
 * project match, through the same document lifecycle as uploads (DocumentService):
 *
 * - a new item becomes a document (the same bytes already in the project: that document, as for an upload);
 * - a changed item replaces its document's bytes in place, keeping its id (unless a copy of its old bytes, another
 *   path that is the same document, still holds them: then its new bytes become a document of their own); one still
 *   being indexed waits for the next pass;
 * - an item whose bytes another document of the source holds is that document (a file renamed or moved, two files
 *   that swapped names: one the pass put in the trash as no path was it any more comes back), and the pass ends by
 *   making each document a path left follow a path it still is (its name, source path and the source's metadata),
 *   keeping its id and its index (a path listed in the other Unicode spelling of its recorded one, the same bytes,
 *   counts as unchanged: core/name-spellings.ts);
 * - an unchanged item (same version) costs its listing entry: nothing is fetched; one whose new version has the
 *   same bytes only has its version recorded;
 * - an item whose path no document may have (a line break, a NUL, a lone surrogate, past MAX_PATH_BYTES) is passed
 *   over, and recorded as an item error under a path it can be shown at, so its owner learns of it;
 * - a gone item's document is deleted (DocumentService.delete, as the REST API deletes), unless the deletion guard
 *   holds the deletions instead: a pass that would delete more than `guard.percent` % of the source's documents and
 *   more than `guard.count` of them, or every one of them (a source that suddenly lists nothing: an expired
 *   password, an unmounted share), deletes nothing until an owner confirms. It names the documents it holds, and
 *   the passes meanwhile go on adding and changing files.
 *
 * Every item's outcome is recorded as soon as it is known, so a pass cut off anywhere (a crash, kill -9, a lost
 * lock) leaves nothing to redo twice: the next pass finds the documents made (same bytes) and the items recorded,
 * and a resumable kind's listing continues after the last item recorded.
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { posix } from 'node:path';
import { Minimatch } from 'minimatch';
import type { Clock } from '../core/clock.js';
import { bytesProblem, MAX_PATH_BYTES, storableText, unstorableProblem } from '../core/storable-text.js';
import type { DocumentService } from '../documents/lifecycle.js';
import { fileType, type LegacyOffice } from '../ingest/file-type.js';
import { SNIFF_BYTES } from '../ingest/sniff.js';
import type { DocumentType } from '../ingest/types.js';
import type { DocumentRecord, DocumentStore } from '../store/sql/documents.js';
import type { FileStore } from '../store/objects/originals.js';
import type { HeldDeletions, OtherItem, PassResult, SourceItem, SourceRecord, SourceStore } from '../store/sql/sources.js';
import { isQuotaExceeded } from '../documents/quotas.js';
import { type Fetched, ItemError, type ListedItem, type SourceConnection, SourceError, type SourceKind } from './kind.js';
import { compareNames } from '../core/name-order.js';
import { fitFilename } from '../core/name-limits.js';
import { readableName } from '../core/unsafe-text.js';
import { spellings } from '../core/name-spellings.js';

/** A pass that would delete more than `percent` % of the source's documents and more than `count` of them pauses instead. */
export interface DeletionGuard {
  percent: number;
  count: number;
}

export interface PassDeps {
  store: SourceStore;
  documents: DocumentStore;
  ingest: DocumentService;
  files: FileStore;
  legacyOffice: LegacyOffice;
  maxItemBytes: number;
  guard: DeletionGuard;
  now: Clock;
  /** False once the pass must stop: the source's lock was lost, or the daemon is stopping. */
  mayGoOn(): boolean;
  /** Whether the source's lock is still this process's: a pass stopped or failed midway may then record how far it got. */
  holdsLock(): boolean;
  /** Told what each item came to (metrics). */
  onItem?(action: ItemAction): void;
}

export type ItemAction = 'added' | 'changed' | 'deleted' | 'unchanged' | 'failed' | 'deferred';

export interface PassOutcome {
  result: PassResult;
  cursor: string | null;
  /** Set when the deletion guard holds this pass's deletions: why, in words for its owner, and which. */
  held: HeldDeletions | null;
  /** Set when a quota paused the source (documents/quotas.ts): why, in words for its owner. */
  pausedReason?: string;
}

/** The pass must stop before it is done (the lock was lost, the daemon stops): what it recorded stays. */
export class PassStopped extends Error {
  override name = 'PassStopped';
}

/** How often a pass records the unchanged items it saw and how far it got: every so many items, or so many ms. */
const SEEN_FLUSH = 500;
const SEEN_FLUSH_MS = 1000;

/**
 * Include and exclude globs of a source's options, as one test on paths. Both composed (core/name-spellings.ts): a
 * glob typed in a browser says "Entwürfe/**" where a Mac's share lists "Entwu\u0308rfe/…", and one pasted from a
 * Mac the other way round.
 */
export function pathFilter(options: Record<string, unknown>): (path: string) => boolean {
  const globs = (key: string) => (Array.isArray(options[key]) ? (options[key] as string[]) : []);
  const include = globs('include');
  const exclude = globs('exclude');
  const matchers = (globs: string[]) => globs.map((g) => new Minimatch(g.normalize('NFC'), { dot: true }));
  const inc = matchers(include);
  const exc = matchers(exclude);
  if (inc.length === 0 && exc.length === 0) return () => true;
  return (listed) => {
    const path = listed.normalize('NFC');
    return (inc.length === 0 || inc.some((m) => m.match(path))) && !exc.some((m) => m.match(path));
  };
}

export async function runPass(source: SourceRecord, kind: SourceKind, conn: SourceConnection, deps: PassDeps): Promise<PassOutcome> {
  const started = deps.now();
  const { store } = deps;
  const known = await store.items(source.id);
  const wanted = pathFilter(source.options);
  const result: PassResult = { listed: 0, added: 0, changed: 0, deleted: 0, unchanged: 0, failed: 0, deferred: 0, ms: 0 };
  const count = (action: ItemAction) => {
    result[action]++;
    deps.onItem?.(action);
  };
  const listing = await conn.list({
    cursor: source.cursor,
    resumeAfter: kind.resumable ? source.resumeAfter : null,
    known: (path) => known.get(path)?.version,
    // A passed-over item's record is under the path it is shown at, which no page has: a crawler visits the path
    // it was listed at (below), so it keeps finding the item while the site has it.
    knownPaths: () => [...known].map(([path, i]) => (i.error?.startsWith(PASSED_OVER) ? i.version : path)).filter((path) => path !== ''),
  });
  const state = new PassItems(known, source.pass);
  const gone: string[] = [];
  let seen: string[] = [];
  let lastPath: string | null = null;
  let flushedAt = deps.now();
  const flush = async () => {
    await store.markSeen(source.id, source.pass, seen, kind.resumable ? lastPath : null);
    seen = [];
    flushedAt = deps.now();
  };
  const due = () => seen.length >= SEEN_FLUSH || deps.now() - flushedAt >= SEEN_FLUSH_MS;

  // A path listed in the other Unicode spelling of a recorded one that is the same document (a Mac's decomposed name
  // written back composed): counted once the pass knows whether the recorded spelling is gone (unchanged: the file
  // was renamed to its own name) or listed too (added: two files). The recorded paths.
  const respelled = new Set<string>();
  const countRespelled = () => {
    for (let n = respelled.size; n > 0; n--) count('added');
    respelled.clear();
  };
  try {
    for await (const item of listing.items) {
      if (!deps.mayGoOn()) throw new PassStopped('the pass was stopped');
      // A recorded item that is gone is gone, whatever the globs say now.
      if (item.deleted) {
        const path = recordedPath(item.path);
        if (known.has(path)) gone.push(path);
        continue;
      }
      if (!item.path || !wanted(item.path)) continue;
      // A path listed twice in one listing (a broken or hostile server) is taken once: fetched again, its other
      // bytes made a second document that no item recorded, left in the project for good.
      if (state.dealt.has(item.path)) continue;
      result.listed++;
      const problem = pathProblem(item.path);
      if (problem !== undefined) {
        // Passed over, on either engine, and said so among the item errors: recorded under a path both can store, so
        // it is listed until the file is gone or renamed (then, as any recorded item, it is gone).
        const shown = recordedPath(item.path);
        const error = `${PASSED_OVER}its path ${problem}`;
        // Never fetched, so no version to keep: the version holds the path it was listed at, where both engines can
        // store it (no index on it), for knownPaths above.
        const version = unstorableProblem(item.path) ? '' : item.path;
        state.dealtWith(shown);
        const before = known.get(shown);
        if (before?.version === version && before.error === error) seen.push(shown);
        else await store.putItem(source.id, { path: shown, version, sha256: null, documentId: null, error, seenIn: source.pass });
        count('failed');
        if (due()) await flush();
        continue;
      }
      const before = known.get(item.path);
      state.dealtWith(item.path);
      if (before && before.version === item.version && before.error === null) {
        count('unchanged');
        seen.push(item.path);
        lastPath = item.path;
        if (due()) await flush();
        continue;
      }
      let action: ItemAction;
      try {
        action = await syncItem(source, conn, item, before, state, listing.complete, deps);
      } catch (err) {
        if (!isQuotaExceeded(err)) throw err;
        // Past a quota: the source pauses with the reason and this item stays unrecorded, so the pass that follows
        // the owner's confirmation (once the quota is raised or space freed) fetches it and the rest again.
        await flush();
        await followPaths(source, state, deps);
        countRespelled();
        result.ms = deps.now() - started;
        return { result, cursor: source.cursor, held: source.heldDeletions, pausedReason: err.message };
      }
      // Only now is the item recorded: a pass resumed after it does not pass it over.
      lastPath = item.path;
      const was = action === 'added' && before === undefined ? otherSpelling(item.path, known, state) : undefined;
      if (was !== undefined) respelled.add(was);
      else count(action);
      if (due()) await flush();
    }
  } catch (err) {
    // Stopped or failed midway: how far it got is recorded, so the pass that continues it lists from the item after
    // the last one recorded (a resumable kind), not from the flush before. Not once the lock is another's.
    if (deps.holdsLock()) await flush().catch(() => undefined);
    throw err;
  }
  await flush();

  // A complete listing: whatever was recorded and not listed in this pass is gone (resumed passes included).
  const items = await store.items(source.id);
  if (listing.complete) for (const [path, item] of items) if (item.seenIn !== source.pass) gone.push(path);
  // The documents no path of the source will be any more, and (one statement for them all) which another source lists.
  const leaving = lettingGo(items, gone);
  const others = leaving.length > 0 ? await store.otherItemsOf(source.projectId, source.id, leaving) : new Map<string, OtherItem>();
  const held = gone.length > 0 && !source.confirmDeletions ? await guardHold(source, items, gone, others, deps) : null;
  if (held === null && gone.length > 0) {
    // How many items are each document: one of several paths with the same bytes leaves the document to the others.
    const paths = new Map<string, number>();
    for (const i of items.values()) if (i.documentId) paths.set(i.documentId, (paths.get(i.documentId) ?? 0) + 1);
    for (const path of gone) {
      if (!deps.mayGoOn()) throw new PassStopped('the pass was stopped');
      const documentId = items.get(path)?.documentId;
      await store.deleteItems(source.id, [path]);
      state.set(path, null);
      if (documentId) {
        const left = (paths.get(documentId) ?? 1) - 1;
        paths.set(documentId, left);
        if (left === 0) await deleteOwn(source, documentId, deps, others.get(documentId) ?? null);
      }
      // Its other spelling listed instead, the same document: the file is as it was.
      count(respelled.delete(path) ? 'unchanged' : 'deleted');
    }
  }
  countRespelled();
  await followPaths(source, state, deps);
  result.ms = deps.now() - started;
  // Held deletions keep the cursor where it was: a delta listing then lists the same deletions again (its other
  // changes are known by then, and cost their listing entry), and the pass once confirmed finds them.
  return { result, cursor: held === null ? listing.cursor() : source.cursor, held };
}

/**
 * The recorded path that is the other Unicode spelling of a path just added and the same document (core/name-
 * spellings.ts), and is not listed in this pass so far; undefined when there is none.
 */
function otherSpelling(path: string, known: Map<string, SourceItem>, state: PassItems): string | undefined {
  const documentId = state.documentOf(path);
  if (documentId === undefined) return undefined;
  return spellings(path).find((other) => other !== path && known.get(other)?.documentId === documentId && !state.listed(other));
}

/** The documents whose every recorded path is gone. */
function lettingGo(items: Map<string, SourceItem>, gone: readonly string[]): string[] {
  const goneSet = new Set(gone);
  const documents = new Set<string>();
  const kept = new Set<string>();
  for (const [path, i] of items) {
    if (!i.documentId) continue;
    documents.add(i.documentId);
    if (!goneSet.has(path)) kept.add(i.documentId);
  }
  return [...documents].filter((id) => !kept.has(id));
}

/** How a passed-over item's error begins (its path cannot be an item's or a document's). */
const PASSED_OVER = 'passed over: ';

/**
 * Why a listed path cannot be an item's or a document's path, or undefined: a line break cannot be in an item's key
 * (store/sql/sources.ts), and PostgreSQL can neither store a NUL or a lone surrogate nor index past MAX_PATH_BYTES.
 */
function pathProblem(path: string): string | undefined {
  return path.includes('\n') ? 'has a line break' : (unstorableProblem(path) ?? bytesProblem(path, MAX_PATH_BYTES));
}

/** The bytes of a shown path's start and end, when the path is too long: together under MAX_PATH_BYTES. */
const SHOWN_END_BYTES = 1000;

/**
 * The path an item is recorded under: its own, or for one passed over a form both engines store and the owner can
 * read — each line break, NUL or lone surrogate shown as U+FFFD, and a path too long as its start … its end.
 */
function recordedPath(path: string): string {
  if (pathProblem(path) === undefined) return path;
  const shown = storableText(path.replace(/[\n\u0000]/g, '\ufffd'));
  const bytes = Buffer.from(shown);
  if (bytes.length <= MAX_PATH_BYTES) return shown;
  // A cut inside a character decodes to U+FFFD: each part is cut back to a whole one.
  const start = bytes.subarray(0, SHOWN_END_BYTES).toString().replace(/\ufffd+$/, '');
  const end = bytes.subarray(bytes.length - SHOWN_END_BYTES).toString().replace(/^\ufffd+/, '');
  return `${start}…${end}`;
}

/** How many held documents a source names (the count says how many there are in all). */
export const HELD_LISTED = 500;

/**
 * The deletions of this pass held for an owner's confirmation — why, how many, which documents (their paths and
 * names) — or null when they may go ahead.
 */
async function guardHold(
  source: SourceRecord,
  items: Map<string, SourceItem>,
  gone: string[],
  others: Map<string, OtherItem>,
  deps: Pick<PassDeps, 'guard' | 'documents'>,
): Promise<HeldDeletions | null> {
  const { guard } = deps;
  const documents = new Set<string>();
  for (const i of items.values()) if (i.documentId) documents.add(i.documentId);
  const candidates = lettingGo(items, gone);
  const kept = documents.size - candidates.length;
  // One another source lists too is not removed: it is handed over (handOver), or was that source's already.
  const removed = candidates.filter((id) => !others.has(id));
  const share = documents.size === 0 ? 0 : (removed.length / documents.size) * 100;
  const confirm = 'nothing was removed, and new and changed files still arrive; resume the source (or sync it with confirm) to remove them';
  let reason: string;
  if (removed.length > 0 && kept === 0) reason = `the source no longer lists any of its ${removed.length} documents (an expired password or an unmounted share looks like this): ${confirm}`;
  else if (removed.length > guard.count && share > guard.percent) {
    reason = `this pass would remove ${removed.length} of the source's ${documents.size} documents (${Math.round(share)} %, more than ${guard.percent} % and more than ${guard.count}): ${confirm}`;
  } else return null;
  const removedSet = new Set(removed);
  const named = gone
    .map((path) => ({ path, documentId: items.get(path)?.documentId ?? null }))
    .filter((g): g is { path: string; documentId: string } => g.documentId !== null && removedSet.has(g.documentId))
    .sort((a, b) => compareNames(a.path, b.path)); // the first HELD_LISTED alike on every host
  const listed = named.slice(0, HELD_LISTED);
  const docs = await Promise.all(listed.map((g) => deps.documents.get(g.documentId)));
  return { reason, count: removed.length, items: listed.map((g, i) => ({ path: g.path, documentId: g.documentId, filename: docs[i]?.filename ?? null })) };
}

/**
 * What a pass knows of the source's items as it goes: their records (as the pass began, or as it handed them off),
 * which paths each document is (copies with the same bytes are one document: DocumentService.accept gives back the
 * one the project holds), which paths the pass has listed so far, which documents a path left in it, which it put in
 * the trash as no path was them any more, and the name and metadata of each item it fetched.
 */
class PassItems {
  private readonly byDocument = new Map<string, Set<string>>();
  private readonly documentOfPath = new Map<string, string>();
  readonly dealt = new Set<string>();
  readonly moved = new Set<string>();
  readonly dropped = new Set<string>();
  readonly fetched = new Map<string, Pick<Received, 'filename' | 'metadata'>>();

  constructor(
    readonly recorded: Map<string, SourceItem>,
    private readonly pass: number,
  ) {
    for (const [path, i] of recorded) this.set(path, i.documentId);
  }

  /** The document a path is, as far as the pass knows. */
  documentOf(path: string): string | undefined {
    return this.documentOfPath.get(path);
  }

  dealtWith(path: string): void {
    this.dealt.add(path);
  }

  /** Listed in this pass already (in this run of it, or in the run a resumed pass continues). */
  listed(path: string): boolean {
    return this.dealt.has(path) || this.recorded.get(path)?.seenIn === this.pass;
  }

  set(path: string, documentId: string | null): void {
    const was = this.documentOfPath.get(path);
    // Only a document a path left can have lost the path it is shown under.
    if (was !== undefined && was !== documentId) this.moved.add(was);
    if (was !== undefined) this.byDocument.get(was)?.delete(path);
    if (documentId === null) {
      this.documentOfPath.delete(path);
      return;
    }
    this.documentOfPath.set(path, documentId);
    const paths = this.byDocument.get(documentId) ?? new Set<string>();
    paths.add(path);
    this.byDocument.set(documentId, paths);
  }

  /** The paths but `except` that are this document. */
  others(documentId: string, except?: string): string[] {
    return [...(this.byDocument.get(documentId) ?? [])].filter((path) => path !== except);
  }
}

/** Fetches a new or changed item and makes its document match it; what it came to. */
async function syncItem(
  source: SourceRecord,
  conn: SourceConnection,
  item: ListedItem,
  before: SourceItem | undefined,
  state: PassItems,
  complete: boolean,
  deps: PassDeps,
): Promise<ItemAction> {
  const record = async (fields: Partial<SourceItem>) => {
    const row: SourceItem = {
      path: item.path,
      version: item.version,
      sha256: before?.sha256 ?? null,
      documentId: before?.documentId ?? null,
      error: null,
      seenIn: source.pass,
      ...fields,
    };
    await deps.store.putItem(source.id, row);
    state.set(item.path, row.documentId);
  };
  let received: Received | undefined;
  try {
    const fetched = await conn.fetch(item).catch((err: unknown) => {
      throw err instanceof ItemError || err instanceof SourceError ? err : new SourceError(`${item.path} could not be fetched from the source: ${messageOf(err)}`);
    });
    received = await receive(fetched, item, deps);
    state.fetched.set(item.path, { filename: received.filename, metadata: received.metadata });
    const current = before?.documentId ? await deps.documents.get(before.documentId) : null;
    if (current && current.sha256 === received.sha256) {
      // New version, same bytes (a touched file, a re-upload): only the version is recorded.
      await rm(received.tempPath, { force: true });
      await record({ sha256: received.sha256, documentId: current.id });
      return before!.error === null ? 'unchanged' : 'changed';
    }
    // Other paths are this document too (copies of its bytes: a page at / and /index.html, a file copied). One this
    // pass listed already (or, in a listing of changes, did not list: unchanged) holds those bytes still, so the
    // document keeps them and these bytes become a document of their own; replaced, its text would leave the index
    // for good. Otherwise the document follows this path, and the others are handed off: fetched when listed later
    // in this pass, each gets the document of its bytes (this one again, when they changed alike).
    const others = current ? state.others(current.id, item.path) : [];
    if (current && current.sourceId === source.id && !others.some((path) => !complete || state.listed(path))) {
      const replaced = await deps.ingest.replace(current.id, { ...received, source: { id: source.id, path: item.path } }, received.metadata);
      received = undefined; // consumed
      if (replaced.outcome === 'busy') {
        // Left as it was: the next pass (soon, see scheduler.ts) finds the item changed again.
        await record({ version: before!.version, error: null });
        return 'deferred';
      }
      if (replaced.outcome === 'replaced') {
        await record({ sha256: replaced.document.sha256, documentId: current.id });
        for (const path of others) {
          const handedOff = { ...state.recorded.get(path)!, version: '', sha256: null, documentId: null };
          await deps.store.putItem(source.id, handedOff);
          state.recorded.set(path, handedOff);
          state.set(path, null);
        }
        return 'changed';
      }
      if (replaced.outcome === 'same_content') {
        // Another document of the project holds the new bytes: the item is that document now.
        await record({ sha256: null, documentId: replaced.other });
        if (state.others(current.id).length === 0 && (await deleteOwn(source, current.id, deps))) state.dropped.add(current.id);
        return 'changed';
      }
      // Deleted meanwhile: the next pass fetches the item again and makes it anew.
      await record({ version: '', documentId: null, sha256: null });
      return 'deferred';
    }
    // Bytes of a document this pass put in the trash (two files that swapped names, the first of them listed): it
    // comes back, indexed as it was, rather than being indexed anew. In the trash, a pass cut off here leaves nothing.
    const dropped = state.dropped.size > 0 ? await deps.documents.trashedCopy(source.projectId, received.sha256) : null;
    const restored = dropped && state.dropped.has(dropped) ? await deps.ingest.restore({ id: dropped }).catch(() => null) : null;
    if (restored) {
      await rm(received.tempPath, { force: true });
      received = undefined;
      await record({ sha256: restored.sha256, documentId: restored.id });
      return before?.documentId ? 'changed' : 'added';
    }
    const [accepted] = await deps.ingest.accept(source.userId, source.projectId, [{ ...received, source: { id: source.id, path: item.path } }], received.metadata, source.labels);
    received = undefined;
    await record({ sha256: accepted!.document.sha256, documentId: accepted!.document.id });
    // An item that had no document (its fetch failed, or its document was deleted meanwhile) adds one.
    return before?.documentId ? 'changed' : 'added';
  } catch (err) {
    if (received) await rm(received.tempPath, { force: true });
    if (!(err instanceof ItemError)) throw err;
    // Recorded with the version it had, so the next pass tries again; the message is shown on the source.
    await record({ version: before?.version ?? '', error: err.message });
    return 'failed';
  }
}

/** A document's name when its kind gives none: the path's last part, fitted as an upload's name is. */
/**
 * A document's name from its item's path: without the characters an upload's name is refused for (an invisible or
 * bidirectional one, a line break, a control), as nobody can be told of a refusal here (docs/api.md#names).
 */
const defaultName = (path: string) => fitFilename(readableName(posix.basename(path)) || 'index');

/**
 * The documents a path left in this pass (a file renamed or moved with its bytes, files that swapped names, a copy
 * gone): one whose source path is not one of its paths any more follows one that is, preferring a path fetched in
 * this pass (whose name and metadata are known), so it shows the file as it is named now, and keeps its id and index.
 */
async function followPaths(source: SourceRecord, state: PassItems, deps: PassDeps): Promise<void> {
  for (const id of state.moved) {
    if (!deps.mayGoOn()) throw new PassStopped('the pass was stopped');
    const paths = state.others(id).sort();
    // No path is it: it went with its last one.
    if (paths.length === 0) continue;
    const doc = await deps.documents.get(id);
    if (!doc || doc.sourceId !== source.id || (doc.sourcePath !== null && paths.includes(doc.sourcePath))) continue;
    const to = paths.find((path) => state.fetched.has(path)) ?? paths[0]!;
    const fetched = state.fetched.get(to);
    // Not fetched in this pass: a name the kind took from the path becomes the new path's; one it took from the
    // bytes (a message's subject) is the same for the same bytes.
    const filename = fetched?.filename ?? (doc.sourcePath !== null && fitFilename(doc.filename) === defaultName(doc.sourcePath) ? defaultName(to) : doc.filename);
    const metadata = fetched && Object.keys(fetched.metadata).length > 0 ? { metadata: fetched.metadata } : {};
    await deps.ingest.follow(id, { filename, sourcePath: to, ...metadata });
  }
  state.moved.clear();
}

interface Received {
  tempPath: string;
  filename: string;
  contentType: DocumentType;
  sizeBytes: number;
  sha256: string;
  metadata: Record<string, unknown>;
}

/** Streams an item's bytes to the file store's temp folder (hashed, counted, capped) and decides its type. */
async function receive(fetched: Fetched, item: ListedItem, deps: PassDeps): Promise<Received> {
  const given = fetched.filename !== undefined ? readableName(fetched.filename) : '';
  const filename = given !== '' ? fitFilename(given) : defaultName(item.path);
  const { path: tempPath, stream } = deps.files.tempFile();
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  let size = 0;
  const written = new Promise<void>((resolve, reject) => {
    stream.once('finish', resolve);
    stream.once('error', reject);
  });
  // Also handled when the item fails before `await written` (its source stopped midway): the stream is destroyed
  // with a write in flight, which then fails (ERR_STREAM_DESTROYED); left unhandled, that rejection ended the daemon.
  void written.catch(() => undefined);
  try {
    const parts = fetched.body instanceof Uint8Array ? [fetched.body] : fromSource(fetched.body, item.path);
    for await (const part of parts) {
      const chunk = Buffer.from(part);
      size += chunk.length;
      if (size > deps.maxItemBytes) throw new ItemError(`larger than ${Math.round(deps.maxItemBytes / 1024 / 1024)} MiB (--max-upload-mb)`);
      hash.update(chunk);
      if (headBytes < SNIFF_BYTES) {
        head.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
        headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
      }
      if (!stream.write(chunk)) await new Promise<void>((r) => stream.once('drain', () => r()));
    }
    stream.end();
    await written;
    const decided = await fileType({ tempPath, head: Buffer.concat(head), filename, sizeBytes: size }, deps.legacyOffice);
    if ('refused' in decided) throw new ItemError(decided.refused);
    return { tempPath, filename, contentType: decided.type, sizeBytes: size, sha256: hash.digest('hex'), metadata: fetched.metadata ?? {} };
  } catch (err) {
    stream.destroy();
    await rm(tempPath, { force: true });
    throw err;
  }
}

const messageOf = (err: unknown) => (err as Error)?.message || String(err);

/**
 * An item's bytes as the source sends them; a source that stops midway (its server stopped, the connection cut) is
 * the pass's error, said so: the stream's own words ("aborted", "Premature close") name no source and no item.
 */
async function* fromSource(body: AsyncIterable<Uint8Array>, path: string): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    if (err instanceof ItemError || err instanceof SourceError) throw err;
    throw new SourceError(`the source stopped sending ${path} midway (the connection ended: ${messageOf(err)})`);
  }
}

/**
 * Deletes a document the source made (uploads beside it are never touched), as the REST API deletes; whether it did.
 * One another source of the project still lists is handed over to it instead (handOver), and stays.
 */
async function deleteOwn(source: SourceRecord, documentId: string, deps: PassDeps, other?: OtherItem | null): Promise<boolean> {
  const doc = await deps.documents.get(documentId);
  if (doc === null || doc.sourceId !== source.id) return false;
  if (await handOver(source, doc, deps, other)) return false;
  return deps.ingest.delete(doc);
}

/**
 * A document the source made goes to another source of the project whose item records it (the same bytes: one
 * document), when the source lets it go: its last path gone, or the source removed. It keeps its id, chunks and
 * index; it takes that item's path (and name, when its name was its path's), and the new source's labels for the
 * old one's. Whether it went; with no other source listing it, it is the caller's to delete or keep.
 */
export async function handOver(
  source: Pick<SourceRecord, 'id' | 'projectId' | 'labels'>,
  doc: Pick<DocumentRecord, 'id' | 'filename' | 'sourcePath'>,
  deps: Pick<PassDeps, 'store' | 'ingest'>,
  /** Looked up already, for many documents at once (SourceStore.otherItemsOf); undefined: looked up here. */
  known?: OtherItem | null,
): Promise<boolean> {
  const other = known !== undefined ? known : await deps.store.otherItemOf(source.projectId, source.id, doc.id);
  if (other === null) return false;
  const filename = doc.sourcePath !== null && fitFilename(doc.filename) === defaultName(doc.sourcePath) ? defaultName(other.path) : doc.filename;
  await deps.ingest.follow(doc.id, { filename, sourcePath: other.path, sourceId: other.source.id }, { remove: source.labels, add: other.source.labels });
  return true;
}
