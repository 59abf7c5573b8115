/**
 * The retry policy (docs/ingest.md, "Queue and worker"): a transient failure is retried with a backoff of
 * --retry-base (5 s) × 2^(attempt−1), and after the fifth attempt the document fails, saying it gave up. End to end:
 * the daemon embeds with an OpenAI-compatible server — a mock of that remote service (it cannot run here), speaking
 * its documented wire format — that answers every request 503, a failure that can go away. The daemon's own log says
 * when each retry is due (`ingest.failed`: `attempts`, `retry_at`), and the mock sees each attempt come. A daemon
 * with the default base shows its first two waits (5 and 10 s); beside it one with a 1 s base runs all five
 * attempts, the same schedule scaled down, in 15 s where the default's takes 75.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../../helpers/daemon.js';

/** The ingest.failed lines (docs/events.md) the daemon logged for document `id`. */
function failures(d: Daemon, id: string): { attempts: number; retry_at?: string; time: string }[] {
  return d
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"event":"ingest.failed"') && l.includes(id))
    .map((l) => JSON.parse(l) as { attempts: number; retry_at?: string; time: string });
}

/** Seconds from each logged failure to the retry it announced. */
const waits = (logged: { retry_at?: string; time: string }[]) => logged.map((f) => (Date.parse(f.retry_at!) - Date.parse(f.time)) / 1000);

describe('retrying a document whose failure may go away', () => {
  let fast: Daemon;
  let standard: Daemon;
  let user: TestUser;
  let standardUser: TestUser;
  let mock: Server;
  /** The paths the mock was asked on: each daemon's base URL has its own prefix. */
  const calls: string[] = [];

  beforeAll(async () => {
    mock = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls.push(req.url ?? '');
        res.statusCode = 503;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: { message: 'the model is overloaded, try again', type: 'server_error' } }));
      });
    });
    await new Promise<void>((r) => mock.listen(0, '127.0.0.1', () => r()));
    const port = (mock.address() as AddressInfo).port;
    const embedder = (prefix: string) => ['--embedder', 'openai:mock-embed', '--openai-base-url', `http://127.0.0.1:${port}/${prefix}`];
    [fast, standard] = await Promise.all([startDaemon({ args: [...embedder('fast'), '--retry-base', '1'] }), startDaemon({ args: embedder('standard') })]);
    [user, standardUser] = await Promise.all([addUser(fast), addUser(standard)]);
  });
  afterAll(async () => {
    for (const d of [fast, standard]) {
      expect(await d?.stop()).toBe(0);
      if (d) removeDir(d.dataDir);
    }
    await new Promise((r) => mock?.close(r));
  });

  async function upload(d: Daemon, token: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob(['The lock keeper opened the upper gate at dawn.\n']), 'lock.txt');
    const up = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(up.status).toBe(202);
    return ((await up.json()) as { documents: { id: string }[] }).documents[0]!.id;
  }

  it('backs off base × 1, 2, 4 and 8 (5, 10, 20 and 40 s by default) between its five attempts, then fails saying it gave up', async () => {
    const [id, standardId] = await Promise.all([upload(fast, user.apiKey), upload(standard, standardUser.apiKey)]);
    // The default base: 5 s, then 10 s (the second failure comes after the first wait).
    await expect.poll(() => failures(standard, standardId).length, { timeout: 30_000, interval: 250 }).toBeGreaterThanOrEqual(2);
    expect(waits(failures(standard, standardId).slice(0, 2)).map((w) => Math.round(w))).toEqual([5, 10]);

    const base = 1;
    await expect.poll(async () => (await api(fast, `/api/v1/documents/${id}`, { token: user.apiKey })).body.status, { timeout: 60_000, interval: 250 }).toBe('failed');
    const doc = (await api(fast, `/api/v1/documents/${id}`, { token: user.apiKey })).body;
    expect(doc.error).toMatch(/\(gave up after 5 attempts\)$/);
    expect(doc.error).toContain('the model is overloaded');

    // Each failed attempt is logged; the first four with when the next is due.
    const logged = failures(fast, id);
    expect(logged.map((f) => f.attempts)).toEqual([1, 2, 3, 4, 5]);
    // A wait is read as retry_at less the log line's time, and the line is written after the requeue is stored: the
    // write's time comes off it (a loaded disk's), never on. Another schedule is a second or more away from this one.
    const due = waits(logged.slice(0, 4));
    for (const [i, wait] of due.entries()) {
      expect(wait, `wait ${i + 1}: ${due.join(', ')} s`).toBeLessThanOrEqual(base * 2 ** i);
      expect(wait, `wait ${i + 1}: ${due.join(', ')} s`).toBeGreaterThan(base * 2 ** i - 0.5);
    }
    expect(logged[4]!.retry_at).toBeUndefined();
    // And no attempt came before it was due: the model was asked again only after each wait.
    const starts = logged.map((f) => Date.parse(f.time));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!, `between attempts ${i} and ${i + 1}`).toBeGreaterThanOrEqual(base * 2 ** (i - 1) * 1000 - 100);
    expect(calls.filter((c) => c.startsWith('/fast/')).length).toBeGreaterThanOrEqual(5);

    // Metrics (docs/operations.md): the four attempts queued again with a backoff, and the one document failed for good.
    const metrics = await (await fetch(`${fast.url}/metrics`)).text();
    expect(metrics).toMatch(/^docsearch_ingest_retries_total 4$/m);
    expect(metrics).toMatch(/^docsearch_documents_ingested_total\{outcome="failed"\} 1$/m);
    expect(metrics).toMatch(/^docsearch_documents_ingested_total\{outcome="ready"\} 0$/m);
  }, 120_000);
});
