/**
 * The checking half of a migration: the target against the source, read back from both after the copy. Per
 * table, row counts and a checksum of every column; every original the documents use, hashed in the target; per
 * document, the rows of the chunk index and their checksum (text, metadata and the vectors' float32 bytes); the
 * index info. What differs is named, and kept for the next run to copy again.
 */
import { createHash } from 'node:crypto';
import type { FileStore } from '../../store/objects/originals.js';
import { readIndexInfo } from '../../store/lancedb/chunk-index-info.js';
import type { VectorStore } from '../../store/lancedb/connection.js';
import { readStoredIndex, type TableDigest, type TableReader } from '../../store/lancedb/table-reader.js';
import { LIBRARY_TABLES, referencedOriginals, tableDigest } from '../../store/sql/library-copy.js';
import { eachLimited } from '../each-limited.js';
import type { SourceProblems } from './copy.js';
import type { OpenedLibrary } from './libraries.js';
import type { Progress } from './progress.js';
import type { Redo } from './record.js';

export interface Verification {
  ok: boolean;
  /** One line per difference, naming it. */
  differences: string[];
  redo: Redo;
}

/** Lines listed per kind before "and N more". */
const LISTED = 10;
const FILES_AT_ONCE = 4;

function listed(lines: string[], out: string[]): void {
  out.push(...lines.slice(0, LISTED));
  if (lines.length > LISTED) out.push(`… and ${lines.length - LISTED} more like these`);
}

async function verifyTables(source: OpenedLibrary, target: OpenedLibrary, cutoff: number, progress: Progress, out: string[]): Promise<void> {
  const step = progress.step('checking tables', LIBRARY_TABLES.length, 'tables');
  for (const table of LIBRARY_TABLES) {
    const [a, b] = [await tableDigest(source.database!.db, table, 'source', cutoff), await tableDigest(target.database!.db, table, 'target', cutoff)];
    if (a.rows !== b.rows) out.push(`table ${table.name}: ${a.rows} row(s) to copy in the source, ${b.rows} in the target`);
    else if (!a.equals(b)) out.push(`table ${table.name}: the same ${a.rows} row(s) in number, but their contents differ`);
    step.add(1);
  }
  step.end();
}

async function hashOf(files: FileStore, sha256: string): Promise<string | null> {
  const obj = await files.open(sha256);
  if (!obj) return null;
  const hash = createHash('sha256');
  for await (const chunk of obj.body) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function verifyOriginals(source: OpenedLibrary, target: OpenedLibrary, problems: SourceProblems, progress: Progress, out: string[], redo: Redo): Promise<void> {
  const originals = await referencedOriginals(source.database!.db);
  const files = (await target.storage()).files;
  const unavailable = new Set([...problems.missing, ...problems.damaged]);
  const step = progress.step('checking originals', originals.length, 'files');
  const lines: string[] = [];
  await eachLimited(originals, FILES_AT_ONCE, async ({ sha256, size }) => {
    if (!unavailable.has(sha256)) {
      const got = await hashOf(files, sha256);
      if (got !== sha256) {
        lines.push(got === null ? `original ${sha256}: missing in the target` : `original ${sha256}: the target's copy hashes to ${got}`);
        redo.originals.push(sha256);
      }
    }
    step.add(1, size);
  });
  step.end();
  listed(lines.sort(), out);
}

const digestOf = (reader: TableReader | null): Promise<TableDigest | null> => (reader ? reader.digest() : Promise.resolve(null));

/** The documents whose rows differ between two tables' digests, each with a line saying how. */
function compareIndexTables(label: string, a: TableDigest | null, b: TableDigest | null, out: string[]): string[] {
  const ids = new Set([...(a?.documents.keys() ?? []), ...(b?.documents.keys() ?? [])]);
  const lines: string[] = [];
  const differ: string[] = [];
  for (const id of [...ids].sort()) {
    const [x, y] = [a?.documents.get(id), b?.documents.get(id)];
    if (x && y && x.equals(y)) continue;
    differ.push(id);
    lines.push((x?.rows ?? 0) !== (y?.rows ?? 0) ? `${label} of document ${id}: ${x?.rows ?? 0} row(s) in the source, ${y?.rows ?? 0} in the target` : `${label} of document ${id}: the same ${x!.rows} row(s) in number, but their contents differ`);
  }
  listed(lines, out);
  const [ra, rb] = [a?.table.rows ?? 0, b?.table.rows ?? 0];
  if (differ.length === 0 && (ra !== rb || (a && b && !a.table.equals(b.table)))) out.push(`${label}: ${ra} row(s) in the source, ${rb} in the target`);
  return differ;
}

async function verifyIndex(fromStore: VectorStore, toStore: VectorStore, progress: Progress, out: string[], redo: Redo): Promise<void> {
  const [from, to] = [await readStoredIndex(fromStore), await readStoredIndex(toStore)];
  const [a, b] = [await readIndexInfo(fromStore), await readIndexInfo(toStore)];
  if (a && (!b || a.embedderId !== b.embedderId || a.dimension !== b.dimension)) {
    out.push(`index info: the source's vectors are ${a.embedderId} (${a.dimension} dimensions), the target's ${b ? `${b.embedderId} (${b.dimension})` : 'are not recorded'}`);
  }
  const step = progress.step('checking chunk index', undefined, 'tables');
  redo.documents.push(...compareIndexTables('chunks', await digestOf(from.chunks), await digestOf(to.chunks), out));
  step.add(1);
  if (from.windows || to.windows) {
    redo.windows.push(...compareIndexTables('chunk windows', await digestOf(from.windows), await digestOf(to.windows), out));
    step.add(1);
  }
  step.end();
}

export async function verify(source: OpenedLibrary, target: OpenedLibrary, opts: { cutoff: number; problems: SourceProblems; progress: Progress }): Promise<Verification> {
  const differences: string[] = [];
  const redo: Redo = { documents: [], windows: [], originals: [] };
  await verifyTables(source, target, opts.cutoff, opts.progress, differences);
  await verifyOriginals(source, target, opts.problems, opts.progress, differences, redo);
  await verifyIndex((await source.storage()).vectors, (await target.storage()).vectors, opts.progress, differences, redo);
  return { ok: differences.length === 0, differences, redo };
}
