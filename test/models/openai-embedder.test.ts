/**
 * OpenAIEmbedder against a local node:http server speaking the OpenAI embeddings wire format
 * (POST /v1/embeddings {model, input: string[]} → {object: "list", data: [{object, index, embedding}]};
 * errors are {error: {message, type}} with the HTTP status).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { OpenAIEmbedder, embeddingsUrl } from '../../src/models/openai-embedder.js';
import { closedPortUrl, json, never, startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(() => server.close());

const where = (): string => `OpenAI-compatible embeddings endpoint at ${server.url}/v1/embeddings`;

const make = (baseUrl: string, extra: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) =>
  new OpenAIEmbedder({ model: 'text-embedding-3-small', baseUrl, retries: 2, retryBaseDelayMs: 1, timeoutMs: 2_000, ...extra });

describe('openai-compatible embedder', () => {
  it('posts {model, input} with the bearer key and orders results by index', async () => {
    server.handle((req, res) => {
      const input = (req.body as { input: string[] }).input;
      // Out of order on purpose: clients must use `index`.
      const data = input.map((t, index) => ({ object: 'embedding', index, embedding: [0, t.length] })).reverse();
      json(res, 200, { object: 'list', data, model: 'text-embedding-3-small', usage: { prompt_tokens: 3, total_tokens: 3 } });
    });
    const e = make(`${server.url}/v1/`, { apiKey: 'sk-test' });
    const out = await e.embed(['a', 'bb'], { kind: 'passage' });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/embeddings',
      body: { model: 'text-embedding-3-small', input: ['a', 'bb'] },
    });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(out.map((v) => Array.from(v))).toEqual([
      [0, 1],
      [0, 1],
    ]);
    expect(e.status()).toEqual({ loaded: true, id: 'openai:text-embedding-3-small', dimension: 2 });
  });

  it('sends no authorization header without a key, and appends /v1 to a bare base URL', async () => {
    server.handle((_req, res) => json(res, 200, { data: [{ index: 0, embedding: [3, 4] }] }));
    const [v] = await make(server.url).embed(['x'], { kind: 'query' });
    expect(Array.from(v!)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(server.requests[0]!.path).toBe('/v1/embeddings');
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(embeddingsUrl('https://api.openai.com/v1')).toBe('https://api.openai.com/v1/embeddings');
  });

  it('reports an unreachable server (transient)', async () => {
    const base = await closedPortUrl();
    const err = await make(base, { retries: 0 }).init().catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`OpenAI-compatible embeddings endpoint not reachable at ${base}/v1/embeddings`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('reports a rejected key without retrying (401), without the key the server quoted', async () => {
    server.handle((_req, res) =>
      json(res, 401, { error: { message: 'Incorrect API key provided: sk-bad.', type: 'invalid_request_error' } }),
    );
    const err = await make(server.url, { apiKey: 'sk-bad' }).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(
      `OpenAI-compatible embeddings endpoint at ${server.url}/v1/embeddings rejected the credentials (HTTP 401): Incorrect API key provided: [redacted].`,
    );
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('reports an unknown model (404, not transient)', async () => {
    server.handle((_req, res) => json(res, 404, { error: { message: 'The model `nope` does not exist', type: 'invalid_request_error' } }));
    const err = await make(server.url).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toMatch(/answered HTTP 404: The model `nope` does not exist$/);
    expect((err as ModelError).transient).toBe(false);
  });

  it('retries 5xx and 429, then fails transiently', async () => {
    server.handle((req, res) => (server.requests.length === 1 ? json(res, 429, { error: { message: 'slow down' } }) : json(res, 502, {})));
    const err = await make(server.url).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect(server.requests).toHaveLength(3);
    expect((err as ModelError).message).toMatch(/answered HTTP 502$/);
    expect((err as ModelError).transient).toBe(true);
  });

  it('times out (transient)', async () => {
    server.handle(never);
    const err = await make(server.url, { timeoutMs: 150, retries: 0 }).embed(['x'], { kind: 'query' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`OpenAI-compatible embeddings endpoint at ${server.url}/v1/embeddings did not answer within 150 ms`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('rejects a malformed answer (not transient, not retried)', async () => {
    server.handle((_req, res) => json(res, 200, { data: [{ index: 0, embedding: [1] }] }));
    const err = await make(server.url).embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`${where()} sent a malformed embeddings answer: 1 embeddings for 2 inputs`);
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
    // Two items for the same input leave the other without a vector (a server that numbers every item 0).
    server.handle((_req, res) => json(res, 200, { data: [{ index: 0, embedding: [1, 0] }, { index: 0, embedding: [0, 1] }] }));
    const twice = await make(server.url).embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
    expect(twice).toBeInstanceOf(ModelError);
    expect((twice as ModelError).message).toBe(`${where()} sent a malformed embeddings answer: no embedding for input 1 (an \`index\` repeats)`);
    expect((twice as ModelError).transient).toBe(false);
  });

  it('sends 64 texts per request by default (docs/models.md)', async () => {
    server.handle((req, res) => json(res, 200, { data: (req.body as { input: string[] }).input.map((_t, index) => ({ index, embedding: [1, 0] })) }));
    const texts = Array.from({ length: 65 }, (_, i) => `text ${i}`);
    expect(await make(server.url).embed(texts, { kind: 'passage' })).toHaveLength(65);
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([texts.slice(0, 64), texts.slice(64)]);
  });

  it('refuses vectors of another dimension than the first answer’s', async () => {
    let dim = 3;
    server.handle((req, res) => json(res, 200, { data: (req.body as { input: string[] }).input.map((_t, index) => ({ index, embedding: Array.from({ length: dim }, () => 1) })) }));
    const e = make(server.url);
    await e.embed(['a'], { kind: 'query' });
    dim = 5;
    const err = await e.embed(['b'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe('openai:text-embedding-3-small changed dimension from 3 to 5');
    expect((err as ModelError).transient).toBe(false);
    expect(e.dimension).toBe(3);
  });

  it('says what was wrong with an answer that is not the documented shape (they were TypeErrors)', async () => {
    const cases: [string, string][] = [
      ['null', 'no `data` array'],
      ['{"data":{"0":[1,0]}}', 'no `data` array'],
      ['{"data":[null,{"index":1,"embedding":[1,0]}]}', 'bad item 0'],
      ['{"data":[{"index":0.5,"embedding":[1,0]},{"index":1,"embedding":[1,0]}]}', 'bad item 0'],
      ['{"data":[{"index":0,"embedding":"AACAPwAAAAA="},{"index":1,"embedding":[1,0]}]}', 'bad item 0'],
      ['{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":["1","0"]}]}', 'vector 1 is not a list of 2 finite numbers'],
      ['{"data":[{"index":0,"embedding":[1e999,0]},{"index":1,"embedding":[1,0]}]}', 'vector 0 is not a list of 2 finite numbers'],
    ];
    for (const [body, why] of cases) {
      server.handle((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
      const err = await make(server.url).embed(['a', 'b'], { kind: 'passage' }).catch((x: unknown) => x);
      expect(err, body).toBeInstanceOf(ModelError);
      expect((err as ModelError).message, body).toBe(`${where()} sent a malformed embeddings answer: ${why}`);
      expect((err as ModelError).transient).toBe(false);
    }
  });

  it('keeps a base URL\'s path prefix and query string: /openai?api-version=2 → /openai/v1/embeddings?api-version=2', async () => {
    server.handle((_req, res) => json(res, 200, { data: [{ index: 0, embedding: [1, 0] }] }));
    await make(`${server.url}/openai?api-version=2`).embed(['x'], { kind: 'query' });
    await make(`${server.url}/proxy/v1/`).embed(['x'], { kind: 'query' });
    expect(server.requests.map((r) => r.path)).toEqual(['/openai/v1/embeddings?api-version=2', '/proxy/v1/embeddings']);
  });

  it("sends none of a call's other batches once one failed", async () => {
    server.handle((req, res) =>
      server.requests.length === 2
        ? json(res, 400, { error: { message: 'maximum context length exceeded', type: 'invalid_request_error' } })
        : json(res, 200, { data: (req.body as { input: string[] }).input.map((_t, index) => ({ index, embedding: [1, 0] })) }),
    );
    const err = await make(server.url, { batchSize: 2 }).embed(['1', '2', '3', '4', '5', '6', '7'], { kind: 'passage' }).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`${where()} answered HTTP 400: maximum context length exceeded`);
    await new Promise((r) => setTimeout(r, 200));
    expect(server.requests).toHaveLength(2);
  });
});
