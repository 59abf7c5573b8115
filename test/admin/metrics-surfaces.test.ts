/**
 * What docs/operations.md says of /metrics beyond its table, through a real daemon whose token comes from
 * DOCSEARCH_METRICS_TOKEN: `docsearch_search_duration_seconds` counts the searches answered on every surface (REST API,
 * web page, MCP) and a failed search in the HTTP metric only; each search stage is timed when it ran; a passing scrape
 * writes no access-log line at the default level while a refused one does; what a token must be; and the naming the
 * table opens with (counters end in `_total`, and only they; times in seconds; histograms' three series). A page is
 * counted by its pattern, apart from the API route whose name it shares.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from '../web/library-client.js';

/** The daemon below reads its token from the environment alone, as docs/operations.md's replicas do. */
const TOKEN = 'env-scrape-token-7c1d9e0f2a3b';

async function scrape(d: Daemon, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
  expect(res.status).toBe(200);
  return res.text();
}

/** One sample's value, by its name and labels exactly as the daemon writes them; 0 when it has none yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const SEARCHES = 'docsearch_search_duration_seconds_count';

describe('/metrics as docs/operations.md describes it', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      const res = await uploadFiles(d, user.apiKey, [{ name: 'herons.txt', bytes: Buffer.from('Grey herons nest in colonies high in the trees beside the lake.') }], { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    { args: ['--reranker', 'builtin'], env: { DOCSEARCH_METRICS_TOKEN: TOKEN }, setupTimeoutMs: 120_000 },
  );

  it('counts a search answered through the REST API, the web page and MCP, one each; a page by its pattern', async () => {
    let before = sample(await scrape(d), SEARCHES);
    const rest = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'where do herons nest' } });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    expect(sample(await scrape(d), SEARCHES) - before, 'REST API').toBe(1);

    const web = await loggedIn(d, user);
    const beforePage = await scrape(d);
    const page = await web.get(`/search?q=${encodeURIComponent('heron colonies in trees')}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('herons.txt');
    const afterPage = await scrape(d);
    expect(sample(afterPage, SEARCHES) - sample(beforePage, SEARCHES), 'web page').toBe(1);
    // The page is counted by its pattern, apart from the API's route named search (a page's name repeats the API's).
    const pageRequests = (text: string) => sample(text, 'docsearch_http_request_duration_seconds_count{method="GET",route="/search",status="200"}');
    const apiRequests = (text: string) => sample(text, 'docsearch_http_request_duration_seconds_count{method="POST",route="search",status="200"}');
    expect(pageRequests(afterPage) - pageRequests(beforePage)).toBe(1);
    expect(apiRequests(afterPage)).toBe(apiRequests(beforePage));
    expect(afterPage).not.toContain('method="GET",route="search"');

    // A page with an id in its path: its pattern, never the id.
    const docId = (await api(d, '/api/v1/documents', { token: user.apiKey })).body.documents[0].id as string;
    expect((await web.get(`/documents/${docId}`)).status).toBe(200);
    const afterDocument = await scrape(d);
    expect(sample(afterDocument, 'docsearch_http_request_duration_seconds_count{method="GET",route="/documents/:id",status="200"}')).toBe(1);
    expect(afterDocument).not.toContain(docId);

    before = sample(await scrape(d), SEARCHES);
    const client = await httpClient(d, user.apiKey);
    try {
      expect((await call(client, 'search', { query: 'birds nesting by the lake' })).results.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    expect(sample(await scrape(d), SEARCHES) - before, 'MCP').toBe(1);
  });

  it('times each stage a search ran: embed only when the query is new to its asker, filters and facets only when asked, rerank when a reranker ran', async () => {
    const stage = (text: string, name: string) => sample(text, `docsearch_search_stage_duration_seconds_count{stage="${name}"}`);
    const STAGES = ['embed', 'keyword', 'vector', 'visibility', 'fusion', 'hydrate', 'filters', 'facets', 'rerank'];
    const search = async (body: Record<string, unknown>) => {
      const before = await scrape(d);
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const after = await scrape(d);
      return Object.fromEntries(STAGES.map((s) => [s, stage(after, s) - stage(before, s)]).filter(([, n]) => n !== 0));
    };
    const plain = { keyword: 1, vector: 1, visibility: 1, fusion: 1, hydrate: 1 };
    expect(await search({ query: 'grey heron colony', rerank: false })).toEqual({ embed: 1, ...plain });
    expect(await search({ query: 'grey heron colony', rerank: false }), 'the same query again: its vector is cached').toEqual(plain);
    expect(await search({ query: 'grey heron colony', rerank: false, filters: { type: 'txt' }, facets: ['type'] })).toEqual({ ...plain, filters: 1, facets: 1 });
    expect(await search({ query: 'grey heron colony', rerank: true })).toEqual({ ...plain, rerank: 1 });
  });

  it('a failed search is in the HTTP metric only', async () => {
    const before = await scrape(d);
    const refused = 'docsearch_http_request_duration_seconds_count{method="POST",route="search",status="400"}';
    // A cursor of another search fails inside the search, after it started.
    const first = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'herons', limit: 1 } });
    expect(first.status).toBe(200);
    const afterFirst = await scrape(d);
    expect(sample(afterFirst, SEARCHES) - sample(before, SEARCHES)).toBe(1);
    const failed = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'something else entirely', cursor: 'not-a-cursor-of-this-search' } });
    expect(failed.status, JSON.stringify(failed.body)).toBe(400);
    const after = await scrape(d);
    expect(sample(after, SEARCHES)).toBe(sample(afterFirst, SEARCHES));
    expect(sample(after, refused) - sample(afterFirst, refused)).toBe(1);
  });

  it('a passing scrape writes no access-log line at the default level; a refused one does', async () => {
    await scrape(d, { 'x-request-id': 'scrape-passing-1' });
    const refused = await fetch(`${d.url}/metrics`, { headers: { 'x-request-id': 'scrape-refused-1' } });
    expect(refused.status).toBe(401);
    // Lines are written in order: once the refused scrape's line is here, the passing one's would be too.
    await d.logLine('"req_id":"scrape-refused-1"');
    const logged = d
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request')
      .map((l) => l.req_id);
    expect(logged).toContain('scrape-refused-1');
    expect(logged).not.toContain('scrape-passing-1');
  });

  it('DOCSEARCH_METRICS_TOKEN alone asks for the token, as --metrics-token does, and the log says which rule applies', async () => {
    const none = await fetch(`${d.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="docsearch-metrics"');
    expect((await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    await scrape(d);
    expect(d.stdout()).toContain('served with a bearer token (--metrics-token)');
    expect(d.stdout()).not.toContain(TOKEN);
  });

  it('a token shorter than 16 characters, or with a space, is refused at start (exit 2), and nothing is made', async () => {
    const dataDir = join(d.dataDir, 'never-made');
    for (const [args, env, from] of [
      [['--metrics-token', 'fifteen-chars-x'], {}, '--metrics-token'],
      [[], { DOCSEARCH_METRICS_TOKEN: 'sixteen or more but spaced' }, 'DOCSEARCH_METRICS_TOKEN'],
    ] as const) {
      const res = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], { env: { ...env } });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`error: option "metrics-token" (from ${from}): must be at least 16 printable characters without spaces`);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('counters end in _total, and nothing else of docsearch does; times are seconds; histograms have _bucket, _sum and _count', async () => {
    const text = await scrape(d);
    const types = [...text.matchAll(/^# TYPE (docsearch_\w+) (\w+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(types.length).toBeGreaterThan(20);
    for (const { name, type } of types) {
      expect(name.endsWith('_total'), `${name} (${type})`).toBe(type === 'counter');
      if (/_(?:duration|age)(?:_|$)/.test(name)) expect(name, 'a time is in seconds').toMatch(/_seconds$/);
      // A labelled histogram shows its series once it has one: the search's have by now.
      if (type === 'histogram' && text.includes(`\n${name}_count`)) for (const part of ['_bucket{', '_sum']) expect(text, `${name}${part}`).toContain(`\n${name}${part}`);
    }
    for (const name of ['docsearch_search_duration_seconds', 'docsearch_http_request_duration_seconds']) {
      expect(types.find((t) => t.name === name)?.type).toBe('histogram');
      expect(text).toContain(`\n${name}_count`);
    }
  });
});
