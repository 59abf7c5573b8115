/**
 * Results that show the answer (#53 item 1), through the built daemon: generated documents whose answer sentence
 * sits mid-chunk after filler that shares the question's words; each question, asked as a person would (other words
 * than the answer's), through the CLI's plain output, the web search page and MCP's search tool. The top result must
 * show the answer sentence, whole, for at least 95 % of the questions on each (the chunk's opening did before).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, httpClient } from '../mcp/mcp-client.js';
import { cliEnv } from '../cli/cli-env.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from '../web/library-client.js';
import { ANSWER_DOCUMENTS } from './answer-documents.js';

/** Text as a person reads it: tags gone, entities decoded, whitespace (line wraps, indents) collapsed. */
const plain = (s: string) =>
  s
    .replace(/<[^>]+>/g, '')
    .replaceAll('&amp;', '&')
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replace(/\s+/g, ' ');

describe('answer snippets', () => {
  let d: Daemon;
  let user: TestUser;
  let web: WebClient;

  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      const files = ANSWER_DOCUMENTS.map((doc, i) => ({ name: `doc-${i + 1}.txt`, bytes: Buffer.from(`${doc.before} ${doc.answer} ${doc.after}`) }));
      const res = await uploadFiles(d, user.apiKey, files, { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      web = await loggedIn(d, user);
    },
    { timeoutMs: 60_000, setupTimeoutMs: 300_000 },
  );

  /** The questions whose answer `shown` (the top result as the surface shows it) does not hold. */
  async function misses(shown: (question: string) => Promise<string>): Promise<string[]> {
    const out: string[] = [];
    for (const doc of ANSWER_DOCUMENTS) {
      const text = plain(await shown(doc.question));
      if (!text.includes(doc.answer)) out.push(`${doc.question} → ${text.slice(0, 200)}`);
    }
    return out;
  }

  const atLeast95 = (missed: string[]) => expect(missed.length, missed.join('\n')).toBeLessThanOrEqual(Math.floor(ANSWER_DOCUMENTS.length * 0.05));

  it('the CLI shows the answer sentence of its first result (plain output, through a pipe)', async () => {
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    atLeast95(
      await misses(async (q) => {
        const r = await runCli(['search', q, '--limit', '1'], { env });
        expect(r.code, r.stderr).toBe(0);
        return r.stdout;
      }),
    );
  }, 300_000);

  it('the web search page shows it in its first result', async () => {
    atLeast95(
      await misses(async (q) => {
        const page = await web.get(`/search?q=${encodeURIComponent(q)}`);
        expect(page.status).toBe(200);
        return /<p class="snippet"[^>]*>([\s\S]*?)<\/p>/.exec(page.text)?.[1] ?? '';
      }),
    );
  }, 300_000);

  it("MCP's search gives it as the first result's snippet, a slice of its text", async () => {
    const client = await httpClient(d, user.apiKey);
    try {
      atLeast95(
        await misses(async (q) => {
          const out = await call(client, 'search', { query: q, limit: 1 });
          const top = out.results[0];
          expect(top.text).toContain(top.snippet);
          return top.snippet;
        }),
      );
    } finally {
      await client.close();
    }
  }, 300_000);

  it('highlights point at the answer, never the whole chunk', async () => {
    for (const doc of ANSWER_DOCUMENTS.slice(0, 5)) {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: doc.question, limit: 1 } });
      const top = (res.body as { results: { text: string; snippet: string; highlights: [number, number][] }[] }).results[0]!;
      expect(top.highlights).not.toContainEqual([0, top.text.length]);
      const at = top.text.indexOf(top.snippet);
      expect(top.highlights.some(([s, e]) => s <= at && e >= at + top.snippet.length)).toBe(true);
    }
  });
});
