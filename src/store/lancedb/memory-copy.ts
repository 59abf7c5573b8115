/**
 * A chunks table without a vector index, held in memory: the flat scan that answers its vector searches, and the take
 * of the rows a search shows. Such a table is small (the vector index is built from `AnnOptions.minRows`), and LanceDB
 * costs a fixed overhead on top of the work there: its scan of 2,106 rows of 384 dimensions 2.8 CPU-ms against ~0.7
 * here, its take of 10 shown rows ~1.3 against a lookup — together a sixth of a whole search (#58;
 * bench/results/search.md#search-cost-ab-2026-11-29-a-small-table-in-memory). The answers are the same: the exact cosine
 * distance (1 − cos) of every row of the version searched within the scope, nearest first; a row's columns by its address.
 *
 * What is held is one version of the table, read whole in the background once two searches in a row have met that
 * version (a table being written to moves on before a copy would serve), at most one read at a time and one every
 * RELOAD_GAP_MS. A vector search of any other version goes to LanceDB, as does a filtered one (chunk-filter.ts: those
 * columns are not held). A row's address names the same row for as long as the table exists (row-refs.ts), so the
 * copy's rows answer takes by address whatever version the search read; a row deleted since is left out by the search's
 * visibility check, as it is when LanceDB takes it.
 */
import type * as lancedb from '@lancedb/lancedb';
import type { Table as ArrowTable } from 'apache-arrow';
import { SHOWN_TAKEN, type ShownChunk, shownRows } from './chunk-schema.js';

/** At most this many bytes of vectors are held (and `maxRows` rows): a larger table is read from LanceDB. */
const MAX_VECTOR_BYTES = 64 * 1024 * 1024;

/** A read of a newer version starts at most this often (each reads the whole table). */
const RELOAD_GAP_MS = 5_000;

export interface MemoryHit {
  id: string;
  document_id: string;
  _rowid: bigint;
  _distance: number;
}

export interface MemoryScope {
  projectIds: readonly string[];
  documentIds?: readonly string[];
  exclude?: { documentIds: readonly string[] };
  limit: number;
}

/** One version's rows: vectors row after row, each row's address, project and document, and its shown columns. */
interface Held {
  version: number;
  dimension: number;
  rows: number;
  vectors: Float32Array;
  /** 1 / |v| per row (0 for a zero vector, whose distance is taken as 1). */
  inverseNorms: Float64Array;
  rowids: bigint[];
  /** Per row: the index in `names` of its project and of its document. */
  projects: Int32Array;
  documents: Int32Array;
  shown: ShownChunk[];
  /** Each row's shown columns by its address. */
  byAddress: Map<bigint, ShownChunk>;
  names: string[];
  nameIds: Map<string, number>;
}

interface TableState {
  held?: Held;
  /** The version the last search met, and whether a read is under way. */
  lastMet?: number;
  reading: boolean;
  lastReadAt: number;
}

export class MemoryCopies {
  private readonly tables = new WeakMap<lancedb.Table, TableState>();

  constructor(
    private readonly maxRows: number,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {}

  /**
   * The nearest rows of `version` of `table` within the scope, or undefined when that version is not held (the caller
   * asks LanceDB); a read of it starts when the search before met it too.
   */
  search(table: lancedb.Table, version: number, vector: Float32Array | number[], scope: MemoryScope): MemoryHit[] | undefined {
    let state = this.tables.get(table);
    if (!state) this.tables.set(table, (state = { reading: false, lastReadAt: -Infinity }));
    const held = state.held;
    if (held?.version === version && held.dimension === vector.length) return nearest(held, vector, scope);
    const quiet = state.lastMet === version;
    state.lastMet = version;
    if (quiet && !state.reading && performance.now() - state.lastReadAt >= RELOAD_GAP_MS) {
      state.reading = true;
      state.lastReadAt = performance.now();
      const done = state;
      read(table, version, vector.length, this.maxRows)
        .then((h) => {
          if (h) done.held = h;
        })
        .catch((err: unknown) => this.log?.warn({ err }, 'could not read the chunk table into memory; searches read it in LanceDB'))
        .finally(() => {
          done.reading = false;
        });
    }
    return undefined;
  }

  /** The shown columns of the row at `address`, when the copy of `table` holds it. */
  row(table: lancedb.Table, address: bigint): ShownChunk | undefined {
    return this.tables.get(table)?.held?.byAddress.get(address);
  }

  /** Drops what is held of `table` (it has a vector index now, or is gone). */
  forget(table: lancedb.Table): void {
    this.tables.delete(table);
  }

  /** The version and rows held of `table`, if any. */
  held(table: lancedb.Table): { version: number; rows: number } | undefined {
    const held = this.tables.get(table)?.held;
    return held && { version: held.version, rows: held.rows };
  }
}

/** A record batch as a query streams them. */
type Batch = Pick<ArrowTable, 'numRows' | 'getChild'>;

/**
 * Every row of `version` of `table`, or undefined when the table moved meanwhile or is too large to hold. Read batch
 * by batch, giving the event loop a turn after each: read at once, 10,000 rows held it ~120 ms.
 */
async function read(table: lancedb.Table, version: number, dimension: number, maxRows: number): Promise<Held | undefined> {
  const count = await table.countRows();
  if (count > maxRows || count * dimension * 4 > MAX_VECTOR_BYTES) return undefined;
  const vectors = new Float32Array(count * dimension);
  const inverseNorms = new Float64Array(count);
  const rowids: bigint[] = [];
  const projects = new Int32Array(count);
  const documents = new Int32Array(count);
  const shown: ShownChunk[] = [];
  const byAddress = new Map<bigint, ShownChunk>();
  const names: string[] = [];
  const nameIds = new Map<string, number>();
  const nameOf = (id: string) => {
    let n = nameIds.get(id);
    if (n === undefined) nameIds.set(id, (n = names.push(id) - 1));
    return n;
  };
  let rows = 0;
  for await (const batch of table.query().select(['vector', ...SHOWN_TAKEN]).withRowId() as AsyncIterable<Batch>) {
    // More rows than counted: the table moved (the version check below would say so too).
    if (byAddress.size + batch.numRows > count) return undefined;
    const column = batch.getChild('vector')!;
    const rowidColumn = batch.getChild('_rowid')!;
    const all = shownRows(batch);
    for (let i = 0; i < batch.numRows; i++) {
      const rowid = rowidColumn.get(i) as bigint;
      // Shared by every search that shows it: frozen, so that none can change it for the others.
      const row = Object.freeze(all[i]!);
      byAddress.set(rowid, row);
      const v = column.get(i)?.toArray() as Float32Array | undefined;
      // A row without a vector of this dimension is one no vector search finds.
      if (!v || v.length !== dimension) continue;
      vectors.set(v, rows * dimension);
      let norm = 0;
      for (let k = 0; k < dimension; k++) norm += v[k]! * v[k]!;
      inverseNorms[rows] = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      rowids.push(rowid);
      projects[rows] = nameOf(row.project_id);
      documents[rows] = nameOf(row.document_id);
      shown.push(row);
      rows++;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The rows read are those of the version asked only if the table has not moved since it was asked.
  if ((await table.version()) !== version) return undefined;
  return { version, dimension, rows, vectors, inverseNorms, rowids, projects, documents, shown, byAddress, names, nameIds };
}

/** The scope's `limit` nearest rows of `held` to `vector`, nearest first. */
function nearest(held: Held, vector: Float32Array | number[], scope: MemoryScope): MemoryHit[] {
  const { dimension: dim, vectors, inverseNorms, names, nameIds } = held;
  // Which names (projects, documents) a row's may be, as flags by name index.
  const mark = (ids: readonly string[], on: Uint8Array, value: number) => {
    for (const id of ids) {
      const n = nameIds.get(id);
      if (n !== undefined) on[n] = value;
    }
  };
  const inProjects = new Uint8Array(names.length);
  mark(scope.projectIds, inProjects, 1);
  const documentOk = new Uint8Array(names.length).fill(scope.documentIds ? 0 : 1);
  if (scope.documentIds) mark(scope.documentIds, documentOk, 1);
  if (scope.exclude) mark(scope.exclude.documentIds, documentOk, 0);

  let queryNorm = 0;
  for (let k = 0; k < dim; k++) queryNorm += vector[k]! * vector[k]!;
  const queryInverse = queryNorm > 0 ? 1 / Math.sqrt(queryNorm) : 0;
  const q = Float32Array.from(vector);
  const unrolled = dim - (dim % 4);

  // A max-heap of the `limit` nearest so far, by distance: its root is the one the next nearer row replaces.
  const limit = Math.max(0, scope.limit);
  const heapRows = new Int32Array(limit);
  const heapDistances = new Float64Array(limit);
  let size = 0;
  for (let r = 0; r < held.rows; r++) {
    if (inProjects[held.projects[r]!] !== 1 || documentOk[held.documents[r]!] !== 1) continue;
    const o = r * dim;
    // Four sums side by side: the loop's additions no longer wait on one another.
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let k = 0;
    for (; k < unrolled; k += 4) {
      a += vectors[o + k]! * q[k]!;
      b += vectors[o + k + 1]! * q[k + 1]!;
      c += vectors[o + k + 2]! * q[k + 2]!;
      d += vectors[o + k + 3]! * q[k + 3]!;
    }
    for (; k < dim; k++) a += vectors[o + k]! * q[k]!;
    const scale = inverseNorms[r]! * queryInverse;
    const distance = scale === 0 ? 1 : 1 - (a + b + c + d) * scale;
    if (size < limit) {
      // Sift up.
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heapDistances[parent]! >= distance) break;
        heapRows[i] = heapRows[parent]!;
        heapDistances[i] = heapDistances[parent]!;
        i = parent;
      }
      heapRows[i] = r;
      heapDistances[i] = distance;
    } else if (size > 0 && distance < heapDistances[0]!) {
      // Replace the root and sift down.
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= size) break;
        const right = left + 1;
        const child = right < size && heapDistances[right]! > heapDistances[left]! ? right : left;
        if (heapDistances[child]! <= distance) break;
        heapRows[i] = heapRows[child]!;
        heapDistances[i] = heapDistances[child]!;
        i = child;
      }
      heapRows[i] = r;
      heapDistances[i] = distance;
    }
  }
  const out: MemoryHit[] = [];
  for (let i = 0; i < size; i++) {
    const r = heapRows[i]!;
    const row = held.shown[r]!;
    out.push({ id: row.id, document_id: row.document_id, _rowid: held.rowids[r]!, _distance: heapDistances[i]! });
  }
  return out.sort((x, y) => x._distance - y._distance);
}
