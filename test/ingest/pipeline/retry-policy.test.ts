/**
 * The retry policy (docs/ingest.md, "Queue and worker"): a transient failure is retried with a backoff of
 * 5 s × 2^(attempt−1), and after the fifth attempt the document fails, saying it gave up. End to end: the daemon
 * embeds with an OpenAI-compatible server — a mock of that remote service (it cannot run here), speaking its
 * documented wire format — that answers every request 503, a failure that can go away. The daemon's own log says
 * when each retry is due (`ingest.failed`: `attempts`, `retry_at`), and the mock sees each attempt come.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../../helpers/daemon.js';

describe('retrying a document whose failure may go away', () => {
  let d: Daemon;
  let user: TestUser;
  let mock: Server;
  const calls: number[] = [];

  beforeAll(async () => {
    mock = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls.push(Date.now());
        res.statusCode = 503;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: { message: 'the model is overloaded, try again', type: 'server_error' } }));
      });
    });
    await new Promise<void>((r) => mock.listen(0, '127.0.0.1', () => r()));
    const port = (mock.address() as AddressInfo).port;
    d = await startDaemon({ args: ['--embedder', 'openai:mock-embed', '--openai-base-url', `http://127.0.0.1:${port}`] });
    user = await addUser(d);
  });
  afterAll(async () => {
    expect(await d?.stop()).toBe(0);
    if (d) removeDir(d.dataDir);
    await new Promise((r) => mock?.close(r));
  });

  it('backs off 5, 10, 20 and 40 s between its five attempts, then fails saying it gave up', async () => {
    const form = new FormData();
    form.append('file', new Blob(['The lock keeper opened the upper gate at dawn.\n']), 'lock.txt');
    const up = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    expect(up.status).toBe(202);
    const id = ((await up.json()) as { documents: { id: string }[] }).documents[0]!.id;
    await expect.poll(async () => (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body.status, { timeout: 150_000, interval: 500 }).toBe('failed');
    const doc = (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body;
    expect(doc.error).toMatch(/\(gave up after 5 attempts\)$/);
    expect(doc.error).toContain('the model is overloaded');

    // Each failed attempt is logged; the first four with when the next is due.
    const failures = d
      .stdout()
      .split('\n')
      .filter((l) => l.includes('"event":"ingest.failed"') && l.includes(id))
      .map((l) => JSON.parse(l) as { attempts: number; retry_at?: string; time: string });
    expect(failures.map((f) => f.attempts)).toEqual([1, 2, 3, 4, 5]);
    const waits = failures.slice(0, 4).map((f) => (Date.parse(f.retry_at!) - Date.parse(f.time)) / 1000);
    for (const [i, wait] of waits.entries()) expect(Math.abs(wait - 5 * 2 ** i), `wait ${i + 1}: ${waits.join(', ')} s`).toBeLessThan(1);
    expect(failures[4]!.retry_at).toBeUndefined();
    // And no attempt came before it was due: the model was asked again only after each wait.
    const starts = failures.map((f) => Date.parse(f.time));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!, `between attempts ${i} and ${i + 1}`).toBeGreaterThanOrEqual(5 * 2 ** (i - 1) * 1000 - 500);
    expect(calls.length).toBeGreaterThanOrEqual(5);

    // Metrics (docs/operations.md): the four attempts queued again with a backoff, and the one document failed for good.
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    expect(metrics).toMatch(/^docsearch_ingest_retries_total 4$/m);
    expect(metrics).toMatch(/^docsearch_documents_ingested_total\{outcome="failed"\} 1$/m);
    expect(metrics).toMatch(/^docsearch_documents_ingested_total\{outcome="ready"\} 0$/m);
  }, 200_000);
});
