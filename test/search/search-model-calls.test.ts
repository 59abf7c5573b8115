/**
 * A search's path runs no model pass but its query's embedding (#58): through the built daemon, with the builtin
 * reranker on, every kind of search — hybrid, vector, keyword (with and without reranking), grouped, a second page,
 * MCP's tool, the web page — is counted by the built-in model's own forward passes (`docsearch_model_texts_total`):
 * one query text for each new query that needs a vector, none for one it has seen, none in the background lane. The
 * answers still come from meaning: the units' vectors were stored at ingest, from the chunk's own pass. A query "seen"
 * is one the same person asked: another's words are embedded again.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from '../web/library-client.js';
import { ANSWER_DOCUMENTS } from './answer-documents.js';

/** The built-in model's texts so far, by lane. */
async function modelTexts(d: Daemon): Promise<{ query: number; background: number }> {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  const lane = (name: string) => Number(new RegExp(`^docsearch_model_texts_total\\{lane="${name}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { query: lane('query'), background: lane('background') };
}

describe('model passes per search', () => {
  let d: Daemon;
  let user: TestUser;
  // Answers that terms alone would miss: the filler before them holds the question's words.
  const docs = ANSWER_DOCUMENTS.slice(0, 3);

  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      const files = docs.map((doc, i) => ({ name: `doc-${i + 1}.txt`, bytes: Buffer.from(`${doc.before} ${doc.answer} ${doc.after}`) }));
      const res = await uploadFiles(d, user.apiKey, files, { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    { args: ['--reranker', 'builtin'], setupTimeoutMs: 180_000 },
  );

  it('is one query embedding for a new query, and none for anything else, on every surface', async () => {
    const search = async (body: Record<string, unknown>) => {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { results: { snippet: string }[]; documents?: unknown[]; next_cursor: string | null };
    };
    const before = await modelTexts(d);
    expect(before.background).toBeGreaterThan(0); // the uploads' passages (and the reranker's windows)

    const first = await search({ query: docs[0]!.question, limit: 1 });
    // Its answer by meaning, from the units stored at ingest.
    expect(first.results[0]!.snippet).toBe(docs[0]!.answer);
    const paged = await search({ query: 'the office and the ship', limit: 1 });
    expect(paged.next_cursor).not.toBeNull();
    await search({ query: 'the office and the ship', limit: 1, cursor: paged.next_cursor });
    await search({ query: docs[1]!.question, mode: 'vector', rerank: false });
    await search({ query: docs[2]!.question, group: 'document' });
    await search({ query: 'bicycle lockers reception', mode: 'keyword', rerank: false });
    await search({ query: 'canteen breakfast badge', mode: 'keyword', rerank: true });
    const client = await httpClient(d, user.apiKey);
    try {
      expect((await call(client, 'search', { query: 'how many weeks of paid leave', limit: 2 })).results.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    const web = await loggedIn(d, user);
    expect((await web.get(`/search?q=${encodeURIComponent('server hall cooling alarm')}`)).status).toBe(200);
    // Seen before: cached, no pass at all.
    await search({ query: docs[1]!.question });

    const after = await modelTexts(d);
    // New queries needing a vector: docs 0–2's, the paged one's, the reranked keyword search's, MCP's and the web page's.
    expect(after.query - before.query).toBe(7);
    expect(after.background).toBe(before.background);
  });

  it("never answers one person's query from the vector another's left (a hit would tell them someone asked it)", async () => {
    const other = await addUser(d);
    const query = 'when does the acquisition of the harbour company close';
    const ask = async (token: string) => {
      const before = (await modelTexts(d)).query;
      const res = await api(d, '/api/v1/search', { token, body: { query, limit: 1 } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (await modelTexts(d)).query - before;
    };
    expect(await ask(other.apiKey)).toBe(1);
    // The same words from someone else: embedded again (a shared cache answered this from the other's vector).
    expect(await ask(user.apiKey)).toBe(1);
    // Each person's own repeat is still served from the cache.
    expect(await ask(user.apiKey)).toBe(0);
    expect(await ask(other.apiKey)).toBe(0);
  });
});
