/**
 * docs/models.md through the daemon: a remote embedder and a hosted reranker as `docsearch serve` is given them —
 * flags and DOCSEARCH_* keys — and a malformed model option refused before anything opens; and a remote embedder's
 * requests one at a time, queries first. The OpenAI-compatible
 * embedding server and the Cohere/Jina reranker are remote services that cannot run here: one local stand-in speaks
 * both documented wire formats (POST /v1/embeddings {model, input} → {data: [{index, embedding}]}; POST /v1/rerank
 * {model, query, documents, top_n} → {results: [{index, relevance_score}]}) and records what the daemon sent.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { hashedVector } from '../helpers/hashed-vectors.js';
import { OpenAIEmbedder } from '../../src/models/openai-embedder.js';
import { json, startWireServer, type WireServer } from './wire-server.js';

const DIM = 24;
const OPENAI_KEY = 'sk-embed-0123456789';
const RERANK_KEY = 'rk-hosted-9876543210';
/** The reranker's favourite: the stand-in scores the passage that names it highest, whatever fusion thought. */
const FAVOURITE = 'cormorant';

describe('remote models as the daemon is given them', () => {
  let wire: WireServer;
  let d: Daemon;
  let user: TestUser;

  beforeAll(async () => {
    wire = await startWireServer();
    wire.handle((req, res) => {
      const body = req.body as { model: string; input?: string[]; query?: string; documents?: string[] };
      if (req.method === 'POST' && req.path === '/v1/embeddings') {
        return json(res, 200, { object: 'list', model: body.model, data: body.input!.map((t, index) => ({ object: 'embedding', index, embedding: hashedVector(t, DIM) })) });
      }
      if (req.method === 'POST' && req.path === '/v1/rerank') {
        return json(res, 200, { results: body.documents!.map((doc, index) => ({ index, relevance_score: doc.includes(FAVOURITE) ? 0.99 : 0.01 * (index + 1) })) });
      }
      json(res, 404, { error: { message: 'not found' } });
    });
    d = await startDaemon({
      // A base URL may end in /v1; the model after # is percent-decoded.
      args: ['--embedder', 'openai:stand-in-embed', '--openai-base-url', `${wire.url}/v1`, '--reranker', `http:${wire.url}#team%2Freranker-v2`],
      env: { DOCSEARCH_OPENAI_API_KEY: OPENAI_KEY, DOCSEARCH_RERANKER_API_KEY: RERANK_KEY },
    });
    user = await addUser(d);
  }, 120_000);

  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await wire?.close();
  });

  it('embeds through POST <base>/v1/embeddings with the key as a bearer, reranks through <url>/v1/rerank with its own key, and orders results by the reranker', async () => {
    const form = new FormData();
    form.append('file', new Blob(['Harbour birds: the gulls and terns nest along the harbour wall every spring.\n']), 'gulls.txt');
    form.append('file', new Blob(['Harbour birds: a cormorant dries its wings on the harbour buoy.\n']), 'buoy.txt');
    form.append('file', new Blob(['Harbour birds and harbour birds: the harbour census counts harbour birds.\n']), 'census.txt');
    const up = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    expect(up.status).toBe(200);
    const docs = ((await up.json()) as { documents: { id: string; filename: string; status: string }[] }).documents;
    expect(docs.map((x) => x.status)).toEqual(['ready', 'ready', 'ready']);

    const embeds = wire.requests.filter((r) => r.path === '/v1/embeddings');
    expect(embeds.length).toBeGreaterThan(0);
    for (const r of embeds) {
      expect(r.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      expect(r.body).toMatchObject({ model: 'stand-in-embed', input: expect.any(Array) });
    }

    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'harbour birds', group: 'none' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.warnings ?? []).toEqual([]);
    // (Its start-up probe is a rerank request too.)
    const reranks = wire.requests.filter((r) => r.path === '/v1/rerank' && (r.body as { query: string }).query === 'harbour birds');
    expect(reranks).toHaveLength(1);
    expect(reranks[0]!.headers.authorization).toBe(`Bearer ${RERANK_KEY}`);
    const sent = reranks[0]!.body as { model: string; query: string; documents: string[]; top_n: number };
    expect(sent).toMatchObject({ model: 'team/reranker-v2', query: 'harbour birds', top_n: sent.documents.length });
    expect(sent.documents).toHaveLength(3);
    // The reranker's order, not fusion's: the passage it favours comes first, with its score.
    const results = res.body.results as { document: { filename: string }; scores: { rerank?: number } }[];
    expect(results[0]!.document.filename).toBe('buoy.txt');
    expect(results[0]!.scores.rerank).toBeCloseTo(0.99);
    const scores = results.map((r) => r.scores.rerank!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    // Health names both models, and the dimension the embedder learned from the server's answers.
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.embedder).toMatchObject({ id: 'openai:stand-in-embed', dimension: DIM, status: 'up' });
    expect(health.body.components.reranker).toMatchObject({ id: `http:${wire.url}/v1/rerank#team/reranker-v2`, status: 'up' });
  });
});

describe("a remote embedder's requests", () => {
  let wire: WireServer;
  beforeAll(async () => {
    wire = await startWireServer();
  });
  afterAll(() => wire.close());

  it('go one at a time, and a query waiting goes before the passage batches still queued', async () => {
    let inFlight = 0;
    let most = 0;
    wire.handle((req, res) => {
      most = Math.max(most, ++inFlight);
      // Slow enough that the query arrives while the first passage batch is being answered.
      setTimeout(() => {
        inFlight--;
        json(res, 200, { data: (req.body as { input: string[] }).input.map((t, index) => ({ index, embedding: hashedVector(t, DIM) })) });
      }, 100);
    });
    const e = new OpenAIEmbedder({ model: 'stand-in-embed', baseUrl: wire.url, batchSize: 2 });
    const passages = e.embed(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'], { kind: 'passage' });
    await expect.poll(() => wire.requests.length).toBe(1);
    const query = await e.embed(['the query'], { kind: 'query' });
    expect(query).toHaveLength(1);
    expect(await passages).toHaveLength(6);
    expect(most).toBe(1);
    expect(wire.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([['p1', 'p2'], ['the query'], ['p3', 'p4'], ['p5', 'p6']]);
  });
});

describe('a malformed model option', () => {
  /**
   * docs/models.md: "A malformed value fails at startup … naming the option and the accepted forms"; README and
   * configuration.md: exit 2, where the value came from, before anything is opened. Before, the daemon made the
   * data directory and the database, then exited 1 ("could not start") without saying where the value came from —
   * and the systemd unit's RestartPreventExitStatus=2 restarted it every 2 s for ever.
   */
  const cases: [string[], Record<string, string>, string][] = [
    [['--embedder', 'bert'], {}, 'option "embedder" (from --embedder): must be builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model> (got "bert")'],
    [[], { DOCSEARCH_RERANKER: 'cohere' }, 'option "reranker" (from DOCSEARCH_RERANKER): must be builtin, ollama:<model>, http:<url>, onnx:<dir> or none (got "cohere")'],
    [['--embedder', 'ollama:nomic-embed-text', '--ollama-host', 'localhost:11434'], {}, 'option "ollama-host" (from --ollama-host): must be an http(s) URL (got "localhost:11434")'],
  ];

  it('stops serve with exit 2 naming it and where it came from, and opens nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-models-'));
    try {
      const runs = await Promise.all(
        cases.map(async ([args, env], i) => {
          const dataDir = join(dir, `library-${i}`);
          return { dataDir, ...(await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], { env: { ...env, XDG_CONFIG_HOME: join(dir, 'config-home') } })) };
        }),
      );
      runs.forEach((run, i) => {
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`error: ${cases[i]![2]}`);
        expect(existsSync(run.dataDir)).toBe(false);
      });
    } finally {
      removeDir(dir);
    }
  });
});
