/**
 * The built-in model's two precisions are two embedders: a library indexed with one is re-indexed, never mixed,
 * when the daemon starts with the other — also when the other is simply the default (`--embedder builtin`), as
 * after an upgrade that changes the default. Real daemons, real model, both precisions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../../src/models/builtin/minilm-embedder.js';
import { chunkRows, localIndex } from '../../helpers/chunk-rows.js';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../../helpers/daemon.js';
import { prose } from './fixtures.js';
import { reindexFinished, storedChunks, uploadFiles, waitFor } from './helpers.js';

const other = DEFAULT_BUILTIN_PRECISION === 'int8' ? 'fp32' : 'int8';
const fromId = BUILTIN_EMBEDDER_IDS[other];
const toId = BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION];

describe(`switching the built-in model from ${other} to the default (${DEFAULT_BUILTIN_PRECISION})`, () => {
  let d: Daemon | undefined;
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  it('asks for a re-index (search 409, uploads held), and the re-index moves every chunk to the new embedder', async () => {
    d = await startDaemon({ args: ['--embedder', `builtin:${other}`] });
    const { dataDir } = d;
    const user = await addUser(d);
    const text = `${prose('switch-a', 40)}\n\nThe zeppelin hangar stood empty all winter.\n\n${prose('switch-b', 40)}`;
    const doc = (await uploadFiles(d, user.apiKey, [{ name: 'a.txt', bytes: Buffer.from(text) }], { query: '?wait=true' })).body.documents[0];
    expect(doc.status).toBe('ready');
    const search = () => api(d!, '/api/v1/search', { token: user.apiKey, body: { query: 'zeppelin hangar in winter', mode: 'vector' } });
    expect((await search()).status).toBe(200);
    await d.stop();
    const vectorsOf = async () => new Map([...(await chunkRows(localIndex(dataDir)))].filter(([, row]) => row.document_id === doc.id).map(([id, row]) => [id, row.vector]));
    const before = await vectorsOf();
    expect(before.size).toBe(doc.chunk_count);

    d = await startDaemon({ dataDir, args: ['--embedder', 'builtin'] });
    expect((await api(d, '/api/v1/reindex', { token: user.apiKey })).body).toMatchObject({ required: true, running: false, from: fromId, to: toId });
    // No query of one precision is ever scored against vectors of the other.
    const refused = await search();
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    const held = await uploadFiles(d, user.apiKey, [{ name: 'b.txt', bytes: Buffer.from(prose('switch-held', 20)) }], { query: '?wait=true&wait_timeout=2' });
    expect(held.body.documents[0].status).toBe('queued');

    expect([200, 202]).toContain((await api(d, '/api/v1/reindex', { method: 'POST', token: user.apiKey })).status);
    const final = await reindexFinished(d, user.apiKey, 180_000);
    expect(final).toMatchObject({ from: toId, to: toId, done: doc.chunk_count, total: doc.chunk_count, error: null });
    expect(JSON.parse(readFileSync(join(dataDir, 'lancedb', 'chunks-index.json'), 'utf8')).embedderId).toBe(toId);
    expect((await storedChunks(dataDir, doc.id)).count).toBe(doc.chunk_count);
    // Embedded again, each chunk: its vector is the other precision's now, not the one it had.
    const after = await vectorsOf();
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [id, v] of after) expect(Math.max(...v.map((x, i) => Math.abs(x - before.get(id)![i]!))), id).toBeGreaterThan(1e-4);
    const found = await search();
    expect(found.status).toBe(200);
    expect(found.body.results[0].text).toContain('zeppelin hangar');
    await waitFor(
      async () => (await api(d!, `/api/v1/documents/${held.body.documents[0].id}`, { token: user.apiKey })).body.status === 'ready',
      120_000,
      'the held document to be ingested',
    );
  }, 600_000);
});
