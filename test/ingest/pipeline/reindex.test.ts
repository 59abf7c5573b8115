import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, TEST_MODEL_CACHE } from '../../helpers/daemon.js';
import { BUILTIN_EMBEDDER_IDS, DEFAULT_BUILTIN_PRECISION } from '../../../src/models/builtin/minilm-embedder.js';
import { prose } from './fixtures.js';
import { reindexFinished, storedChunks, uploadFiles, waitFor } from './helpers.js';

/** The id of the embedder a daemon uses by default (`--embedder builtin`). */
const BUILTIN_ID = BUILTIN_EMBEDDER_IDS[DEFAULT_BUILTIN_PRECISION];

/**
 * Only the built-in embedder is reachable offline, so "the index was built with another embedder" is made by
 * rewriting the index record (chunks-index.json) to name another model, as an index from an earlier
 * configuration would.
 */
function pretendBuiltWith(dataDir: string, embedderId: string, dimension?: number): void {
  const path = join(dataDir, 'lancedb', 'chunks-index.json');
  const info = JSON.parse(readFileSync(path, 'utf8')) as { embedderId: string; dimension: number };
  writeFileSync(path, JSON.stringify({ ...info, embedderId, ...(dimension ? { dimension } : {}) }));
}

describe('re-index after an embedder change', () => {
  let d: Daemon | undefined;
  let dataDir = '';
  afterAll(async () => {
    if (d) await d.stop();
    if (dataDir) removeDir(dataDir);
  });

  it('holds ingestion until POST /reindex re-embeds every chunk, then resumes', async () => {
    d = await startDaemon();
    dataDir = d.dataDir;
    const user = await addUser(d);
    const first = await uploadFiles(d, user.apiKey, [{ name: 'a.txt', bytes: Buffer.from(`${prose('ri-a', 40)}\n\n${prose('ri-b', 40)}`) }], { query: '?wait=true' });
    const doc = first.body.documents[0];
    expect(doc.status).toBe('ready');
    expect((await api(d, '/api/v1/reindex', { token: user.apiKey })).body).toMatchObject({ required: false, running: false, from: BUILTIN_ID, to: BUILTIN_ID });
    const nothing = await api(d, '/api/v1/reindex', { method: 'POST', token: user.apiKey });
    expect(nothing.status).toBe(200);
    expect(nothing.body.required).toBe(false);
    await d.stop();

    pretendBuiltWith(dataDir, 'ollama:old-model');
    d = await startDaemon({ dataDir });
    expect((await api(d, '/api/v1/reindex', { token: user.apiKey })).body).toMatchObject({ required: true, running: false, from: 'ollama:old-model', to: BUILTIN_ID });
    // Uploads are accepted but wait: vectors of two models must not share an index.
    const held = await uploadFiles(d, user.apiKey, [{ name: 'b.txt', bytes: Buffer.from(prose('ri-held', 20)) }], { query: '?wait=true&wait_timeout=2' });
    expect(held.status).toBe(202);
    expect(held.body.documents[0].status).toBe('queued');

    const started = await api(d, '/api/v1/reindex', { method: 'POST', token: user.apiKey });
    expect([200, 202]).toContain(started.status);
    // The call that started it is in the audit log, by the person (the earlier call, with nothing to do, is not).
    const audited = await api(d, '/api/v1/audit-events?type=reindex.started', { token: user.apiKey });
    expect(audited.body.events).toEqual([expect.objectContaining({ by: 'user', details: { from: 'ollama:old-model', to: BUILTIN_ID } })]);
    const final = await reindexFinished(d, user.apiKey, 120_000);
    expect(final).toMatchObject({ from: BUILTIN_ID, done: doc.chunk_count, total: doc.chunk_count, progress: 1, error: null });
    expect((await storedChunks(dataDir, doc.id)).count).toBe(doc.chunk_count);
    const resumed = await waitFor(
      async () => {
        const got = await api(d!, `/api/v1/documents/${held.body.documents[0].id}`, { token: user.apiKey });
        return got.body.status === 'ready' ? got.body : undefined;
      },
      60_000,
      'the held document to be ingested',
    );
    expect(resumed.chunk_count).toBeGreaterThan(0);
    await d.logLine('"event":"reindex.finished"');
  }, 300_000);

  /**
   * A model changed behind the same id (an Ollama tag re-pulled or re-created, another model served under the name)
   * makes vectors of another size: it is another embedder. Before, the id alone was compared: every upload failed after
   * five attempts ("vector of length 384, index expects 768") and nothing said a re-index would mend it.
   */
  it('counts a model whose vectors changed size under the same id as an embedder change: uploads wait, search 409, re-index mends', async () => {
    const own = await startDaemon();
    try {
      const user = await addUser(own);
      const first = await uploadFiles(own, user.apiKey, [{ name: 'dim.txt', bytes: Buffer.from(prose('ri-dim', 40)) }], { query: '?wait=true' });
      expect(first.body.documents[0].status).toBe('ready');
      await own.stop();
      pretendBuiltWith(own.dataDir, BUILTIN_ID, 768);
      const again = await startDaemon({ dataDir: own.dataDir });
      try {
        expect((await api(again, '/api/v1/reindex', { token: user.apiKey })).body).toMatchObject({ required: true, from: BUILTIN_ID, to: BUILTIN_ID });
        const search = await api(again, '/api/v1/search', { token: user.apiKey, body: { query: 'anything', limit: 3 } });
        expect(search.status).toBe(409);
        const held = await uploadFiles(again, user.apiKey, [{ name: 'held.txt', bytes: Buffer.from(prose('ri-dim-held', 20)) }], { query: '?wait=true&wait_timeout=2' });
        expect(held.body.documents[0].status).toBe('queued');
        expect((await api(again, '/api/v1/reindex', { method: 'POST', token: user.apiKey })).status).toBeLessThan(300);
        expect(await reindexFinished(again, user.apiKey, 120_000)).toMatchObject({ required: false, error: null });
        expect(JSON.parse(readFileSync(join(own.dataDir, 'lancedb', 'chunks-index.json'), 'utf8'))).toMatchObject({ embedderId: BUILTIN_ID, dimension: 384 });
        const ready = await waitFor(async () => {
          const got = await api(again, `/api/v1/documents/${held.body.documents[0].id}`, { token: user.apiKey });
          return got.body.status === 'ready' || got.body.status === 'failed' ? got.body : undefined;
        }, 60_000, 'the held document ingested');
        expect([ready.status, ready.error]).toEqual(['ready', null]);
        expect((await api(again, '/api/v1/search', { token: user.apiKey, body: { query: 'anything', limit: 3 } })).status).toBe(200);
      } finally {
        await again.stop();
      }
    } finally {
      removeDir(own.dataDir);
    }
  }, 300_000);

  it('docsearch reindex re-embeds a stopped data dir and refuses to run beside a daemon', async () => {
    const beside = await runCli(['reindex', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE]);
    expect(beside.code).toBe(1);
    expect(beside.stderr).toMatch(/another docsearch daemon \(pid \d+\) is using/);
    expect(beside.stderr).toContain('hint: a running daemon re-indexes through POST /api/v1/reindex');
    await d!.stop();
    d = undefined;

    const same = await runCli(['reindex', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE]);
    expect(same.code).toBe(0);
    expect(same.stderr).toBe(`the index is already built with ${BUILTIN_ID}: nothing to do\n`);

    pretendBuiltWith(dataDir, 'openai:text-embedding-3-small');
    const res = await runCli(['reindex', '--data-dir', dataDir, '--model-cache-dir', TEST_MODEL_CACHE], { timeoutMs: 120_000 });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`re-embedding the index: openai:text-embedding-3-small → ${BUILTIN_ID}`);
    expect(res.stderr).toMatch(new RegExp(`done: \\d+ chunks re-embedded with ${BUILTIN_ID}\\n$`));
    const info = JSON.parse(readFileSync(join(dataDir, 'lancedb', 'chunks-index.json'), 'utf8'));
    expect(info.embedderId).toBe(BUILTIN_ID);
  }, 180_000);
});
