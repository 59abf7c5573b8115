/**
 * OllamaReranker against a local node:http server speaking Ollama's /api/generate wire format
 * (POST {model, prompt, stream: false, logprobs, top_logprobs, format, options} → {model, response,
 * done, logprobs?: [{token, logprob, top_logprobs: [{token, logprob}]}]}; errors are {error} + status).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ModelError } from '../../src/models/errors.js';
import { OllamaReranker } from '../../src/models/ollama-reranker.js';
import { createReranker } from '../../src/models/registry.js';
import { closedPortUrl, json, never, startWireServer, type WireServer } from './wire-server.js';

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(() => server.close());

const make = (host: string, extra: Partial<ConstructorParameters<typeof OllamaReranker>[0]> = {}) =>
  new OllamaReranker({ model: 'qwen2.5:1.5b', host, retries: 1, retryBaseDelayMs: 1, timeoutMs: 2_000, ...extra });

interface GenerateBody {
  model: string;
  prompt: string;
  stream: boolean;
  logprobs?: boolean;
  format?: unknown;
  options: { temperature: number };
}

/** P(yes) by document: how sure the fake model is that the document is relevant. */
const yesFor = (prompt: string): number => {
  const doc = prompt.split('Document:')[1] ?? '';
  return doc.includes('password') ? 0.9 : doc.includes('revenue') ? 0.05 : 0.5;
};

describe('ollama reranker', () => {
  it('scores yes/no with log-probabilities when the server returns them', async () => {
    server.handle((req, res) => {
      const body = req.body as GenerateBody;
      const p = yesFor(body.prompt);
      json(res, 200, {
        model: body.model,
        response: p > 0.5 ? 'yes' : ' No',
        done: true,
        logprobs: [
          {
            token: p > 0.5 ? 'yes' : ' No',
            logprob: Math.log(Math.max(p, 1 - p)),
            top_logprobs: [
              { token: 'yes', logprob: Math.log(p) },
              { token: ' No', logprob: Math.log(1 - p) },
              { token: 'maybe', logprob: -9 },
            ],
          },
        ],
      });
    });
    const r = make(server.url);
    const scores = await r.rerank('reset password', ['The quarterly revenue grew', 'How to change a password', 'Something else']);
    expect(scores[0]).toBeCloseTo(0.05, 5);
    expect(scores[1]).toBeCloseTo(0.9, 5);
    expect(scores[2]).toBeCloseTo(0.5, 5);
    expect(server.requests).toHaveLength(3);
    const body = server.requests[0]!.body as GenerateBody;
    expect(server.requests[0]!.path).toBe('/api/generate');
    expect(body).toMatchObject({ model: 'qwen2.5:1.5b', stream: false, logprobs: true, options: { temperature: 0, num_predict: 1 } });
    expect(body.prompt).toContain('Query: reset password');
    expect(r.status()).toMatchObject({ loaded: true, id: 'ollama:qwen2.5:1.5b' });
  });

  it('falls back to a schema-constrained 0-10 score when no log-probabilities come back, and remembers it', async () => {
    server.handle((req, res) => {
      const body = req.body as GenerateBody;
      if (body.logprobs) return json(res, 200, { model: body.model, response: 'yes', done: true });
      const score = Math.round(yesFor(body.prompt) * 10);
      json(res, 200, { model: body.model, response: JSON.stringify({ score }), done: true });
    });
    const r = make(server.url, { concurrency: 1 });
    expect(await r.rerank('q', ['password help', 'revenue'])).toEqual([0.9, 0.1]);
    const bodies = server.requests.map((x) => x.body as GenerateBody);
    expect(bodies.map((b) => Boolean(b.logprobs))).toEqual([true, false, false]);
    expect(bodies[1]!.format).toMatchObject({ type: 'object', required: ['score'] });
  });

  it('tells the operator to pull a missing model', async () => {
    server.handle((_req, res) => json(res, 404, { error: "model 'qwen2.5:1.5b' not found" }));
    const err = await make(server.url).rerank('q', ['a']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe('model qwen2.5:1.5b not pulled — run `ollama pull qwen2.5:1.5b`');
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('says Ollama is not reachable (transient)', async () => {
    const host = await closedPortUrl();
    const err = await make(host, { retries: 0 }).init().catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama not reachable at ${host} — is \`ollama serve\` running?`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('retries a 5xx, then fails transiently', async () => {
    server.handle((_req, res) => json(res, 500, { error: 'out of memory' }));
    const err = await make(server.url).rerank('q', ['a']).catch((x: unknown) => x);
    expect(server.requests).toHaveLength(2);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} answered HTTP 500: out of memory`);
    expect((err as ModelError).transient).toBe(true);
  });

  it('times out (transient)', async () => {
    server.handle(never);
    const err = await make(server.url, { timeoutMs: 150, retries: 0 }).rerank('q', ['a']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} did not answer within 150 ms`);
    expect((err as ModelError).transient).toBe(true);
  });

  /** Answers each passage after `ms` (a `fail` passage at once with a 400); counts requests the client gave up on. */
  const slowServer = (ms: number) => {
    const seen = { closedEarly: 0, answered: 0 };
    server.handle((req, res) => {
      res.on('close', () => {
        if (!res.writableFinished) seen.closedEarly++;
      });
      if ((req.body as GenerateBody).prompt.includes('Document: fail')) return json(res, 400, { error: 'prompt too long' });
      setTimeout(() => {
        if (res.destroyed) return;
        seen.answered++;
        json(res, 200, { response: 'yes', done: true, logprobs: [{ token: 'yes', logprob: 0, top_logprobs: [{ token: 'yes', logprob: 0 }] }] });
      }, ms);
    });
    return seen;
  };

  it("aborts a call's other requests once one failed, and sends no more (a failing server gets no more load)", async () => {
    const seen = slowServer(300);
    const err = await make(server.url, { concurrency: 2 }).rerank('q', ['fail', 'a', 'b', 'c', 'd', 'e']).catch((x: unknown) => x);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} answered HTTP 400: prompt too long`);
    // Long enough for the sibling in flight to finish and the next passages to be sent, were they not stopped.
    await new Promise((r) => setTimeout(r, 700));
    expect(server.requests).toHaveLength(2);
    expect(seen).toEqual({ closedEarly: 1, answered: 0 });
  });

  it('aborts the requests in flight and sends no more when the caller aborts (a search past its deadline)', async () => {
    // The server never answers and the client's own time limit is a minute away: only the caller's abort can end the
    // call and close its requests. Aborted once both are in (not after a fixed wait a loaded machine can outrun).
    const closed: string[] = [];
    server.handle((req, res) => res.on('close', () => closed.push((req.body as GenerateBody).prompt)));
    const ac = new AbortController();
    let outcome: unknown;
    make(server.url, { concurrency: 2, timeoutMs: 60_000 })
      .rerank('q', ['a', 'b', 'c', 'd', 'e'], { signal: ac.signal })
      .then((scores) => (outcome = scores), (err: unknown) => (outcome = err));
    await vi.waitFor(() => expect(server.requests).toHaveLength(2), { timeout: 10_000 });
    ac.abort(new Error('deadline passed'));
    await vi.waitFor(() => expect(outcome).toBeInstanceOf(Error), { timeout: 10_000 });
    expect((outcome as Error).message).toBe('deadline passed');
    await vi.waitFor(() => expect(closed).toHaveLength(2), { timeout: 10_000 });
    // Long enough for the next passages to be sent, were they not stopped.
    await new Promise((r) => setTimeout(r, 300));
    expect(server.requests).toHaveLength(2);
  });

  it('says what was wrong when a 200 answer has no `response` (an {error} or {}), and keeps asking for log-probabilities', async () => {
    server.handle((_req, res) => json(res, 200, { error: 'model runner stopped' }));
    const r = make(server.url);
    const err = await r.rerank('q', ['a']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).message).toBe(`Ollama at ${server.url} sent a malformed /api/generate answer: no \`response\` text (it said: model runner stopped)`);
    expect((err as ModelError).transient).toBe(false);
    expect(server.requests).toHaveLength(1);
    // A broken answer says nothing about log-probabilities: the next call still asks for them.
    server.handle((_req, res) => json(res, 200, { response: 'yes', done: true, logprobs: [{ token: 'yes', logprob: 0, top_logprobs: [{ token: 'yes', logprob: 0 }] }] }));
    expect(await r.rerank('q', ['a'])).toEqual([1]);
    expect((server.requests[0]!.body as GenerateBody).logprobs).toBe(true);
  });

  it('keeps the path of an ollamaHost behind a reverse proxy (https://host/ollama/ → /ollama/api/generate)', async () => {
    server.handle((_req, res) => json(res, 200, { response: 'yes', done: true, logprobs: [{ token: 'yes', logprob: 0, top_logprobs: [] }] }));
    const r = createReranker({
      embedder: 'builtin',
      reranker: 'ollama:qwen2.5:1.5b',
      modelCacheDir: '',
      ollamaHost: `${server.url}/ollama/`,
      openaiBaseUrl: 'https://api.openai.com',
      retries: 0,
    })!;
    expect(await r.rerank('q', ['a'])).toEqual([1]);
    expect(server.requests.map((x) => x.path)).toEqual(['/ollama/api/generate']);
  });
});
