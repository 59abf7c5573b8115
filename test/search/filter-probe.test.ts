/**
 * A hostile probe of the filters, facets, labels, metadata, saved searches and cursors, through the real interfaces
 * (REST search and the document list, the web search page, MCP's `search`), as two people — A owns two projects, B
 * reads neither — and A's key limited to one of them. Text that means something to SQL or to LanceDB's prefilter
 * (quotes, backslashes, `%` and `_`, keys named like columns or conditions) matches as itself and never widens what
 * a caller reads; names that JavaScript objects carry on their prototype (`constructor`, `__proto__`) are refused
 * with a 400 naming them, never a 500, and never reach a shared object: one such URL once killed the daemon.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { callError, httpClient } from '../mcp/mcp-client.js';
import { loggedIn } from '../server/web-client.js';

type Who = 'A' | 'B' | 'L';
type Doc = 'secret' | 'open' | 'bees';

describe('filters under attack', () => {
  let d: Daemon;
  let a: TestUser;
  let b: TestUser;
  const token: Record<Who, string> = { A: '', B: '', L: '' };
  const project = { secret: '', open: '', bees: '' };
  const docId: Record<Doc, string> = { secret: '', open: '', bees: '' };

  const upload = async (who: TestUser, projectId: string, name: string, text: string, labels: string[], metadata: Record<string, unknown>, path: string) => {
    const res = await uploadFiles(d, who.apiKey, [{ name, bytes: Buffer.from(text) }], {
      projectId,
      metadata: JSON.stringify(metadata),
      query: '?wait=true',
      fields: { labels: JSON.stringify(labels), paths: JSON.stringify([path]) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.documents[0].status).toBe('ready');
    return res.body.documents[0].id as string;
  };

  daemonForSuite(
    async (started) => {
      d = started;
      [a, b] = [await addUser(d), await addUser(d)];
      token.A = a.apiKey;
      token.B = b.apiKey;
      const made = async (who: TestUser, name: string) => (await api(d, '/api/v1/projects', { token: who.apiKey, body: { name } })).body.id as string;
      project.secret = await made(a, 'secret');
      project.open = await made(a, 'open');
      project.bees = await made(b, 'bees');
      const limited = await api(d, '/api/v1/keys', { token: a.apiKey, body: { name: 'open only', project_ids: [project.open] } });
      expect(limited.status).toBe(201);
      token.L = limited.body.key;
      // A's secret document carries what an attacker would try to match from outside: quotes, a backslash, LIKE's
      // wildcards in its path, metadata keys named like columns and conditions. B's shares a label name and a path prefix.
      docId.secret = await upload(
        a,
        project.secret,
        'merger.txt',
        'The harbour merger plan with Zephyr Corp is confidential. The harbour crane budget rises.',
        ["Top'Secret", 'merger', 'a\\b'],
        { project_id: 'x', id: 'y', '1=1': 1, "a') OR ('1'='1": 'z', codename: "O'Hare", year: 2021 },
        "deals/100%_sure/it's.txt",
      );
      docId.open = await upload(a, project.open, 'open.txt', 'The harbour opening hours are nine to five. The harbour ferry schedule.', ['public'], { codename: 'open', year: 2020 }, 'deals/x/open.txt');
      // A searches while A's projects hold every row: such a search leaves out the project filter for the next
      // half minute and rechecks each hit (store/lancedb/chunk-search.ts soleScope), so B's document, which the
      // filters below match too, must still never reach A's results or counts.
      expect((await api(d, '/api/v1/search', { token: a.apiKey, body: { query: 'harbour', filters: { path_prefix: 'deals/' } } })).status).toBe(200);
      docId.bees = await upload(b, project.bees, 'bees.txt', 'Notes about the fishing boats in the harbour, by the harbour master.', ['merger'], { codename: 'bee', year: 2021 }, 'deals/100%_sure/bees.txt');
    },
    { setupTimeoutMs: 120_000 },
  );

  const name = (id: string) => (Object.keys(docId) as Doc[]).find((k) => docId[k] === id) ?? id;

  const searched = async (who: Who, filters: unknown, extra: Record<string, unknown> = {}) => {
    const res = await api(d, '/api/v1/search', { token: token[who], body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 50, filters, ...extra } });
    expect(res.status, `${who} ${JSON.stringify(filters)}: ${JSON.stringify(res.body)}`).toBe(200);
    return { docs: (res.body.documents as { document: { id: string } }[]).map((r) => name(r.document.id)).sort(), body: res.body };
  };

  const listed = async (who: Who, query: string) => {
    const res = await api(d, `/api/v1/documents?${query}`, { token: token[who] });
    expect(res.status, `${who} ${query}: ${JSON.stringify(res.body)}`).toBe(200);
    return (res.body.documents as { id: string }[]).map((r) => name(r.id)).sort();
  };

  it('matches quotes, backslashes, % and _ and SQL-looking keys as text, in search and in the list, within what each caller reads', async () => {
    // [filters, what A, B and A's key limited to "open" find]
    const cases: [Record<string, unknown>, Record<Who, Doc[]>][] = [
      [{}, { A: ['open', 'secret'], B: ['bees'], L: ['open'] }],
      [{ path_prefix: 'deals/100%' }, { A: ['secret'], B: ['bees'], L: [] }],
      [{ path_prefix: 'deals/100%_sure/it\'s' }, { A: ['secret'], B: [], L: [] }],
      // LIKE's wildcards are themselves: `_` is not any character, `%` not any text.
      [{ path_prefix: 'deals/10_' }, { A: [], B: [], L: [] }],
      [{ path_prefix: '%' }, { A: [], B: [], L: [] }],
      [{ path_prefix: "x') OR true OR ('" }, { A: [], B: [], L: [] }],
      [{ path_prefix: "x\\') OR true OR ('" }, { A: [], B: [], L: [] }],
      [{ path_prefix: 'deals\\' }, { A: [], B: [], L: [] }],
      [{ labels: "top'secret" }, { A: ['secret'], B: [], L: [] }],
      [{ labels: 'a\\b' }, { A: ['secret'], B: [], L: [] }],
      [{ labels: 'merger' }, { A: ['secret'], B: ['bees'], L: [] }],
      [{ labels: "x') OR true OR ('" }, { A: [], B: [], L: [] }],
      [{ labels: '%' }, { A: [], B: [], L: [] }],
      [{ metadata: { project_id: 'x' } }, { A: ['secret'], B: [], L: [] }],
      [{ metadata: { id: 'y', '1=1': 1 } }, { A: ['secret'], B: [], L: [] }],
      [{ metadata: { "a') OR ('1'='1": 'z' } }, { A: ['secret'], B: [], L: [] }],
      [{ metadata: { "a') OR ('1'='1": { $exists: true } } }, { A: ['secret'], B: [], L: [] }],
      [{ metadata: { codename: "O'Hare" } }, { A: ['secret'], B: [], L: [] }],
      [{ metadata: { codename: "x') OR true OR ('" } }, { A: [], B: [], L: [] }],
      [{ metadata: { year: { $gte: 2021 } } }, { A: ['secret'], B: ['bees'], L: [] }],
      // Look-alikes are other names: fullwidth letters, a Cyrillic "с"; only A–Z case is folded.
      [{ labels: 'ｍerger' }, { A: [], B: [], L: [] }],
      [{ labels: 'MERGER' }, { A: ['secret'], B: ['bees'], L: [] }],
      [{ path_prefix: 'ｄeals/' }, { A: [], B: [], L: [] }],
      [{ metadata: { сodename: 'open' } }, { A: [], B: [], L: [] }],
      [{ uploaded_by: '%@example.com' }, { A: [], B: [], L: [] }],
      [{ source_id: "x') OR true OR ('" }, { A: [], B: [], L: [] }],
    ];
    for (const [filters, want] of cases) {
      const query = new URLSearchParams(Object.entries(filters).map(([k, v]): [string, string] => [k, k === 'metadata' ? JSON.stringify(v) : String(v)])).toString();
      for (const who of ['A', 'B', 'L'] as const) {
        expect((await searched(who, filters)).docs, `search ${who} ${JSON.stringify(filters)}`).toEqual(want[who]);
        expect(await listed(who, query), `list ${who} ${query}`).toEqual(want[who]);
      }
    }
  });

  it('counts facets only over what the caller reads: a label or metadata value another person also has counts only theirs', async () => {
    const facets = ['label', 'project', 'uploaded_by', 'metadata.codename', 'metadata.project_id', "metadata.a') OR ('1'='1"];
    const counted = async (who: Who) => (await searched(who, {}, { facets })).body.facets as Record<string, { value: unknown; count: number }[]>;
    const pairs = (f: { value: unknown; count: number }[]) => f.map((v) => [v.value, v.count]);
    const forB = await counted('B');
    expect(pairs(forB.label!)).toEqual([['merger', 1]]);
    expect(pairs(forB.project!)).toEqual([[project.bees, 1]]);
    expect(pairs(forB.uploaded_by!)).toEqual([[b.email, 1]]);
    expect(pairs(forB['metadata.codename']!)).toEqual([['bee', 1]]);
    expect(forB['metadata.project_id']).toEqual([]);
    expect(forB["metadata.a') OR ('1'='1"]).toEqual([]);
    const forL = await counted('L');
    expect(pairs(forL.label!)).toEqual([['public', 1]]);
    expect(pairs(forL.project!)).toEqual([[project.open, 1]]);
    expect(pairs(forL['metadata.codename']!)).toEqual([['open', 1]]);
    expect(forL['metadata.project_id']).toEqual([]);
    const forA = await counted('A');
    expect(pairs(forA.label!).find(([v]) => v === 'merger')).toEqual(['merger', 1]);
  });

  it("keeps saved searches and cursors to their owner: none names or reveals another's project", async () => {
    // B (and A's limited key) cannot save a search over, or share one with, a project they do not read.
    for (const who of ['B', 'L'] as const) {
      expect((await api(d, '/api/v1/saved-searches', { token: token[who], body: { name: 'over', search: { query: 'harbour', project_ids: [project.secret] } } })).status).toBe(404);
      expect((await api(d, '/api/v1/saved-searches', { token: token[who], body: { name: 'share', search: { query: 'harbour' }, project_id: project.secret } })).status).toBe(404);
    }
    const shared = await api(d, '/api/v1/saved-searches', { token: token.A, body: { name: "Top'Secret deals", search: { query: 'harbour', filters: { labels: "Top'Secret" } }, project_id: project.secret } });
    expect(shared.status).toBe(201);
    for (const who of ['B', 'L'] as const) {
      const seen = await api(d, '/api/v1/saved-searches', { token: token[who] });
      expect(seen.body.saved_searches.map((s: { name: string }) => s.name)).not.toContain("Top'Secret deals");
      expect((await api(d, `/api/v1/saved-searches/${shared.body.id}`, { token: token[who] })).status).toBe(404);
    }
    // A cursor opens for the person it was issued to, with the filters it was issued for.
    const body = { query: 'harbour', mode: 'keyword', limit: 1, filters: { path_prefix: 'deals/' } };
    const first = await api(d, '/api/v1/search', { token: token.A, body });
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect((await api(d, '/api/v1/search', { token: token.B, body: { ...body, cursor: first.body.next_cursor } })).status).toBe(400);
    expect((await api(d, '/api/v1/search', { token: token.A, body: { ...body, filters: { path_prefix: 'deals' }, cursor: first.body.next_cursor } })).status).toBe(400);
    // The same person's key limited to "open" pages only through "open".
    const limited = await api(d, '/api/v1/search', { token: token.L, body: { ...body, cursor: first.body.next_cursor } });
    expect(limited.status).toBe(200);
    for (const r of limited.body.results as { project: { id: string } }[]) expect(r.project.id).toBe(project.open);
  });

  it('refuses a type named like an Object property (constructor, __proto__) with a 400 naming it: search, list, saved searches, MCP', async () => {
    for (const type of ['constructor', '__proto__', 'Constructor']) {
      const search = await api(d, '/api/v1/search', { token: token.A, body: { query: 'harbour', filters: { type } } });
      expect(search.status, JSON.stringify(search.body)).toBe(400);
      expect(search.body.error.message).toContain(`body.filters.type: unknown type "${type}"`);
      const list = await api(d, `/api/v1/documents?type=${type}`, { token: token.A });
      expect(list.status, JSON.stringify(list.body)).toBe(400);
      expect(list.body.error.message).toContain(`query.type: unknown type "${type}"`);
      // Saved, it would fail each time it is run.
      const saved = await api(d, '/api/v1/saved-searches', { token: token.A, body: { name: `by ${type}`, search: { query: 'harbour', filters: { type } } } });
      expect(saved.status, JSON.stringify(saved.body)).toBe(400);
    }
    const mcp = await httpClient(d, token.A);
    try {
      expect(await callError(mcp, 'search', { query: 'harbour', filters: { type: 'constructor' } })).toContain('unknown type "constructor"');
    } finally {
      await mcp.close();
    }
  });

  it('refuses list parameters named like Object properties as unknown, as any other', async () => {
    for (const param of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await api(d, `/api/v1/documents?${param}=1`, { token: token.A });
      expect(res.status, `${param}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message).toBe(`unknown field "${param}" in query`);
    }
  });

  it('refuses a metadata key "__proto__" (and a key given twice) in MCP\'s tool arguments, as REST bodies do, rather than search without it', async () => {
    // MCP's tools dropped the key without a word, and the search ran unfiltered.
    const message = 'the key "__proto__" is not accepted';
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { query: 'harbour', filters: { metadata: { ['__proto__']: { $in: [1] } } } } } };
    const mcp = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.A}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      // A computed key is an own property, so the text carries it (a plain `__proto__:` would set the prototype instead).
      body: JSON.stringify(call),
    });
    const answer = (await mcp.json()) as { error?: { message: string } };
    expect(mcp.status, JSON.stringify(answer)).toBe(400);
    expect(answer.error!.message).toBe(`invalid request: body.params.arguments.filters.metadata: ${message}`);
    // A key twice reads one way here and maybe the other in a proxy in front (docs/mcp.md): refused too.
    const twice = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.A}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(call).replace('"query":"harbour"', '"query":"harbour","query":"merger"'),
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: { message: string } }).error.message).toBe('invalid request: body.params.arguments.query: is given more than once; send each key once');
  });

  // Last: before the fix, this request took the daemon down.
  it('refuses a metadata key "__proto__" in a URL (list, web search page) with a 400, and the daemon keeps serving', async () => {
    const message = 'the key "__proto__" is not accepted';
    for (const query of ['metadata.__proto__=1', 'metadata.__proto__.$gte=1', `metadata=${encodeURIComponent('{"__proto__": {"$in": [1]}}')}`]) {
      const res = await api(d, `/api/v1/documents?${query}`, { token: token.A });
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message).toContain(message);
    }
    const web = await loggedIn(d, a);
    const page = await web.get('/search?q=harbour&metadata.__proto__=1');
    expect(page.status).toBe(400);
    expect(page.text).toContain(message.replaceAll('"', '&quot;'));
    // Nothing leaked onto every object: a list and a search still answer, and after a pause (a garbage collection or
    // more) the daemon still runs (a polluted Object.prototype broke the metrics' GC observer, which ended the process).
    expect(await listed('A', 'labels=merger')).toEqual(['secret']);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await searched('A', { metadata: { year: 2020 } })).docs).toEqual(['open']);
    expect(d.proc.exitCode).toBeNull();
    expect((await api(d, '/api/v1/health')).status).toBe(200);
  });
});
