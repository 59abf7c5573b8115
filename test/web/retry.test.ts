import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { loggedIn } from './library-client.js';
import { hashedVector } from '../helpers/hashed-vectors.js';

/**
 * Retrying a failed document (#21), end to end: the failure has to be one that can go away, so the daemon
 * embeds with an OpenAI-compatible server — a mock of that remote service (it can't run here), speaking its
 * documented wire format (POST /v1/embeddings {model, input} → {data: [{index, embedding}]}). It first refuses
 * the input (400: a permanent failure), then answers; retry runs the document's own job again.
 */
const DIM = 16;

const vector = (text: string) => hashedVector(text, DIM);

describe('retrying a failed document', () => {
  let d: Daemon;
  let user: TestUser;
  let mock: Server;
  let accept = false;
  let requests = 0;

  beforeAll(async () => {
    mock = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        requests++;
        res.setHeader('content-type', 'application/json');
        if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
          res.statusCode = 404;
          return res.end('{"error":{"message":"not found"}}');
        }
        if (!accept) {
          res.statusCode = 400;
          return res.end(JSON.stringify({ error: { message: 'this input is not accepted by the model', type: 'invalid_request_error' } }));
        }
        const { input } = JSON.parse(body) as { input: string[] };
        res.end(JSON.stringify({ object: 'list', data: input.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })) }));
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

  const get = async (id: string) => (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body;
  async function settle(id: string) {
    await expect.poll(async () => (await get(id)).status, { timeout: 60_000, interval: 200 }).toMatch(/^(ready|failed)$/);
    return get(id);
  }

  it('a failed document is queued again through the API and the page, and is processed when the cause is gone', async () => {
    const form = new FormData();
    form.append('file', new Blob(['The harbour master compared the logbook with the customs ledger.\n']), 'ledger.txt');
    form.append('file', new Blob(['Fog rolled in from the sea and the keeper wound the lens.\n']), 'fog.txt');
    const up = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    const [ledger, fog] = ((await up.json()) as { documents: { id: string }[] }).documents;
    const failed = await settle(ledger!.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('this input is not accepted by the model');
    expect((await settle(fog!.id)).status).toBe('failed');

    // Only failed documents can be retried; others' documents are not found.
    const other = await addUser(d);
    expect((await api(d, `/api/v1/documents/${ledger!.id}/retry`, { method: 'POST', token: other.apiKey })).status).toBe(404);

    accept = true;
    const seen = requests;
    const res = await api(d, `/api/v1/documents/${ledger!.id}/retry`, { method: 'POST', token: user.apiKey });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: ledger!.id, status: 'queued', error: null, progress: 0 });
    const ready = await settle(ledger!.id);
    expect(ready).toMatchObject({ status: 'ready', error: null, chunk_count: 1 });
    expect(requests).toBeGreaterThan(seen);
    const again = await api(d, `/api/v1/documents/${ledger!.id}/retry`, { method: 'POST', token: user.apiKey });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('only a failed document can be retried (this one is ready)');
    const found = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'customs ledger', mode: 'keyword' } });
    expect(found.body.results.map((r: { document: { id: string } }) => r.document.id)).toEqual([ledger!.id]);

    // From the project page: the failed row has a Retry button; it says what it did.
    const web = await loggedIn(d, user);
    const projectId = (await get(fog!.id)).project_id;
    const page = await web.get(`/projects/${projectId}`);
    expect(page.text).toContain(`action="/documents/${fog!.id}/retry"`);
    expect(page.text).not.toContain(`action="/documents/${ledger!.id}/retry"`);
    const posted = await web.post(`/documents/${fog!.id}/retry`, { _csrf: web.csrf, return_to: `/projects/${projectId}` });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`/projects/${projectId}`);
    expect((await web.get(`/projects/${projectId}`)).text).toContain('<p class="notice flash" role="status">“fog.txt” is queued again.</p>');
    expect((await settle(fog!.id)).status).toBe('ready');
  }, 180_000);
});
