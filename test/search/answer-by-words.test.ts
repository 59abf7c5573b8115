/**
 * A result's answer (docs/search.md#answers) with an embedder without token states (`openai:`, `ollama:`): it stores
 * a chunk's answer units' spans only, so the answer is chosen by the query's words, with the text's structure — the
 * unit holding them, never a heading line, whose words count for the units under it. And how the answer is shown:
 * the CLI and the web page open a result's excerpt with it, whole, then what follows, to 320 characters. Through a
 * real daemon whose embedder is `openai:` against a local stand-in of the documented wire format
 * (test/models/wire-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCERPT_CHARS } from '../../src/core/excerpt.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { hashedVector } from '../helpers/hashed-vectors.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { json, startWireServer, type WireServer } from '../models/wire-server.js';
import { loggedIn } from '../server/web-client.js';

const ANSWER = 'Borrowed books must be returned within nineteen days, or a fine of one euro a week is charged.';
/** One chunk: a heading, text before the answer that shares none of the question's words, and more after it. */
const LOANS = [
  'Library loans',
  '',
  [
    'The annual report of the marine institute describes its reading room, its opening hours and the staff who run it.',
    'The reading room holds charts of the coast, logbooks of the survey ships and a collection of tide tables.',
    'Visitors sign the register at the desk and leave their bags in the lockers by the door.',
    ANSWER,
    'Journals stay in the reading room and are not lent out to anyone, whatever their rank or department.',
    'Charts may be copied on the machine in the corner, and the copies are charged at cost.',
    'The reading room closes for two weeks in August, when the collection is counted and cleaned.',
  ].join(' '),
].join('\n');

interface Result {
  text: string;
  snippet: string;
  document: { filename: string };
}

describe("a remote embedder's answers, as the clients show them", () => {
  let wire: WireServer;
  let d: Daemon;
  let user: TestUser;
  beforeAll(async () => {
    wire = await startWireServer();
    wire.handle((req, res) => {
      const body = req.body as { model: string; input: string[] };
      if (req.method === 'POST' && req.path === '/v1/embeddings') {
        return json(res, 200, { object: 'list', model: body.model, data: body.input.map((t, index) => ({ object: 'embedding', index, embedding: hashedVector(t, 24) })) });
      }
      json(res, 404, { error: { message: 'not found' } });
    });
    d = await startDaemon({ args: ['--embedder', 'openai:stand-in-embed', '--openai-base-url', `${wire.url}/v1`], env: { DOCSEARCH_OPENAI_API_KEY: 'sk-embed-0123456789' } });
    user = await addUser(d);
    const up = await uploadFiles(d, user.apiKey, [{ name: 'loans.txt', bytes: Buffer.from(LOANS) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.documents[0].chunk_count).toBe(1);
  }, 120_000);
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await wire?.close();
  });

  const top = async (query: string, mode: string): Promise<Result> => {
    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query, mode } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [first] = res.body.results as Result[];
    expect(first?.document.filename, `${mode} "${query}"`).toBe('loans.txt');
    return first!;
  };

  it("is the sentence holding the query's words, mid-chunk, in every mode", async () => {
    for (const mode of ['hybrid', 'vector', 'keyword']) expect((await top('when must borrowed books be returned', mode)).snippet, mode).toBe(ANSWER);
  });

  it('is never the heading line: its words count for the sentences under it', async () => {
    for (const mode of ['hybrid', 'keyword']) {
      const r = await top('library loans', mode);
      expect(r.snippet, mode).not.toBe('Library loans');
      expect(r.snippet.length).toBeGreaterThan(0);
      expect(r.text).toContain(r.snippet);
    }
  });

  it('opens the excerpt the CLI and the web page show with it, whole, then what follows, to 320 characters', async () => {
    const query = 'when must borrowed books be returned';
    const from = LOANS.indexOf(ANSWER);
    expect(LOANS.length - from).toBeGreaterThan(EXCERPT_CHARS + 40);
    // What follows the answer, to the last space within 320 characters of its start (words are not cut).
    const shown = LOANS.slice(from, LOANS.lastIndexOf(' ', from + EXCERPT_CHARS));
    expect(EXCERPT_CHARS - shown.length).toBeLessThan(30);

    const cli = await runCli(['search', query, '--passages', '--limit', '1'], { env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) });
    expect(cli.code, cli.stderr).toBe(0);
    // The terminal's lines wrap it: read as one run of words.
    expect(cli.stdout.replace(/\s+/g, ' ')).toContain(`… ${shown} …`);
    expect(cli.stdout).not.toContain('annual report');

    const web = await loggedIn(d, user);
    const page = await web.get(`/search?q=${encodeURIComponent(query)}&view=passages`);
    expect(page.status).toBe(200);
    const excerpt = /<p class="snippet"[^>]*>([\s\S]*?)<\/p>/.exec(page.text)?.[1] ?? '';
    const text = (h: string) => h.replace(/<[^>]+>/g, '');
    expect(text(excerpt)).toBe(`… ${shown} …`);
    // The answer is the styled run it opens with (the query's words in it marked apart).
    expect(text(excerpt.slice(0, excerpt.lastIndexOf('</span>')))).toBe(`… ${ANSWER}`);
  });
});
