/**
 * What docs/mcp.md says each tool and the resources answer, beyond tools.test.ts and limits.test.ts, through the
 * official SDK's client on a real daemon's /mcp: the reading windows' defaults and bounds, the page marks of each
 * type, a name several documents share, the resource list's pages, list_projects' roles and owners, list_documents
 * by status, search's paging, totals and facets, add_document's default project and a viewer's refusal, and the
 * text content beside structuredContent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { getCode, loggedIn, pkce, post } from '../auth/oauth-flow.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient, stdioClient } from './mcp-client.js';

const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));

/** Exactly `length` characters of words far apart (cheap to embed: few tokens per character), starting at word `from`. */
function spaced(length: number, from: number): string {
  const parts: string[] = [];
  for (let i = from, size = -12; size < length; i++) {
    parts.push(`word${i}`);
    size += `word${i}`.length + 12;
  }
  return `${parts.join(' '.repeat(12)).slice(0, length - 1)}z`;
}

describe('MCP tool answers, as docs/mcp.md states them', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let http: Client;
  let bobHttp: Client;
  let aliceDefault: string;
  let shared: string;
  const longs: string[] = [];
  const typed = new Map<string, string>();
  let failedId: string;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob] = [await addUser(d, { email: 'alice-answers@example.com' }), await addUser(d)];
  }, { args: ['--max-files', '100'] });
  beforeAll(async () => {
    http = await httpClient(d, alice.apiKey);
    bobHttp = await httpClient(d, bob.apiKey);
    aliceDefault = (await api(d, '/api/v1/projects', { token: alice.apiKey })).body.projects[0].id;
    // Two texts of 30,000 characters: one is more than a default get_document window, both more than get_documents' budget.
    for (const from of [0, 5000]) longs.push((await call(http, 'add_document', { filename: `long ${from}.txt`, text: spaced(30_000, from) })).document.id);
    const up = await uploadFiles(d, alice.apiKey, ['briefing.pptx', 'coast.epub', 'berths.csv', 'berths.xlsx'].map((name) => ({ name, bytes: fixture(name) })), { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    for (const doc of up.body.documents) typed.set(doc.filename, doc.id);
    const broken = await uploadFiles(d, alice.apiKey, [{ name: 'broken.pdf', bytes: Buffer.from('%PDF-1.4\nnot a pdf at all\n%%EOF\n') }], { query: '?wait=true' });
    failedId = broken.body.documents[0].id;
    const created = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'shared minutes' } });
    shared = created.body.id;
    expect((await api(d, `/api/v1/projects/${shared}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await http?.close();
    await bobHttp?.close();
  });

  it('get_document reads 20,000 characters by default and at most 100,000', async () => {
    const first = await call(http, 'get_document', { document_id: longs[0] });
    expect(first.total_chars).toBe(30_000);
    expect(first.text.length).toBeLessThanOrEqual(20_000);
    expect(first.text.length).toBeGreaterThan(19_000);
    expect(first).toMatchObject({ cut: true, next_offset: first.end });
    expect((await call(http, 'get_document', { document_id: longs[0], max_chars: 100_000 })).text.length).toBe(30_000);
    expect(await callError(http, 'get_document', { document_id: longs[0], max_chars: 100_001 })).toMatch(/max_chars/);
  });

  it('get_documents takes 1 to 20 ids within one budget of 50,000 characters by default, at most 100,000', async () => {
    const both = await call(http, 'get_documents', { document_ids: longs });
    expect(both.documents.map((x: any) => x.document.id)).toEqual(longs);
    expect(both.documents[0]).toMatchObject({ cut: false, next_offset: null });
    expect(both.documents[0].text.length).toBe(30_000);
    expect(both.documents[1].cut).toBe(true);
    expect(both.documents[0].text.length + both.documents[1].text.length).toBeLessThanOrEqual(50_000);
    expect(both.documents[1].text.length).toBeGreaterThan(19_000);
    expect(both.cut_at).toBe(longs[1]);
    // Cut in the first: the one after it comes without text, named.
    const tight = await call(http, 'get_documents', { document_ids: longs, max_chars: 1000 });
    expect(tight.documents.map((x: any) => [x.document.id, x.text === '', x.cut])).toEqual([
      [longs[0], false, true],
      [longs[1], true, true],
    ]);
    expect(tight.cut_at).toBe(longs[0]);
    expect((await call(http, 'get_documents', { document_ids: longs, max_chars: 100_000 })).cut_at).toBeNull();
    expect(await callError(http, 'get_documents', { document_ids: longs, max_chars: 100_001 })).toMatch(/max_chars/);
    expect(await callError(http, 'get_documents', { document_ids: [] })).toMatch(/document_ids/);
    expect(await callError(http, 'get_documents', { document_ids: Array.from({ length: 21 }, (_, i) => `doc_${i}`) })).toMatch(/document_ids/);
  });

  it('marks where each page starts, named by what the type counts, the last one included', async () => {
    for (const [filename, unit] of [
      ['briefing.pptx', 'slide'],
      ['coast.epub', 'chapter'],
      ['berths.csv', 'row'],
      ['berths.xlsx', 'row'],
    ] as const) {
      const out = await call(http, 'get_document', { document_id: typed.get(filename) });
      const marks = [...out.text.matchAll(/^\[(\w+) (\d+)\]$/gm)].map((m) => `${m[1]} ${m[2]}`);
      expect(marks.length, `${filename}: ${out.text}`).toBeGreaterThan(1);
      expect(new Set(marks.map((m) => m.split(' ')[0])), filename).toEqual(new Set([unit]));
      // In order, each once, up to the last unit the document has.
      const numbers = marks.map((m) => Number(m.split(' ')[1]));
      expect(numbers, filename).toEqual([...numbers].sort((a, b) => a - b));
      expect(new Set(numbers).size, filename).toBe(numbers.length);
      if (out.document.pages !== null) expect(numbers.at(-1), filename).toBe(out.document.pages);
      // page_from/page_to count the same units.
      const last = numbers.at(-1)!;
      const tail = await call(http, 'get_document', { document_id: typed.get(filename), page_from: last, page_to: last });
      expect(tail.text, filename).toMatch(new RegExp(`^\\[${unit} ${last}\\]`));
    }
  });

  it('names every document a file name could mean, with its id, and reads it by that id', async () => {
    const twin = await uploadFiles(d, alice.apiKey, [{ name: 'berths.csv', bytes: Buffer.from('vessel,berth\nDorado,west\n') }], { projectId: shared, query: '?wait=true' });
    const twinId = twin.body.documents[0].id;
    const refusal = await callError(http, 'get_document', { filename: 'berths.csv' });
    expect(refusal).toContain('2 documents are named "berths.csv"');
    expect(refusal).toContain(typed.get('berths.csv'));
    expect(refusal).toContain(twinId);
    expect((await call(http, 'get_document', { document_id: twinId })).text).toContain('Dorado');
  });

  it('lists the projects shared with a user with their role and the owner, paged', async () => {
    const first = await call(bobHttp, 'list_projects', { limit: 1 });
    expect(first.projects).toHaveLength(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await call(bobHttp, 'list_projects', { limit: 1, cursor: first.next_cursor });
    const all = [...first.projects, ...second.projects];
    expect(second.next_cursor).toBeNull();
    expect(all.find((p: any) => p.id === shared)).toMatchObject({ name: 'shared minutes', role: 'viewer', owner: alice.email, document_count: 1 });
    expect(all.find((p: any) => p.id !== shared)).toMatchObject({ is_default: true, role: 'owner' });
  });

  it("add_document goes to the user's default project, and a viewer's is refused naming their role", async () => {
    const note = await call(http, 'add_document', { filename: 'default note', text: '# Moorings\n\nMoorings are checked every Tuesday\nat noon.\n\n## Gales\n\nDouble the lines.' });
    expect(note.document).toMatchObject({ project_id: aliceDefault, status: 'ready' });
    // Read back as the parser read it: paragraphs a blank line apart, heading marks dropped.
    expect((await call(http, 'get_document', { document_id: note.document.id })).text).toBe('Moorings\n\nMoorings are checked every Tuesday\nat noon.\n\nGales\n\nDouble the lines.');
    // A passage found says the heading it sits under.
    const hit = await call(http, 'search', { query: 'double the lines', mode: 'keyword', document_ids: [note.document.id] });
    expect(hit.results[0]).toMatchObject({ document_id: note.document.id, filename: 'default note.md', heading: expect.stringMatching(/^Moorings/) });
    const refusal = await callError(bobHttp, 'add_document', { filename: 'mine.md', text: 'Bob tries to write here.', project_id: shared });
    expect(refusal).toBe('your role on this project is viewer: this needs editor (forbidden)');
    // The same words from docsearch mcp, whose add_document is an upload over the REST API.
    const stdio = await stdioClient(d.url, bob.apiKey);
    try {
      expect(await callError(stdio, 'add_document', { filename: 'mine.md', text: 'Bob tries to write here.', project_id: shared })).toBe(refusal);
    } finally {
      await stdio.close();
    }
    expect((await api(d, `/api/v1/documents?project_id=${shared}`, { token: alice.apiKey })).body.documents.map((x: any) => x.filename)).not.toContain('mine.md');
  });

  it('stores a note as an upload of the same file is stored: a .md note is Markdown, over /mcp as over docsearch mcp', async () => {
    const text = '# Tide gauge\n\nThe tide gauge at the north pier reads in feet.';
    const overHttp = await call(http, 'add_document', { filename: 'gauge http.md', text });
    const stdio = await stdioClient(d.url, alice.apiKey);
    let overStdio: any;
    try {
      overStdio = await call(stdio, 'add_document', { filename: 'gauge stdio.md', text: `${text} Both piers.` });
    } finally {
      await stdio.close();
    }
    expect(overStdio.document.content_type).toBe('text/markdown');
    expect(overHttp.document.content_type).toBe(overStdio.document.content_type);
    // So the type filter finds both.
    const found = await call(http, 'search', { query: 'tide gauge pier', mode: 'keyword', filters: { type: 'markdown' } });
    expect(new Set(found.results.map((r: any) => r.document_id))).toEqual(new Set([overHttp.document.id, overStdio.document.id]));
    // A name with a text ending keeps it, and is stored as that type; a name without one becomes a .md note.
    for (const [given, stored, type] of [
      ['ferry plan.markdown', 'ferry plan.markdown', 'text/markdown'],
      ['ferry minutes.txt', 'ferry minutes.txt', 'text/plain'],
      ['ferry log.text', 'ferry log.text', 'text/plain'],
      ['ferry notes', 'ferry notes.md', 'text/markdown'],
    ]) {
      const note = await call(http, 'add_document', { filename: given, text: `The ferry to the island sails at nine (${given}).` });
      expect(note.document, given).toMatchObject({ filename: stored, content_type: type });
    }
  });

  it('answers the same calls with the same JSON over /mcp and over docsearch mcp', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['list_projects', {}],
      ['list_documents', { limit: 100 }],
      ['get_document', { document_id: typed.get('briefing.pptx'), page_from: 2 }],
      ['get_documents', { document_ids: [typed.get('coast.epub'), typed.get('berths.xlsx')] }],
      ['search', { query: 'mooring lines before a gale', mode: 'keyword', facets: ['type'] }],
    ];
    const stdio = await stdioClient(d.url, alice.apiKey);
    try {
      for (const [name, args] of calls) expect(await call(stdio, name, args), name).toEqual(await call(http, name, args));
      // The resources too: the template, the list's first page and a document read.
      expect(await stdio.listResourceTemplates()).toEqual(await http.listResourceTemplates());
      const listed = await http.listResources();
      expect(listed.resources.length).toBeGreaterThan(0);
      expect(await stdio.listResources()).toEqual(listed);
      const uri = `docsearch://documents/${typed.get('coast.epub')}`;
      expect(await stdio.readResource({ uri })).toEqual(await http.readResource({ uri }));
    } finally {
      await stdio.close();
    }
  });

  it('lists no add_document to a client whose grant is read-only, and lists it once approved again with write', async () => {
    const redirect = 'http://127.0.0.1:39123/callback';
    const reg = await fetch(`${d.url}/api/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Reader', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const web = await loggedIn(d, alice);
    const tools = async (scope: string) => {
      const { verifier, challenge } = pkce();
      const code = await getCode(web, { client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: 'S256', scope, resource: `${d.url}/mcp` });
      const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirect, code_verifier: verifier, resource: `${d.url}/mcp` });
      expect(token.status, JSON.stringify(token.body)).toBe(200);
      const client = await httpClient(d, token.body.access_token);
      try {
        return (await client.listTools()).tools.map((t) => t.name);
      } finally {
        await client.close();
      }
    };
    expect(await tools('read:documents')).not.toContain('add_document');
    expect(await tools('read:documents write:documents')).toContain('add_document');
  });

  it('list_documents narrows by status', async () => {
    const failed = await call(http, 'list_documents', { status: 'failed' });
    expect(failed.documents.map((x: any) => x.id)).toEqual([failedId]);
    expect(failed.documents[0].error).toEqual(expect.any(String));
    const ready = await call(http, 'list_documents', { status: 'ready', limit: 100 });
    expect(ready.documents.map((x: any) => x.id)).not.toContain(failedId);
    expect(ready.documents.map((x: any) => x.id)).toEqual(expect.arrayContaining(longs));
  });

  it('search pages with next_cursor, says the total, and counts facets over the whole list', async () => {
    const query = { query: 'vessel berth cargo', mode: 'keyword' };
    const first = await call(http, 'search', { ...query, limit: 1, facets: ['type', 'project'] });
    expect(first.results).toHaveLength(1);
    expect(first.total.value).toBeGreaterThan(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(first.results[0]).toMatchObject({ score: expect.any(Number), snippet: expect.any(String) });
    const second = await call(http, 'search', { ...query, limit: 1, cursor: first.next_cursor });
    expect(second.results[0].chunk_id).not.toBe(first.results[0].chunk_id);
    const types = Object.fromEntries(first.facets.type.map((b: { value: string; count: number }) => [b.value, b.count]));
    expect(types.csv).toBeGreaterThan(0);
    expect(first.facets.type.reduce((n: number, b: { count: number }) => n + b.count, 0)).toBe(first.total.value);
    expect(await callError(http, 'search', { ...query, filters: { uploaded_since: 'last tuesday' } })).toMatch(/uploaded_since/);
    expect(await callError(http, 'search', { ...query, filters: { metadata: { year: { $near: 2020 } } } })).toMatch(/\$near/);
  });

  it('answers each tool call with the same JSON as text beside structuredContent', async () => {
    const res = await http.callTool({ name: 'list_projects', arguments: {} });
    const [content] = res.content as { type: string; text: string }[];
    expect(content!.type).toBe('text');
    expect(JSON.parse(content!.text)).toEqual(res.structuredContent);
  });

  it('lists the ready documents as resources 100 at a time, with nextCursor', async () => {
    // Each name holds "log.txt": the next test looks for the one document named so among them.
    const many = Array.from({ length: 100 }, (_, i) => ({ name: `buoy ${i} log.txt`, bytes: Buffer.from(`Buoy ${i} marks the channel.`) }));
    expect((await uploadFiles(d, alice.apiKey, many, { query: '?wait=true' })).status).toBe(200);
    const first = await http.listResources();
    expect(first.resources).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await http.listResources({ cursor: first.nextCursor });
    const uris = [...first.resources, ...second.resources].map((r) => r.uri);
    expect(second.nextCursor).toBeUndefined();
    // Every ready document once, the failed one not at all.
    const ready: string[] = [];
    for (let cursor = ''; ; ) {
      const page = (await api(d, `/api/v1/documents?status=ready&limit=100${cursor}`, { token: alice.apiKey })).body;
      ready.push(...page.documents.map((x: { id: string }) => `docsearch://documents/${x.id}`));
      if (!page.next_cursor) break;
      cursor = `&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(uris.sort()).toEqual(ready.sort());
    expect(uris).not.toContain(`docsearch://documents/${failedId}`);
  }, 120_000);

  it('reads a document by its exact name however many others hold that name in theirs', async () => {
    // Uploaded after the 100 "buoy … log.txt": past the first page of the documents whose names contain "log.txt".
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'log.txt', bytes: Buffer.from('The harbour log for the winter season.') }], { query: '?wait=true' });
    const out = await call(http, 'get_document', { filename: 'log.txt' });
    expect(out.document.id).toBe(up.body.documents[0].id);
    expect(out.text).toBe('The harbour log for the winter season.');
  });

  it('answers a resource that is unknown or not a document with a protocol error, never a tool result', async () => {
    await expect(http.readResource({ uri: 'docsearch://documents/doc_nope' })).rejects.toThrow(/^MCP error -32002: /);
    await expect(http.readResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(/^MCP error -32602: unknown resource file:\/\/\/etc\/passwd/);
  });

  it("lists a project shared with the user's group with the group's role, editor, into which add_document writes", async () => {
    const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
    expect((await op('groups', 'create', 'harbour crew')).code).toBe(0);
    expect((await op('groups', 'add', 'harbour crew', bob.email)).code).toBe(0);
    const crewLog = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'crew log' } })).body.id;
    expect((await api(d, `/api/v1/projects/${crewLog}/members`, { token: alice.apiKey, body: { group: 'harbour crew', role: 'editor' } })).status).toBe(201);
    const { projects } = await call(bobHttp, 'list_projects', {});
    expect(projects.find((p: any) => p.id === crewLog)).toMatchObject({ name: 'crew log', role: 'editor', owner: alice.email, document_count: 0 });
    const note = await call(bobHttp, 'add_document', { filename: 'watch rota', text: 'Bob keeps the night watch on Fridays.', project_id: crewLog });
    expect(note.document).toMatchObject({ project_id: crewLog, status: 'ready' });
  });

  it('describes to the model every filter field and facet the tools take (docs/mcp.md: the same schema as api.md)', async () => {
    const { tools } = await http.listTools();
    const fields = ['type', 'uploaded_since', 'uploaded_before', 'path_prefix', 'uploaded_by', 'source_id', 'labels', 'language', 'metadata'];
    for (const name of ['search', 'list_documents']) {
      const schema = tools.find((t) => t.name === name)!.inputSchema as unknown as { properties: Record<string, { description: string }>; definitions: Record<string, { properties: object }> };
      const filters = schema.properties.filters!;
      expect(Object.keys(schema.definitions.Filters!.properties).sort(), name).toEqual([...fields].sort());
      for (const field of fields) expect(filters.description, `${name}: ${field}`).toContain(field);
    }
    const facets = (tools.find((t) => t.name === 'search')!.inputSchema.properties as Record<string, { description: string }>).facets!;
    for (const facet of ['type', 'project', 'uploaded_by', 'year', 'label', 'language', 'metadata.<key>']) expect(facets.description, facet).toContain(facet);
    // The names described are the names taken.
    const counted = await call(http, 'search', { query: 'vessel berth cargo', mode: 'keyword', facets: ['language'] });
    const top = counted.facets.language[0];
    expect(top).toMatchObject({ value: expect.any(String), count: expect.any(Number) });
    expect((await call(http, 'search', { query: 'vessel berth cargo', mode: 'keyword', filters: { language: top.value } })).results.length).toBeGreaterThan(0);
  });
});
