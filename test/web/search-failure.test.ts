/**
 * A search that fails on the server (here: the embedding service is down for the query) answers with the search page
 * itself, not a bare error page: the query, the project, the mode, the filters and the saved searches stay, the page
 * says the search failed and to try again with the request id, keeps the 503, and never shows the internal message,
 * which the log has under that request id.
 *
 * The daemon embeds with an OpenAI-compatible server: a stand-in for that remote service (it can't run here), speaking
 * its documented wire format (POST /v1/embeddings {model, input} → {data: [{index, embedding}]}), which answers
 * documents and refuses, as an overloaded service does (503), any text holding the word "outage".
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';
import { hashedVector } from '../helpers/hashed-vectors.js';

const DIM = 16;
const INTERNAL = 'embedding backend overloaded: shard 7 unreachable';

const vector = (text: string) => hashedVector(text, DIM);

describe('a search that fails on the server', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  let stand: Server;
  let project: string;

  beforeAll(async () => {
    stand = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        const { input } = JSON.parse(body || '{}') as { input?: string[] };
        if (req.method !== 'POST' || req.url !== '/v1/embeddings' || !input) {
          res.statusCode = 404;
          return res.end('{"error":{"message":"not found"}}');
        }
        if (input.some((t) => /outage/i.test(t))) {
          res.statusCode = 503;
          return res.end(JSON.stringify({ error: { message: INTERNAL, type: 'server_error' } }));
        }
        res.end(JSON.stringify({ object: 'list', data: input.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })) }));
      });
    });
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
    d = await startDaemon({ args: ['--embedder', 'openai:stand-in', '--openai-base-url', `http://127.0.0.1:${(stand.address() as AddressInfo).port}`] });
    alice = await addUser(d);
    project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Harbour' } })).body.id;
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'log.txt', bytes: Buffer.from('The harbour master logged the storm at the pier.\n') }], { projectId: project, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.documents[0].status).toBe('ready');
    const saved = await api(d, '/api/v1/saved-searches', { token: alice.apiKey, body: { name: 'Pier logs', search: { query: 'pier' } } });
    expect(saved.status).toBe(201);
    web = await loggedIn(d, alice);
  }, 120_000);
  afterAll(async () => {
    expect(await d?.stop()).toBe(0);
    if (d) removeDir(d.dataDir);
    await new Promise((r) => stand?.close(r));
  });

  it('is the search page again, with the query, project, filters and sidebar, saying to retry, with the request id', async () => {
    const res = await web.get(`/search?q=${encodeURIComponent('harbour outage')}&project=${project}&labels=logs&view=passages`);
    expect(res.status).toBe(503);
    const requestId = res.headers.get('x-request-id')!;
    expect(requestId).toBeTruthy();
    expect(res.text).not.toContain('Something went wrong');
    expect(res.text).toContain('<input type="search" name="q" value="harbour outage"');
    expect(res.text).toContain(`<option value="${project}" selected>Harbour</option>`);
    expect(res.text).toContain('<option value="passages" selected>Passages</option>');
    expect(res.text).toContain('<input type="hidden" name="labels" value="logs">');
    expect(res.text).toMatch(/<nav class="saved-searches"[^]*<bdi>Pier logs<\/bdi>/);
    expect(res.text).toContain(
      `<p class="error" role="alert">The search failed: a service it needs is unavailable or busy right now. Try again in a moment; if it keeps failing, give your administrator the request id ${requestId}.</p>`,
    );
    expect(res.text).not.toContain('overloaded');
    expect(res.text).not.toContain('shard 7');
    // The cause is in the log under the request id.
    const line = await d.logLine((l) => l.includes(requestId) && l.includes('search failed'));
    expect(line).toContain('shard 7');
    // Only that query fails: another is embedded and answered.
    const other = await web.get(`/search?q=harbour&project=${project}`);
    expect(other.status).toBe(200);
    expect(other.text).toContain('log.txt');
  });
});
