/**
 * The vectors of a chunks table without a vector index, held in memory for the flat scan that answers its vector
 * searches. Such a table is small (the index is built from `AnnOptions.minRows`), and LanceDB's scan of it costs a
 * fixed overhead on top of the dot products: 2.8 CPU-ms for 2,106 rows of 384 dimensions, against ~0.7 here — a tenth
 * of a whole search (#58; bench/results/search.md#search-cost-ab-2026-11-29-vectors-in-memory). The answer is the same: the exact cosine distance
 * (1 − cos) of every row of the version searched within the scope, nearest first.
 *
 * What is held is one version of the table, read whole in the background once two searches in a row have met that
 * version (a table being written to moves on before a copy would serve), at most one read at a time and one every
 * RELOAD_GAP_MS. A search of any other version goes to LanceDB, as does a filtered one (chunk-filter.ts: its columns
 * are not held). Row addresses stay true for as long as the table exists (row-refs.ts), so a hit's `_rowid` is a take's.
 */
import type * as lancedb from '@lancedb/lancedb';
import { chunkId } from './chunk-schema.js';
import { columnRefs, REF_COLUMNS } from './row-refs.js';

/** At most this many bytes of vectors are held: a table past it without an index searches through LanceDB. */
export const MAX_MEMORY_VECTOR_BYTES = 64 * 1024 * 1024;

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

/** One version's rows: vectors row after row, with each row's address, project, document and chunk index. */
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
  chunkIndexes: Int32Array;
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

export class MemoryVectors {
  private readonly tables = new WeakMap<lancedb.Table, TableState>();

  constructor(private readonly log?: { warn(obj: object, msg: string): void }) {}

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
      read(table, version, vector.length)
        .then((h) => {
          if (h) done.held = h;
        })
        .catch((err: unknown) => this.log?.warn({ err }, 'could not read the chunk vectors into memory; searches scan them in LanceDB'))
        .finally(() => {
          done.reading = false;
        });
    }
    return undefined;
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

/** Every row of `version` of `table`, or undefined when the table moved meanwhile or its vectors would be too large. */
async function read(table: lancedb.Table, version: number, dimension: number): Promise<Held | undefined> {
  if ((await table.countRows()) * dimension * 4 > MAX_MEMORY_VECTOR_BYTES) return undefined;
  const result = await table
    .query()
    .select(['vector', ...REF_COLUMNS])
    .withRowId()
    .toArrow();
  // The rows read are those of the version asked only if the table has not moved since it was asked.
  if ((await table.version()) !== version) return undefined;
  const column = result.getChild('vector')!;
  const rowidColumn = result.getChild('_rowid')!;
  const refOf = columnRefs(result);
  const vectors = new Float32Array(result.numRows * dimension);
  const inverseNorms = new Float64Array(result.numRows);
  const rowids: bigint[] = [];
  const projects = new Int32Array(result.numRows);
  const documents = new Int32Array(result.numRows);
  const chunkIndexes = new Int32Array(result.numRows);
  const names: string[] = [];
  const nameIds = new Map<string, number>();
  const nameOf = (id: string) => {
    let n = nameIds.get(id);
    if (n === undefined) nameIds.set(id, (n = names.push(id) - 1));
    return n;
  };
  let rows = 0;
  for (let i = 0; i < result.numRows; i++) {
    const v = column.get(i)?.toArray() as Float32Array | undefined;
    // A row without a vector of this dimension is one no vector search finds.
    if (!v || v.length !== dimension) continue;
    vectors.set(v, rows * dimension);
    let norm = 0;
    for (let k = 0; k < dimension; k++) norm += v[k]! * v[k]!;
    inverseNorms[rows] = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const ref = refOf(i);
    rowids.push(rowidColumn.get(i) as bigint);
    projects[rows] = nameOf(ref.project_id);
    documents[rows] = nameOf(ref.document_id);
    chunkIndexes[rows] = ref.chunk_index;
    rows++;
  }
  return { version, dimension, rows, vectors, inverseNorms, rowids, projects, documents, chunkIndexes, names, nameIds };
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
    const documentId = names[held.documents[r]!]!;
    out.push({ id: chunkId(documentId, held.chunkIndexes[r]!), document_id: documentId, _rowid: held.rowids[r]!, _distance: heapDistances[i]! });
  }
  return out.sort((x, y) => x._distance - y._distance);
}
