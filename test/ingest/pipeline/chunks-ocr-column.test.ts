/**
 * The chunks table's `ocr` column: written for OCR'd chunks, and added (false) to a table made before the
 * column existed, which then keeps working for reads, searches and new writes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Schema } from 'apache-arrow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChunkRow, chunkSchema } from '../../../src/store/lancedb/chunk-schema.js';
import { ChunkIndex } from '../../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../../src/store/lancedb/connection.js';

const EMBEDDER = { id: 'builtin:all-MiniLM-L6-v2', dimension: 4 };

const row = (doc: string, text: string, vector: number[], ocr?: boolean): ChunkRow => ({
  id: `${doc}:0`,
  user_id: 'u1',
  project_id: 'p1',
  document_id: doc,
  chunk_index: 0,
  text,
  search_text: text,
  heading: null,
  page_start: 1,
  page_end: 1,
  ...(ocr === undefined ? {} : { ocr }),
  vector: Float32Array.from(vector),
});

/** The chunks table as this project wrote it before OCR: today's columns less `ocr`. */
const oldSchema = (dimension: number): Schema => new Schema(chunkSchema(dimension).fields.filter((f) => f.name !== 'ocr'));

describe('chunks table ocr column', () => {
  let dir: string;
  let store: VectorStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docsearch-chunks-ocr-'));
    store = await VectorStore.open(dir);
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores which chunks came from OCR', async () => {
    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
    await index.add([row('typed', 'typed text', [1, 0, 0, 0]), row('scanned', 'scanned text', [0, 1, 0, 0], true)], EMBEDDER);
    expect((await index.documentChunks('scanned'))[0]!.ocr).toBe(true);
    expect((await index.documentChunks('typed'))[0]!.ocr).toBeUndefined();
    await index.close();
  });

  it('opens a table written before the column existed, reads its rows as not OCR, and takes new OCR rows', async () => {
    const old = await store.connection.createEmptyTable('chunks', oldSchema(4));
    const { ocr: _ocr, ...legacy } = row('legacy', 'legacy penguins', [1, 0, 0, 0]);
    await old.add([legacy as unknown as Record<string, unknown>]);
    writeFileSync(join(dir, 'chunks-index.json'), JSON.stringify({ table: 'chunks', embedderId: EMBEDDER.id, dimension: 4 }));

    const index = await ChunkIndex.open(store, { embedderId: EMBEDDER.id });
    const [before] = await index.documentChunks('legacy');
    expect(before).toMatchObject({ text: 'legacy penguins' });
    expect(before!.ocr).toBeUndefined();
    await index.add([row('scanned', 'scanned penguins', [0, 1, 0, 0], true)], EMBEDDER);
    const hits = await index.vectorSearch({ projectIds: ['p1'], vector: [0, 1, 0, 0], limit: 2 });
    const found = await index.getMany(['p1'], hits);
    expect(found.map((c) => [c.document_id, c.ocr ?? false]).sort()).toEqual([
      ['legacy', false],
      ['scanned', true],
    ]);
    await index.close();
  });
});
