/**
 * A library's chunk index read as the daemon stores it — every row's fields and vector — through the built module
 * `migrate` reads with: what the backup and upgrade tests compare bit for bit.
 */
import { join } from 'node:path';
import { REPO } from './daemon.js';

type ConnectionModule = typeof import('../../src/store/lancedb/connection.js');
export type VectorStore = Awaited<ReturnType<ConnectionModule['VectorStore']['open']>>;

export interface StoredRow {
  document_id: string;
  fields: Record<string, unknown>;
  vector: number[];
}

/** Every chunk row of a library's index by chunk id, read only through the built module `migrate` reads with. */
export async function chunkRows(open: () => Promise<VectorStore>): Promise<Map<string, StoredRow>> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as typeof import('../../src/store/lancedb/table-reader.js');
  const store = await open();
  try {
    const out = new Map<string, StoredRow>();
    const { chunks } = await readStoredIndex(store);
    for await (const batch of chunks!.scan(['id', 'user_id', 'document_id', 'chunk_index', 'heading', 'page_start', 'page_end', 'text', 'ocr', 'vector'])) {
      for (const proxy of batch.toArray()) {
        const { vector, ...fields } = proxy.toJSON() as Record<string, unknown>;
        out.set(fields.id as string, { document_id: fields.document_id as string, fields: { ...fields, chunk_index: Number(fields.chunk_index) }, vector: [...(vector as Iterable<number>)] });
      }
    }
    return out;
  } finally {
    await store.close();
  }
}

/** Every chunk row's vector and stored answer units (null: none yet), by chunk id, read as `chunkRows` reads. */
export async function chunkUnits(open: () => Promise<VectorStore>): Promise<Map<string, { vector: Float32Array; units: Uint8Array | null }>> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as typeof import('../../src/store/lancedb/table-reader.js');
  const store = await open();
  try {
    const out = new Map<string, { vector: Float32Array; units: Uint8Array | null }>();
    const { chunks } = await readStoredIndex(store);
    for await (const batch of chunks!.scan(['id', 'vector', 'units'])) {
      for (const proxy of batch.toArray()) {
        const { id, vector, units } = proxy.toJSON() as { id: string; vector: Iterable<number>; units: Uint8Array | null };
        out.set(id, { vector: Float32Array.from(vector), units: units ? new Uint8Array(units) : null });
      }
    }
    return out;
  } finally {
    await store.close();
  }
}

export const localIndex = (dataDir: string) => async () => {
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as ConnectionModule;
  return VectorStore.open(join(dataDir, 'lancedb'));
};

export const s3Index = (storage: string, env: Record<string, string>) => async () => {
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as ConnectionModule;
  const { parseS3Location } = (await import(join(REPO, 'dist/store/objects/location.js'))) as typeof import('../../src/store/objects/location.js');
  const { S3ObjectStore } = (await import(join(REPO, 'dist/store/objects/s3.js'))) as typeof import('../../src/store/objects/s3.js');
  const loc = parseS3Location(storage, env);
  return VectorStore.openS3Detached(loc, (await S3ObjectStore.connect(loc)).at('lancedb'));
};

