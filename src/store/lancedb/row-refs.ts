/**
 * Which project, document and chunk index a row of the chunks table holds, by its row address: so a search's first
 * stage asks LanceDB for scores and addresses only. Taking two columns of each of ~400 candidates was about half of what
 * the two lists cost at a million chunks (bench/results/search.md); with the
 * project known as well, a search whose projects hold every row needs no scope filter in LanceDB (`soleScope` in chunk-search.ts).
 *
 * An address is (fragment id << 32 | offset). Fragment ids are never reused, a compaction writes new fragments, a
 * deletion only marks rows, and an update (a move to another project sets `project_id`) deletes the rows and writes
 * them again at new addresses (test/store/row-refs.test.ts holds LanceDB to this): what an address held stays true
 * for as long as the table exists (a table made again under the
 * same name starts over: `ChunkIndex` drops its directory then). The directory is built by one scan of the three
 * columns (bench/results/search.md#chunks-table-figures); rows written since are read from the table when a search
 * first meets them and kept one by one until the next scan.
 */
import { endianness } from 'node:os';
import type * as lancedb from '@lancedb/lancedb';

export interface RowRef {
  project_id: string;
  document_id: string;
  chunk_index: number;
}

/** The columns a row's `RowRef` is read from. */
export const REF_COLUMNS = ['project_id', 'document_id', 'chunk_index'] as const;

/** Each row's `RowRef` in a result or batch that read `REF_COLUMNS`. */
export function columnRefs(result: Columns): (i: number) => RowRef {
  const projects = result.getChild('project_id')!;
  const docs = result.getChild('document_id')!;
  const indexes = result.getChild('chunk_index')!;
  return (i) => ({ project_id: projects.get(i) as string, document_id: docs.get(i) as string, chunk_index: Number(indexes.get(i)) });
}

/** Rows kept one by one at most; past it they are forgotten and read again until the next scan. */
const MAX_LOOSE = 200_000;

interface Fragment {
  /** Per offset: the index of its document id in `names`, or −1 for an offset not read (a deleted row). */
  docs: Int32Array;
  /** Per offset: the index of its project id in `names`. */
  projects: Int32Array;
  indexes: Int32Array;
}

/** Row addresses of one scan, by fragment; offsets are dense from 0 in every fragment. */
class Scanned {
  readonly fragments = new Map<number, Fragment>();
  readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();

  add(rowid: bigint, ref: RowRef, sizeHint: number): void {
    this.put(Number(rowid >> 32n), Number(rowid & 0xffff_ffffn), this.nameOf(ref.project_id), this.nameOf(ref.document_id), ref.chunk_index, sizeHint);
  }

  /** One row by its fragment and offset, its project and document as indexes of `names` (`nameOf`). */
  put(fragmentId: number, offset: number, project: number, doc: number, chunkIndex: number, sizeHint: number): void {
    let fragment = this.fragments.get(fragmentId);
    if (!fragment || offset >= fragment.docs.length) fragment = this.grow(fragmentId, fragment, Math.max(offset + 1, sizeHint));
    fragment.docs[offset] = doc;
    fragment.projects[offset] = project;
    fragment.indexes[offset] = chunkIndex;
  }

  nameOf(id: string): number {
    let name = this.nameIds.get(id);
    if (name === undefined) {
      name = this.names.push(id) - 1;
      this.nameIds.set(id, name);
    }
    return name;
  }

  /** The documents of every row read. */
  documentIds(): Set<string> {
    const seen = new Uint8Array(this.names.length);
    for (const { docs } of this.fragments.values()) for (const doc of docs) if (doc >= 0) seen[doc] = 1;
    const ids = new Set<string>();
    seen.forEach((on, name) => on && ids.add(this.names[name]!));
    return ids;
  }

  has(rowid: bigint): boolean {
    const fragment = this.fragments.get(Number(rowid >> 32n));
    const offset = Number(rowid & 0xffff_ffffn);
    return fragment !== undefined && offset < fragment.docs.length && fragment.docs[offset]! >= 0;
  }

  get(rowid: bigint): RowRef | undefined {
    const fragment = this.fragments.get(Number(rowid >> 32n));
    if (!fragment) return undefined;
    const offset = Number(rowid & 0xffff_ffffn);
    const name = offset < fragment.docs.length ? fragment.docs[offset]! : -1;
    return name < 0 ? undefined : { project_id: this.names[fragment.projects[offset]!]!, document_id: this.names[name]!, chunk_index: fragment.indexes[offset]! };
  }

  private grow(id: number, old: Fragment | undefined, size: number): Fragment {
    const length = Math.max(size, (old?.docs.length ?? 0) * 2);
    const fragment = { docs: new Int32Array(length).fill(-1), projects: new Int32Array(length), indexes: new Int32Array(length) };
    if (old) {
      fragment.docs.set(old.docs);
      fragment.projects.set(old.projects);
      fragment.indexes.set(old.indexes);
    }
    this.fragments.set(id, fragment);
    return fragment;
  }
}

export class RowRefs {
  private scanned = new Scanned();
  private readonly loose = new Map<bigint, RowRef>();
  private scanning: Promise<void> | undefined;
  /** When the last scan began (performance.now()); −Infinity before the first. */
  private scannedAt = Number.NEGATIVE_INFINITY;

  get(rowid: bigint): RowRef | undefined {
    return this.scanned.get(rowid) ?? this.loose.get(rowid);
  }

  /** Whether `get` knows the row, without building its `RowRef`. */
  has(rowid: bigint): boolean {
    return this.scanned.has(rowid) || this.loose.has(rowid);
  }

  /** Once the scan under way (if any) has ended, however it ended. */
  async settled(): Promise<void> {
    await this.scanning?.catch(() => undefined);
  }

  /** The documents of every row the directory knows. */
  documentIds(): Set<string> {
    const ids = this.scanned.documentIds();
    for (const ref of this.loose.values()) ids.add(ref.document_id);
    return ids;
  }

  /** Keeps what a search read of a row the directory lacked. */
  remember(rowid: bigint, ref: RowRef): void {
    if (this.loose.size >= MAX_LOOSE) this.loose.clear();
    this.loose.set(rowid, ref);
  }

  /**
   * Reads every row's address, document and chunk index into a fresh directory, unless one began less than
   * `minGapMs` ago (or is under way). Rows met meanwhile are kept as well: a row kept loose is as true as a scanned one.
   */
  scan(table: lancedb.Table, minGapMs = 0): Promise<void> {
    if (this.scanning || performance.now() - this.scannedAt < minGapMs) return this.scanning ?? Promise.resolve();
    this.scannedAt = performance.now();
    const run = async () => {
      const fresh = new Scanned();
      const stream = table.query().select([...REF_COLUMNS]).withRowId() as AsyncIterable<Columns & { numRows: number }>;
      for await (const batch of stream) {
        if (addRaw(fresh, batch)) continue;
        const refOf = columnRefs(batch);
        const rowids = batch.getChild('_rowid')!;
        for (let i = 0; i < batch.numRows; i++) fresh.add(rowids.get(i) as bigint, refOf(i), batch.numRows);
      }
      this.scanned = fresh;
      this.loose.clear();
    };
    this.scanning = run().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }
}

/**
 * Adds a scanned batch from its Arrow buffers, when it is what LanceDB's scans give (each column one contiguous
 * chunk, no nulls, Utf8 ids, Int32 chunk indexes, Uint64 addresses); false, having added nothing, otherwise. An id is
 * decoded only where its bytes differ from the row before's (a document's rows lie together, and so do a project's
 * mostly): decoding two strings a row through `get()` was half of the scan's CPU at a million rows.
 */
function addRaw(into: Scanned, batch: Columns & { numRows: number }): boolean {
  const projects = idColumn(batch.getChild('project_id'), into);
  const docs = idColumn(batch.getChild('document_id'), into);
  const indexes = plainValues(batch.getChild('chunk_index'));
  const rowids = plainValues(batch.getChild('_rowid'));
  if (!LITTLE_ENDIAN || !projects || !docs || !(indexes instanceof Int32Array) || !(rowids instanceof BigUint64Array)) return false;
  // An address is (fragment id << 32 | offset): read as two little-endian 32-bit halves, without a BigInt a row.
  const halves = new Uint32Array(rowids.buffer, rowids.byteOffset, rowids.length * 2);
  for (let i = 0; i < batch.numRows; i++) into.put(halves[2 * i + 1]!, halves[2 * i]!, projects(i), docs(i), indexes[i]!, batch.numRows);
  return true;
}

/** The values of a column that is one chunk without nulls, else undefined. */
function plainValues(column: ColumnData | null): unknown {
  const data = column?.data;
  return data?.length === 1 && data[0]!.offset === 0 && column!.nullCount === 0 ? data[0]!.values : undefined;
}

const utf8 = new TextDecoder();
const LITTLE_ENDIAN = endianness() === 'LE';

/** Row i's id of a plain Utf8 column as an index of `into`'s names, or undefined when the column is not plain. */
function idColumn(column: ColumnData | null, into: Scanned): ((i: number) => number) | undefined {
  const bytes = plainValues(column);
  const offsets = column?.data?.[0]?.valueOffsets;
  if (!(bytes instanceof Uint8Array) || !(offsets instanceof Int32Array)) return undefined;
  let start = 0;
  let end = -1;
  let name = -1;
  return (i) => {
    const s = offsets[i]!;
    const e = offsets[i + 1]!;
    if (e - s !== end - start || !sameBytes(bytes, s, start, e - s)) name = into.nameOf(utf8.decode(bytes.subarray(s, e)));
    start = s;
    end = e;
    return name;
  };
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/** A column of an Arrow table or record batch, with the parts of its buffers `addRaw` reads. */
interface ColumnData {
  get(i: number): unknown;
  nullCount?: number;
  data?: readonly { offset: number; values?: unknown; valueOffsets?: unknown }[];
}

/** An Arrow table or record batch. */
interface Columns {
  getChild(name: string): ColumnData | null;
}
