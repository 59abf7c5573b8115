/**
 * HttpReranker against a local node:http server speaking the Cohere/Jina rerank wire format
 * (POST /v1/rerank {model, query, documents, top_n} → {results: [{index, relevance_score}]}, results
 * sorted by relevance, not by index).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { HttpReranker } from '../../src/models/http-reranker.js';
import { closedPortUrl, json, never, startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(() => server.close());

const make = (url: string, extra: Partial<ConstructorParameters<typeof HttpReranker>[0]> = {}) =>
  new HttpReranker({ url, model: 'jina-reranker-v2-base-multilingual', retries: 1, retryBaseDelayMs: 1, timeoutMs: 2_000, ...extra });

describe('http (Cohere/Jina) reranker', () => {
  it('posts {model, query, documents, top_n} and maps results back to input order', async () => {
    server.handle((_req, res) =>
      json(res, 200, {
        model: 'jina-reranker-v2-base-multilingual',
        results: [
          { index: 2, relevance_score: 0.91, document: { text: 'c' } },
          { index: 0, relevance_score: 0.42 },
          { index: 1, relevance_score: 0.03 },
        ],
      }),
    );
    const r = make(server.url, { apiKey: 'jina_key' });
    const scores = await r.rerank('q', ['a', 'b', 'c']);
    expect(scores).toEqual([0.42, 0.03, 0.91]);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/rerank',
      body: { model: 'jina-reranker-v2-base-multilingual', query: 'q', documents: ['a', 'b', 'c'], top_n: 3 },
    });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer jina_key');
    expect(r.status()).toMatchObject({ loaded: true });
  });

  it('scores documents the server left out last', async () => {
    server.handle((_req, res) => json(res, 200, { results: [{ index: 1, relevance_score: 0.5 }] }));
    expect(await make(`${server.url}/rerank`).rerank('q', ['a', 'b'])).toEqual([Number.NEGATIVE_INFINITY, 0.5]);
    expect(server.requests[0]!.path).toBe('/rerank');
  });

  it('keeps a query string after the endpoint path (an api-version): it was appended to, /rerank?api-version=2/v1/rerank', async () => {
    server.handle((_req, res) => json(res, 200, { results: [{ index: 0, relevance_score: 0.5 }] }));
    expect(await make(`${server.url}/v1/rerank?api-version=2`).rerank('q', ['a'])).toEqual([0.5]);
    expect(await make(`${server.url}/?api-version=3`).rerank('q', ['a'])).toEqual([0.5]);
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/rerank?api-version=2', '/v1/rerank?api-version=3']);
  });

  it('reports an unreachable endpoint (transient)', async () => {
    const base = await closedPortUrl();
    const err = await make(base, { retries: 0 }).rerank('q', ['a']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Rerank endpoint not reachable at ${base}/v1/rerank`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('reports a 4xx without retrying', async () => {
    server.handle((_req, res) => json(res, 422, { detail: 'documents must not be empty strings' }));
    const err = await make(server.url).rerank('q', ['']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Rerank endpoint at ${server.url}/v1/rerank answered HTTP 422: documents must not be empty strings`);
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 5xx once, then fails transiently', async () => {
    server.handle((_req, res) => json(res, 503, { message: 'overloaded' }));
    const err = await make(server.url).rerank('q', ['a']).catch((x: unknown) => x);
    expect(server.requests).toHaveLength(2);
    expect((err as ModelError).message).toBe(`Rerank endpoint at ${server.url}/v1/rerank answered HTTP 503: overloaded`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('times out (transient)', async () => {
    server.handle(never);
    const err = await make(server.url, { timeoutMs: 150, retries: 0 }).rerank('q', ['a']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Rerank endpoint at ${server.url}/v1/rerank did not answer within 150 ms`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('stops at once when the caller aborts: the request is closed, not left to its timeout', async () => {
    let closedEarly = 0;
    server.handle((_req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) closedEarly++;
      });
    });
    const ac = new AbortController();
    const started = Date.now();
    const pending = make(server.url, { timeoutMs: 5_000 }).rerank('q', ['a'], { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('client went away')), 50);
    // The error alone proves little: after the timeout the caller's abort reason is thrown all the same.
    await expect(pending).rejects.toThrow('client went away');
    expect(Date.now() - started).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a malformed answer', async () => {
    const why = 'a result lacks a valid `index` or `relevance_score`';
    const cases: [string, string][] = [
      ['{"results":[{"index":7,"relevance_score":1}]}', why],
      // These were TypeErrors (reading `index` of null, `results` of null).
      ['{"results":[null]}', why],
      ['null', 'no `results` array'],
      ['{"results":[{"index":0.5,"relevance_score":1}]}', why],
      ['{"results":[{"index":0,"relevance_score":1e999}]}', why],
    ];
    for (const [body, message] of cases) {
      server.handle((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
      const err = await make(server.url).rerank('q', ['a']).catch((x: unknown) => x);
      expect(err, body).toBeInstanceOf(ModelError);
      expect((err as ModelError).message, body).toBe(`${server.url}/v1/rerank returned a malformed rerank answer: ${message}`);
      expect((err as ModelError).transient).toBe(false);
    }
  });
});
