/**
 * The MCP tools through real clients: the official SDK's client over Streamable HTTP on a real daemon's /mcp
 * (API keys as bearer credentials) and over stdio on the built `docsearch mcp`, and the MCP Inspector's CLI.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type Daemon, REPO, addUser, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient, stdioClient } from './mcp-client.js';

const run = promisify(execFile);

/** One long section of distinct sentences: several chunks, and consecutive chunks of a section overlap. */
const LONG = Array.from(
  { length: 60 },
  (_, i) =>
    `Paragraph ${i + 1} of the survey. The surveyor counted ${i * 7 + 3} herons at the marsh number ${i + 1}. ` +
    `Weather on day ${i + 1} was ${['calm', 'windy', 'wet', 'foggy'][i % 4]}, and the tide stood ${(i % 5) + 1} feet above the mark. ` +
    `Notes for station ${i + 1}: reeds ${i % 2 ? 'cut' : 'standing'}, water ${i % 3 ? 'clear' : 'brown'}.`,
).join(' ');

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

const SCOPE_REFUSAL =
  'this credential lacks the write:documents scope that add_document needs: the user can give it an API key with that scope, or approve this client again with it (insufficient_scope)';

describe('MCP tools', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let readOnlyKey: string;
  let pdfId: string;
  let longId: string;
  let aliceClient: Client;
  let bobClient: Client;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob] = [await addUser(d), await addUser(d)];
    // Pages long enough to be chunks of their own; each page's beacon line comes last, in a chunk that starts on it.
    const pages = [1, 2, 3].map((n) => [
      {
        lines: [
          `Page ${n} of the lighthouse log opens here.`,
          ...Array.from({ length: 28 }, (_, i) => `Entry ${n}.${i}: the lamp burned ${i + n} hours and the wind came from bearing ${(i * 37 + n * 11) % 360} degrees.`),
          `The keeper on page ${n} recorded the beacon colour ${['amber', 'violet', 'teal'][n - 1]}.`,
        ],
        size: 8,
      },
    ]);
    const up = await uploadFiles(d, alice.apiKey, [
      { name: 'lighthouse.pdf', bytes: makePdf(pages) },
      { name: 'survey.txt', bytes: Buffer.from(LONG) },
    ], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    [pdfId, longId] = up.body.documents.map((x: { id: string }) => x.id);
    const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'read only', scopes: ['read:documents'] } });
    expect(key.status).toBe(201);
    readOnlyKey = key.body.key;
  });

  beforeAll(async () => {
    aliceClient = await httpClient(d, alice.apiKey);
    bobClient = await httpClient(d, bob.apiKey);
  });
  afterAll(async () => {
    await aliceClient?.close();
    await bobClient?.close();
  });

  it('lists six tools with input and output schemas, and marks the read-only ones', async () => {
    const { tools } = await aliceClient.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['add_document', 'get_document', 'get_documents', 'list_documents', 'list_projects', 'search']);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.annotations?.readOnlyHint, t.name).toBe(t.name !== 'add_document');
    }
  });

  it('search finds the passage, with its document, project and page', async () => {
    const out = await call(aliceClient, 'search', { query: 'which colour was the beacon on page 2', mode: 'keyword' });
    expect(out.weak).toBe(false);
    const hit = out.results.find((r: any) => r.text.includes('violet'));
    expect(hit, JSON.stringify(out)).toBeDefined();
    expect(hit).toMatchObject({ document_id: pdfId, filename: 'lighthouse.pdf', page_start: 2, project: { name: 'default' } });
    expect(hit.highlights.length).toBeGreaterThan(0);
    const grouped = await call(aliceClient, 'search', { query: 'herons counted at the marsh', group: 'document', limit: 5 });
    expect(grouped.documents[0].document_id).toBe(longId);
    expect(grouped.documents[0].passages.length).toBeGreaterThan(0);
  });

  it('says weak when nothing really matched: the nearest few, flagged; keyword mode then answers nothing', async () => {
    const nonsense = await call(aliceClient, 'search', { query: 'xyzzyplugh frobnicate' });
    expect(nonsense.weak).toBe(true);
    expect(nonsense.results.length).toBeGreaterThan(0);
    expect(await call(aliceClient, 'search', { query: 'xyzzyplugh frobnicate', mode: 'keyword' })).toMatchObject({ weak: false, results: [], total: { value: 0 } });
  });

  it('get_document reads one page of a PDF', async () => {
    const out = await call(aliceClient, 'get_document', { document_id: pdfId, page_from: 2, page_to: 2 });
    expect(out.text).toContain('Entry 2.5: the lamp burned 7 hours');
    expect(out.text).toContain('violet');
    // Page 2's passages, and at most a passage that runs into it: never page 1's first line or page 3's last.
    expect(out.text).not.toContain('Page 1 of the lighthouse log');
    expect(out.text).not.toContain('teal');
    expect(out.text).toMatch(/^\[pages? [12]/);
    expect(out.next_offset).toBeNull();
    expect(await callError(aliceClient, 'get_document', { document_id: pdfId, page_from: 9 })).toMatch(/past the document's last page \(3\)/);
  });

  it('get_document walks a long document window by window, each sentence once', async () => {
    let offset: number | undefined;
    let text = '';
    let calls = 0;
    do {
      const out: any = await call(aliceClient, 'get_document', { document_id: longId, max_chars: 700, ...(offset !== undefined ? { offset } : {}) });
      expect(out.text.length).toBeLessThanOrEqual(700);
      expect(out.cut, `window at ${String(offset ?? 0)}`).toBe(out.next_offset !== null);
      text += out.text;
      offset = out.next_offset ?? undefined;
      calls++;
    } while (offset !== undefined && calls < 100);
    expect(calls).toBeGreaterThan(5);
    // The chunks overlap; the text rebuilt from them must not repeat what they share.
    expect(squash(text)).toBe(squash(LONG));
  });

  it('list_projects and list_documents page through the library', async () => {
    const projects = await call(aliceClient, 'list_projects', {});
    expect(projects.projects).toEqual([expect.objectContaining({ name: 'default', is_default: true, document_count: 2 })]);
    const first = await call(aliceClient, 'list_documents', { limit: 1 });
    expect(first.documents).toHaveLength(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await call(aliceClient, 'list_documents', { limit: 1, cursor: first.next_cursor });
    expect(second.documents[0].id).not.toBe(first.documents[0].id);
    const named = await call(aliceClient, 'list_documents', { name: 'LIGHT' });
    expect(named.documents.map((x: any) => x.filename)).toEqual(['lighthouse.pdf']);
  });

  it('add_document saves a note that search then finds', async () => {
    const out = await call(aliceClient, 'add_document', { filename: 'decisions', text: '# Decisions\n\nWe chose the quince orchard for the spring picnic.' });
    expect(out.document).toMatchObject({ filename: 'decisions.md', status: 'ready' });
    const found = await call(aliceClient, 'search', { query: 'quince orchard picnic', mode: 'keyword' });
    expect(found.results[0].document_id).toBe(out.document.id);
  });

  it('a read-only key searches, is not offered add_document and cannot call it', async () => {
    const ro = await httpClient(d, readOnlyKey);
    let refusal = '';
    try {
      expect((await call(ro, 'search', { query: 'lighthouse keeper' })).results.length).toBeGreaterThan(0);
      expect((await ro.listTools()).tools.map((t) => t.name)).not.toContain('add_document');
      // Called anyway (a client that listed the tools under another grant): the refusal names the missing scope, not
      // "not found", so the model can tell the user what to change.
      refusal = await callError(ro, 'add_document', { filename: 'x.md', text: 'not allowed' });
      expect(refusal).toBe(SCOPE_REFUSAL);
    } finally {
      await ro.close();
    }
    const stdio = await stdioClient(d.url, readOnlyKey);
    try {
      expect((await stdio.listTools()).tools.map((t) => t.name)).not.toContain('add_document');
      expect(await callError(stdio, 'add_document', { filename: 'x.md', text: 'not allowed' })).toBe(refusal);
    } finally {
      await stdio.close();
    }
    const listed = await api(d, '/api/v1/documents?filename=x.md', { token: alice.apiKey });
    expect(listed.body.documents).toEqual([]);
  });

  it("one user never sees another's documents", async () => {
    // Alice's search finds her document; Bob's, the same words, nothing.
    const hers = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'lighthouse beacon violet', mode: 'keyword' } });
    expect((hers.body.results as { document: { id: string } }[]).map((r) => r.document.id)).toContain(pdfId);
    const out = await call(bobClient, 'search', { query: 'lighthouse beacon violet', mode: 'keyword' });
    expect(out.results).toEqual([]);
    expect(await callError(bobClient, 'get_document', { document_id: pdfId })).toBe(`no document "${pdfId}" that this user may read: search or list_documents gives their ids (not_found)`);
    expect((await call(bobClient, 'list_documents', {})).documents).toEqual([]);
    expect((await bobClient.listResources()).resources).toEqual([]);
    // One "MCP error -32002: " (the client's), not two.
    await expect(bobClient.readResource({ uri: `docsearch://documents/${pdfId}` })).rejects.toThrow(/^MCP error -32002: document not found \(not_found\)$/);
  });

  it('serves each document as a resource', async () => {
    const { resourceTemplates } = await aliceClient.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['docsearch://documents/{id}']);
    const { resources } = await aliceClient.listResources();
    expect(resources.map((r) => r.name)).toEqual(expect.arrayContaining(['lighthouse.pdf', 'survey.txt']));
    const read = await aliceClient.readResource({ uri: `docsearch://documents/${pdfId}` });
    expect((read.contents[0] as { text: string }).text).toMatch(/amber[\s\S]*violet[\s\S]*teal/);
  });

  it('answers unknown tools and bad arguments with tool errors', async () => {
    expect(await callError(aliceClient, 'delete_everything', {})).toMatch(/not found/);
    expect(await callError(aliceClient, 'search', { query: '' })).toMatch(/query/);
    // limit ≤ 50: at the bound taken, one past it refused naming the field.
    expect((await call(aliceClient, 'search', { query: 'lighthouse keeper', limit: 50 })).results.length).toBeGreaterThan(0);
    expect(await callError(aliceClient, 'search', { query: 'x', limit: 51 })).toMatch(/<=50 at limit/);
  });

  it('refuses a request without credentials with the resource metadata challenge', async () => {
    const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${d.url}/.well-known/oauth-protected-resource/mcp", scope="read:documents write:documents"`);
  });

  it('docsearch mcp serves the same tools on stdio, with nothing but protocol on stdout', async () => {
    const stderr: string[] = [];
    const client = await stdioClient(d.url, alice.apiKey, stderr);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('get_document');
      const out = await call(client, 'search', { query: 'beacon colour on page 3', mode: 'keyword' });
      expect(out.results.find((r: any) => r.text.includes('teal'))).toMatchObject({ document_id: pdfId, page_start: 3 });
      expect(await callError(client, 'get_document', { document_id: 'doc_missing' })).toMatch(/no document "doc_missing"/);
    } finally {
      await client.close();
    }
    expect(stderr.join('')).toContain(`serving ${d.url} on stdio (read:documents, write:documents)`);
  });

  it('the MCP Inspector CLI lists the tools of docsearch mcp and calls search', async () => {
    const inspector = join(REPO, 'node_modules/.bin/mcp-inspector');
    const env = { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'inspector-home-')) };
    const common = ['--cli', process.execPath, join(REPO, 'bin/docsearch'), 'mcp', '-e', `DOCSEARCH_URL=${d.url}`, '-e', `DOCSEARCH_TOKEN=${alice.apiKey}`];
    const list = await run(inspector, [...common, '--method', 'tools/list'], { env, timeout: 60_000 });
    expect(JSON.parse(list.stdout).tools.map((t: { name: string }) => t.name)).toContain('search');
    const called = await run(inspector, [...common, '--method', 'tools/call', '--tool-name', 'search', '--tool-arg', 'query=keeper beacon amber', '--tool-arg', 'mode=keyword'], {
      env,
      timeout: 60_000,
    });
    const result = JSON.parse(called.stdout);
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.results.some((r: any) => r.text.includes('amber'))).toBe(true);
  });
});
