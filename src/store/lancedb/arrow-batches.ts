/**
 * Arrow record batches as LanceDB hands them out (queries) and takes them back (`table.add`): what moving rows
 * between libraries works with, so that vectors travel as the stored float32 bytes and nothing is re-encoded.
 *
 * apache-arrow ships a CommonJS and an ES module build, and LanceDB (CommonJS) checks `instanceof` against its
 * own: a batch or table made with the ES build is not one of its tables, and its attempt to convert one fails.
 * So the classes that build batches here come from the CommonJS build, the one LanceDB loads.
 */
import { createRequire } from 'node:module';
import type { Data, DataType, RecordBatch, Schema, Table } from 'apache-arrow';

const arrow = createRequire(import.meta.url)('apache-arrow') as typeof import('apache-arrow');

export type { RecordBatch, Schema };

/** A value for a column the batches lack (one added to the table since they were written): a flag, or null. */
export type ColumnDefaults = Record<string, boolean | null>;

function constant(value: boolean | null, type: DataType, length: number): Data {
  if (value === null) return arrow.vectorFromArray(new Array<null>(length).fill(null), type).data[0]!;
  const bits = new Uint8Array(Math.ceil(length / 8)).fill(value ? 0xff : 0);
  return arrow.makeData({ type: new arrow.Bool(), length, nullCount: 0, data: bits });
}

/** The type of a column, for comparing two schemas' (a vector's dimension is part of it). */
const typeText = (type: { toString(): string }): string => type.toString();

/**
 * The batch with the columns of `schema`, matched by name and in its order: a column `schema` has and the batch
 * lacks comes from `defaults`; a column of another type (a vector of another dimension), one missing without a
 * default, or one the batch has and `schema` does not, is an error naming it: rows are never silently changed.
 */
export function conformBatch(batch: RecordBatch, schema: Schema, defaults: ColumnDefaults = {}): RecordBatch {
  const extra = batch.schema.fields.filter((f) => !schema.fields.some((g) => g.name === f.name));
  if (extra.length > 0) throw new Error(`rows carry column${extra.length > 1 ? 's' : ''} ${extra.map((f) => `"${f.name}"`).join(', ')} that the table does not have`);
  const children = schema.fields.map((field) => {
    const column = batch.getChild(field.name);
    if (!column) {
      const value = defaults[field.name];
      if (value === undefined) throw new Error(`rows lack column "${field.name}"`);
      return constant(value, field.type, batch.numRows);
    }
    if (typeText(column.type) !== typeText(field.type)) throw new Error(`column "${field.name}" is ${typeText(column.type)} in the rows, ${typeText(field.type)} in the table`);
    // A record batch's column is one piece of data.
    return column.data[0]!;
  });
  return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
}

/**
 * Rows (plain objects) as a table of `schema`'s columns named in `columns`, in that order: what a write of some
 * columns of existing rows (a merge by id) takes.
 */
export function rowsTable(schema: Schema, columns: readonly string[], rows: Record<string, unknown>[]): Table {
  const fields = columns.map((name) => {
    const field = schema.fields.find((f) => f.name === name);
    if (!field) throw new Error(`the table has no column "${name}"`);
    return field;
  });
  const children = fields.map((f) => {
    const vector = arrow.vectorFromArray(rows.map((r) => r[f.name] ?? null), f.type);
    // Few hundred rows at a time: one piece of data (the builder splits only far larger arrays).
    if (vector.data.length !== 1) throw new Error(`column "${f.name}" of ${rows.length} rows came out in ${vector.data.length} pieces`);
    return vector.data[0]!;
  });
  const sub = new arrow.Schema(fields);
  return new arrow.Table(sub, [new arrow.RecordBatch(sub, arrow.makeData({ type: new arrow.Struct(fields), length: rows.length, nullCount: 0, children }))]);
}

/** Batches of one schema as one table (`table.add` takes a table). */
export const tableOf = (schema: Schema, batches: RecordBatch[]): Table => new arrow.Table(schema, batches);

/** The rows of `batch` whose `column` value `keep` accepts, as slices of it (no copy); empty when none is kept. */
export function filterRows(batch: RecordBatch, column: string, keep: (value: string) => boolean): RecordBatch[] {
  const values = batch.getChild(column);
  if (!values) throw new Error(`rows lack column "${column}"`);
  const out: RecordBatch[] = [];
  let start = -1;
  for (let i = 0; i <= batch.numRows; i++) {
    const kept = i < batch.numRows && keep(values.get(i) as string);
    if (kept && start < 0) start = i;
    else if (!kept && start >= 0) {
      out.push(start === 0 && i === batch.numRows ? batch : batch.slice(start, i));
      start = -1;
    }
  }
  return out;
}

/** Bytes the buffers of a batch as read hold (what a copy moves, give or take Arrow's padding); slices share their batch's buffers. */
export function batchBytes(batch: RecordBatch): number {
  let bytes = 0;
  const visit = (data: Data) => {
    for (const buffer of [data.values, data.valueOffsets, data.nullBitmap] as (ArrayBufferView | undefined)[]) bytes += buffer?.byteLength ?? 0;
    for (const child of data.children) visit(child);
  };
  visit(batch.data);
  return bytes;
}
