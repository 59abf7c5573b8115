/**
 * OllamaEmbedder against a local node:http server speaking Ollama's documented wire format
 * (POST /api/embed {model, input: string[], truncate} → {model, embeddings: number[][]}; errors are
 * {error: "..."} with the HTTP status, e.g. 404 `model "x" not found, try pulling it first`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { OllamaEmbedder } from '../../src/models/ollama-embedder.js';
import { createEmbedder } from '../../src/models/registry.js';
import { closedPortUrl, json, never, startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(() => server.close());

const make = (host: string, extra: Partial<ConstructorParameters<typeof OllamaEmbedder>[0]> = {}) =>
  new OllamaEmbedder({ model: 'nomic-embed-text', host, retries: 2, retryBaseDelayMs: 1, timeoutMs: 2_000, ...extra });

describe('ollama embedder', () => {
  it('sends one batched /api/embed request and returns unit vectors in order', async () => {
    server.handle((req, res) => {
      const input = (req.body as { input: string[] }).input;
      json(res, 200, { model: 'nomic-embed-text', embeddings: input.map((t) => [t.length, 0, 0, 3]) });
    });
    const e = make(server.url);
    const out = await e.embed(['a', 'bbbb', 'cc'], { kind: 'passage' });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/embed',
      body: { model: 'nomic-embed-text', input: ['a', 'bbbb', 'cc'], truncate: true },
    });
    expect(out.map((v) => Array.from(v))).toEqual([
      Array.from(Float32Array.of(1 / Math.sqrt(10), 0, 0, 3 / Math.sqrt(10))),
      Array.from(Float32Array.of(0.8, 0, 0, 0.6)),
      Array.from(Float32Array.of(2 / Math.sqrt(13), 0, 0, 3 / Math.sqrt(13))),
    ]);
    expect(e.id).toBe('ollama:nomic-embed-text');
    expect(e.dimension).toBe(4);
    expect(e.status()).toEqual({ loaded: true, id: 'ollama:nomic-embed-text', dimension: 4 });
  });

  it('splits large inputs into batches', async () => {
    server.handle((req, res) => json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => [1, 0]) }));
    const out = await make(server.url, { batchSize: 2 }).embed(['1', '2', '3', '4', '5'], { kind: 'passage' });
    expect(out).toHaveLength(5);
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('says Ollama is not reachable when nothing listens (transient)', async () => {
    const e = make(await closedPortUrl(), { retries: 0 });
    const err = await e.init().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).message).toMatch(/^Ollama not reachable at http:\/\/127\.0\.0\.1:\d+ — is `ollama serve` running\?$/);
    expect((err as ModelError).transient).toBe(true);
    expect(e.status()).toMatchObject({ loaded: false, error: (err as Error).message });
  });

  it('tells the operator to pull a missing model (404, not transient, no retry)', async () => {
    server.handle((_req, res) => json(res, 404, { error: 'model "nomic-embed-text" not found, try pulling it first' }));
    const err = await make(server.url).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe('model nomic-embed-text not pulled — run `ollama pull nomic-embed-text`');
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('does not blame the model for a 404 that is not about a model (an Ollama without /api/embed, a wrong host)', async () => {
    // What Go's http.NotFound answers: Ollama before /api/embed existed, or another server at that address.
    server.handle((_req, res) => res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n'));
    const err = await make(server.url).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} answered HTTP 404: 404 page not found`);
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries 5xx with backoff, then fails transiently', async () => {
    server.handle((_req, res) => json(res, 500, { error: 'llama runner process has terminated' }));
    const err = await make(server.url).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect(server.requests).toHaveLength(3);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} answered HTTP 500: llama runner process has terminated`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('recovers when a retry succeeds', async () => {
    let calls = 0;
    server.handle((_req, res) => (++calls === 1 ? json(res, 503, { error: 'busy' }) : json(res, 200, { embeddings: [[0, 2]] })));
    const [v] = await make(server.url).embed(['x'], { kind: 'query' });
    expect(Array.from(v!)).toEqual([0, 1]);
    expect(server.requests).toHaveLength(2);
  });

  it('times out a request that never answers (transient)', async () => {
    server.handle(never);
    const err = await make(server.url, { timeoutMs: 150, retries: 0 }).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} did not answer within 150 ms`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('sends 32 texts per request by default (docs/models.md)', async () => {
    server.handle((req, res) => json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => [1, 0]) }));
    const texts = Array.from({ length: 33 }, (_, i) => `text ${i}`);
    expect(await make(server.url).embed(texts, { kind: 'passage' })).toHaveLength(33);
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([texts.slice(0, 32), texts.slice(32)]);
  });

  it('refuses vectors whose dimension changed from the one it learned (a model swapped under the same name)', async () => {
    let dim = 4;
    server.handle((req, res) => json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => Array.from({ length: dim }, () => 1)) }));
    const e = make(server.url);
    await e.init();
    expect(e.dimension).toBe(4);
    dim = 3;
    const err = await e.embed(['a'], { kind: 'passage' }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).message).toBe('ollama:nomic-embed-text changed dimension from 4 to 3');
    expect((err as ModelError).transient).toBe(false);
    // Not retried (a model does not change back by itself), and the learned dimension stands.
    expect(server.requests).toHaveLength(2);
    expect(e.dimension).toBe(4);
    expect(e.status()).toMatchObject({ dimension: 4, error: 'ollama:nomic-embed-text changed dimension from 4 to 3' });
  });

  it('refuses ragged, empty, non-numeric or non-list vectors as malformed, naming the server (not transient)', async () => {
    const cases: [unknown, string][] = [
      [[[1, 0], [1]], 'vector 1 is not a list of 2 finite numbers'],
      [[[], []], 'vector 0 is empty or not a list'],
      [[[1, 'x'], [0, 1]], 'vector 0 is not a list of 2 finite numbers'],
      // Strings have a length too: they failed with a TypeError (`v.some is not a function`).
      [['ab', 'cd'], 'vector 0 is empty or not a list'],
      [[[1, 0], 'cd'], 'vector 1 is not a list of 2 finite numbers'],
      [[null, [1, 0]], 'vector 0 is empty or not a list'],
    ];
    for (const [embeddings, why] of cases) {
      server.handle((_req, res) => json(res, 200, { embeddings }));
      const e = make(server.url);
      const err = await e.embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
      expect(err, JSON.stringify(embeddings)).toBeInstanceOf(ModelError);
      expect((err as ModelError).message).toBe(`Ollama at ${server.url} sent a malformed embeddings answer: ${why}`);
      expect((err as ModelError).transient).toBe(false);
      expect(e.dimension).toBe(0);
    }
    // A number too large for a double (JSON has no Infinity) would make every component of the unit vector NaN.
    server.handle((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"embeddings":[[1e999,0],[1,0]]}'));
    const err = await make(server.url).embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} sent a malformed embeddings answer: vector 0 is not a list of 2 finite numbers`);
  });

  it('rejects an answer with the wrong number of vectors', async () => {
    server.handle((_req, res) => json(res, 200, { embeddings: [[1, 0]] }));
    const err = await make(server.url).embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} sent a malformed embeddings answer: 1 vectors for 2 texts`);
    expect((err as ModelError).transient).toBe(false);
  });

  it('says what was wrong when a 200 answer has no `embeddings` (it was a TypeError)', async () => {
    for (const [answer, said] of [
      [{}, ''],
      [{ error: 'failed to load model' }, ' (it said: failed to load model)'],
      [null, ''],
    ] as const) {
      server.handle((_req, res) => json(res, 200, answer));
      const e = make(server.url);
      const err = await e.embed(['a'], { kind: 'passage' }).catch((x: unknown) => x);
      expect(err, JSON.stringify(answer)).toBeInstanceOf(ModelError);
      expect((err as ModelError).message).toBe(`Ollama at ${server.url} sent a malformed embeddings answer: no \`embeddings\` list${said}`);
      expect((err as ModelError).transient).toBe(false);
      expect(server.requests).toHaveLength(1);
      expect(e.status()).toMatchObject({ loaded: false, error: (err as Error).message });
    }
  });

  it("sends none of a call's other batches once one failed (a failing server gets no more load)", async () => {
    server.handle((req, res) =>
      server.requests.length === 2
        ? json(res, 400, { error: 'input length exceeds the context length' })
        : json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => [1, 0]) }),
    );
    const e = make(server.url, { batchSize: 1 });
    const err = await e.embed(['1', '2', '3', '4', '5'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} answered HTTP 400: input length exceeds the context length`);
    // Give batches that would still be sent time to arrive.
    await new Promise((r) => setTimeout(r, 200));
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([['1'], ['2']]);
    // The embedder is not poisoned: the next call runs.
    server.handle((req, res) => json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => [1, 0]) }));
    expect(await e.embed(['6', '7'], { kind: 'passage' })).toHaveLength(2);
  });

  it('keeps the path of an ollamaHost behind a reverse proxy (https://host/ollama/ → /ollama/api/embed)', async () => {
    server.handle((req, res) => json(res, 200, { embeddings: (req.body as { input: string[] }).input.map(() => [1, 0]) }));
    const e = createEmbedder({
      embedder: 'ollama:nomic-embed-text',
      reranker: 'none',
      modelCacheDir: '',
      ollamaHost: `${server.url}/ollama/`,
      openaiBaseUrl: 'https://api.openai.com',
      retries: 0,
    });
    await e.init();
    expect(server.requests.map((r) => r.path)).toEqual(['/ollama/api/embed']);
  });
});
