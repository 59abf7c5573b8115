import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, waitPreloaded } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

describe('GET|HEAD /api/v1/health', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });

  it('needs no credential and lists every component as up', async () => {
    const res = await api(d, '/api/v1/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.version).toMatch(/^\d+\.\d+\.\d+/);
    // The database component names its engine (the suite also runs with the daemon on PostgreSQL).
    expect(res.body.components).toMatchObject({ database: { status: 'up', engine: d.databaseUrl ? 'postgresql' : 'sqlite' }, vector_store: { status: 'up', engine: 'lancedb', storage: 'local' } });
    // The components the docs name (architecture.md, models.md, search.md, ingest.md, operations.md, RELIABILITY.md),
    // all of them: a probe that went missing would otherwise leave health "ok" without it.
    expect(Object.keys(res.body.components).sort()).toEqual(
      ['backfill', 'database', 'embedder', 'legacy_office', 'mail', 'queue', 'reranker', 'search_index', 'storage', 'vector_store'],
    );
    for (const [name, c] of Object.entries(res.body.components) as [string, { status: string }][]) expect(c.status, name).toBe('up');
    // What each says beside up/down (models.md: the model's id, dimension and languages; search.md: the reranker's id).
    await expect.poll(async () => (await api(d, '/api/v1/health')).body.components.embedder, { timeout: 30_000 }).toMatchObject({
      loaded: true,
      id: expect.stringMatching(/^builtin:all-MiniLM-L6-v2/),
      dimension: 384,
      languages: ['en'],
    });
    expect(res.body.components.reranker).toMatchObject({ id: expect.any(String) });
    expect(res.body.components.legacy_office).toHaveProperty('converter');
  });

  it('says when the search indexes are preloaded', async () => {
    await waitPreloaded(d, 30_000);
    expect((await api(d, '/api/v1/health')).body.components.search_index).toEqual({ status: 'up', preload: 'done', keyword: 'keyword_text' });
  });

  it('ignores a credential, even a bad one', async () => {
    expect((await api(d, '/api/v1/health', { token: 'dsk_not-a-key' })).status).toBe(200);
  });

  it('answers HEAD with the status and no body', async () => {
    const res = await fetch(`${d.url}/api/v1/health`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('reveals no counts, paths or secrets to anonymous callers', async () => {
    const u = await addUser(d);
    await api(d, '/api/v1/projects', { token: u.apiKey, body: { name: 'secret project' } });
    const text = JSON.stringify((await api(d, '/api/v1/health')).body);
    expect(text).not.toContain(d.dataDir);
    expect(text).not.toContain(u.email);
    expect(text).not.toContain('secret project');
    expect(text).not.toMatch(/count/i);
  });

  it('turns 503 degraded while the vector store is unavailable, and recovers', async () => {
    const dir = join(d.dataDir, 'lancedb');
    const away = join(d.dataDir, 'lancedb.away');
    renameSync(dir, away);
    try {
      const res = await api(d, '/api/v1/health', { headers: { 'x-request-id': 'degraded-check' } });
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('degraded');
      expect(res.body.components.vector_store.status).toBe('down');
      expect(res.body.components.database.status).toBe('up');
      const head = await fetch(`${d.url}/api/v1/health`, { method: 'HEAD' });
      expect(head.status).toBe(503);
    } finally {
      renameSync(away, dir);
    }
    const back = await api(d, '/api/v1/health');
    expect(back.status).toBe(200);
    expect(back.body.status).toBe('ok');
    // A passing check is logged only at debug (api-errors.test.ts); a failing one is in the access log.
    const line = await d.logLine((l) => l.includes('"req_id":"degraded-check"') && l.includes('"msg":"request"'));
    expect(JSON.parse(line)).toMatchObject({ path: '/api/v1/health', status: 503 });
  });
});
