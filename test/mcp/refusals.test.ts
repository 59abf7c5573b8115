/**
 * What the MCP tools refuse, and how: an argument a tool does not have, an id that is not the caller's, a blank
 * note, a request whose params are not an object, a credential or server `docsearch mcp` cannot use. Each refusal
 * names what was wrong, reads the same over /mcp and over `docsearch mcp`, and is never an empty answer.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, callError, httpClient, stdioClient } from './mcp-client.js';

const run = promisify(execFile);

const EMAIL = [
  'From: Ada Lovelace <ada@example.com>',
  'To: Charles Babbage <charles@example.com>',
  'Subject: The engine notes',
  'Date: Mon, 02 Mar 2026 10:00:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Charles, the notes on the analytical engine are attached.',
  '--b1',
  'Content-Type: text/plain; name="notes.txt"',
  'Content-Disposition: attachment; filename="notes.txt"',
  '',
  'Note G computes the Bernoulli numbers on the analytical engine.',
  '--b1--',
  '',
].join('\r\n');

describe('MCP refusals', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let http: Client;
  let stdio: Client;
  let bobProject: string;
  let aliceProject: string;
  let mailId: string;
  let noteId: string;
  let bobDocument: string;

  daemonForSuite(async (started) => {
    d = started;
    [alice, bob] = [await addUser(d), await addUser(d)];
  });
  beforeAll(async () => {
    const created = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'contracts' } });
    expect(created.status).toBe(201);
    aliceProject = created.body.id;
    bobProject = (await api(d, '/api/v1/projects', { token: bob.apiKey })).body.projects[0].id;
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'engine.eml', bytes: Buffer.from(EMAIL) }], { query: '?wait=true' });
    expect(up.status).toBe(200);
    mailId = up.body.documents[0].id;
    const other = await uploadFiles(d, bob.apiKey, [{ name: 'bob.txt', bytes: Buffer.from('Bob keeps his own notes on the engine.') }], { query: '?wait=true' });
    bobDocument = other.body.documents[0].id;
    http = await httpClient(d, alice.apiKey);
    stdio = await stdioClient(d.url, alice.apiKey);
    noteId = (await call(http, 'add_document', { filename: 'lease terms.txt', text: 'The lease runs for five years from March.', project_id: aliceProject })).document.id;
  }, 120_000);
  afterAll(async () => {
    await http?.close();
    await stdio?.close();
  });

  /** The same call over both transports: the same tool error, word for word. */
  async function bothRefuse(name: string, args: Record<string, unknown>): Promise<string> {
    const [overHttp, overStdio] = [await callError(http, name, args), await callError(stdio, name, args)];
    expect(overStdio, `${name} ${JSON.stringify(args)}`).toBe(overHttp);
    return overHttp;
  }

  it('refuses an argument a tool does not have, naming it, on every tool', async () => {
    expect(await bothRefuse('search', { query: 'engine', project: 'hr' })).toMatch(/"project"/);
    expect(await bothRefuse('search', { query: 'engine', projects: [aliceProject] })).toMatch(/"projects"/);
    expect(await bothRefuse('get_document', { document_id: noteId, pages: '1-2' })).toMatch(/"pages"/);
    expect(await bothRefuse('get_documents', { document_ids: [noteId], limit: 5 })).toMatch(/"limit"/);
    expect(await bothRefuse('list_projects', { name: 'x' })).toMatch(/"name"/);
    expect(await bothRefuse('list_documents', { filename: 'lease' })).toMatch(/"filename"/);
    expect(await bothRefuse('add_document', { filename: 'a.md', text: 'x', tags: ['y'] })).toMatch(/"tags"/);
    // A refused call changed nothing.
    expect((await api(d, '/api/v1/documents?filename=a.md', { token: alice.apiKey })).body.documents).toEqual([]);
  });

  it('names an unknown or foreign project id on every tool that takes one, never answering with nothing', async () => {
    for (const id of ['prj_nope', bobProject]) {
      const expected = `no project "${id}" that this user may read: list_projects gives their ids (not_found)`;
      expect(await bothRefuse('search', { query: 'engine', project_id: id })).toBe(expected);
      expect(await bothRefuse('search', { query: 'engine', project_ids: [aliceProject, id] })).toBe(expected);
      expect(await bothRefuse('list_documents', { project_id: id })).toBe(expected);
      expect(await bothRefuse('add_document', { filename: 'x.md', text: 'hello', project_id: id })).toBe(expected);
    }
    for (const id of ['doc_nope', bobDocument]) {
      const expected = `no document "${id}" that this user may read: search or list_documents gives their ids (not_found)`;
      expect(await bothRefuse('search', { query: 'engine', document_ids: [id] })).toBe(expected);
      expect(await bothRefuse('get_document', { document_id: id })).toBe(expected);
      expect(await bothRefuse('get_documents', { document_ids: [noteId, id] })).toBe(expected);
    }
    // Known ids narrow the search as asked.
    const inProject = await call(http, 'search', { query: 'lease five years', project_ids: [aliceProject], mode: 'keyword' });
    expect(inProject.results.map((r: any) => r.document_id)).toEqual([noteId]);
    const inMail = await call(http, 'search', { query: 'analytical engine', document_ids: [mailId], mode: 'keyword' });
    expect(new Set(inMail.results.map((r: any) => r.document_id))).toEqual(new Set([mailId]));
  });

  it('gives the same error text over both transports for bad cursors and arguments', async () => {
    expect(await bothRefuse('search', { query: 'engine', cursor: 'not-a-cursor' })).toMatch(/cursor/);
    expect(await bothRefuse('list_projects', { cursor: 'zzz' })).toMatch(/cursor/);
    expect(await bothRefuse('list_documents', { cursor: 'zzz' })).toMatch(/cursor/);
    expect(await bothRefuse('get_document', { document_id: noteId, page_from: 1 })).toMatch(/no pages/);
    expect(await bothRefuse('search', { query: 'x', limit: 1000 })).toMatch(/limit/);
  });

  it('refuses a note that is empty or only whitespace', async () => {
    for (const text of ['', '   ', '\n\n\t \n']) {
      expect(await bothRefuse('add_document', { filename: 'blank.md', text })).toMatch(/must not be empty or only whitespace.* at text/);
    }
    expect((await api(d, '/api/v1/documents?filename=blank', { token: alice.apiKey })).body.documents).toEqual([]);
  });

  it('answers tools/call with arguments that are not an object with Invalid Params naming them, not an internal error', async () => {
    for (const args of [null, 'x', [1]]) {
      const res = await fetch(`${d.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search', arguments: args } }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; error: { code: number; message: string } };
      expect(body.id).toBe(7);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toMatch(/^invalid tools\/call request: params\.arguments: /);
      expect(body.error.message).not.toMatch(/[{[]/);
    }
  });

  it('shows what the REST API has on a document: project name, chunks, warnings, attachment and e-mail headers', async () => {
    const mail = await call(http, 'get_document', { document_id: mailId });
    expect(mail.document).toMatchObject({ id: mailId, project_name: 'default', attached_to: null, warnings: [], status: 'ready' });
    expect(mail.document.chunk_count).toBeGreaterThan(0);
    expect(mail.document.email).toEqual({ from: 'Ada Lovelace <ada@example.com>', to: ['Charles Babbage <charles@example.com>'], cc: [], date: '2026-03-02T10:00:00.000Z', subject: 'The engine notes' });
    const attachments = await call(http, 'list_documents', { name: 'notes.txt' });
    expect(attachments.documents).toEqual([expect.objectContaining({ attached_to: mailId, project_name: 'default' })]);
    const note = await call(http, 'get_document', { filename: 'lease terms.txt' });
    expect(note.document).toMatchObject({ id: noteId, project_id: aliceProject, project_name: 'contracts' });
  });

  it('finds a document by file name or path, and offers the nearest names when none matches', async () => {
    expect((await call(http, 'get_document', { filename: 'LEASE TERMS.TXT' })).document.id).toBe(noteId);
    const synced = await uploadFiles(d, alice.apiKey, [{ name: 'q3.txt', bytes: Buffer.from('Quarter three figures.') }], { query: '?wait=true', fields: { paths: JSON.stringify(['reports/2026/q3.txt']) } });
    expect(synced.status).toBe(200);
    expect((await call(http, 'get_document', { path: 'reports/2026/q3.txt' })).text).toBe('Quarter three figures.');
    // A passage found says the path its document came from.
    const hit = await call(http, 'search', { query: 'quarter three figures', mode: 'keyword', document_ids: [synced.body.documents[0].id] });
    expect(hit.results[0]).toMatchObject({ filename: 'q3.txt', path: 'reports/2026/q3.txt' });
    expect(await bothRefuse('get_document', { filename: 'lease-term.txt' })).toMatch(/^no document named "lease-term\.txt"; the nearest: "lease terms\.txt" \(doc_/);
    expect(await bothRefuse('get_document', { path: 'reports/2025/q3.txt' })).toMatch(/the nearest: "reports\/2026\/q3\.txt"/);
    expect(await bothRefuse('get_document', { filename: 'zzzzzzzzzzzzzzzzzzzz.pdf' })).toMatch(/nor any with a similar name/);
    expect(await bothRefuse('get_document', { document_id: noteId, filename: 'lease terms.txt' })).toMatch(/exactly one of document_id, filename or path/);
  });

  it('get_documents reads several documents within one budget and says where it was cut', async () => {
    const all = await call(http, 'get_documents', { document_ids: [noteId, mailId] });
    expect(all.cut_at).toBeNull();
    expect(all.documents.map((x: any) => x.document.id)).toEqual([noteId, mailId]);
    expect(all.documents[0].text).toBe('The lease runs for five years from March.');
    const note = all.documents[0].text.length;
    const cut = await call(http, 'get_documents', { document_ids: [noteId, mailId, noteId], max_chars: note + 100 });
    expect(cut.documents).toHaveLength(2);
    expect(cut.documents[0].cut).toBe(false);
    expect(cut.documents[1]).toMatchObject({ cut: true, next_offset: expect.any(Number) });
    expect(cut.documents[1].text.length).toBeLessThanOrEqual(100);
    expect(cut.cut_at).toBe(mailId);
  });

  it('lists resources without the file size as the text size', async () => {
    const { resources } = await http.listResources();
    const mail = resources.find((r) => r.uri === `docsearch://documents/${mailId}`)!;
    expect(mail.size).toBeUndefined();
  });

  it('docsearch mcp with a bad credential or no server says so on stderr and fails to connect', async () => {
    const bad: string[] = [];
    await expect(stdioClient(d.url, 'dsk_not_a_real_key', bad)).rejects.toThrow();
    expect(bad.join('')).toMatch(/^error: DOCSEARCH_TOKEN: that is not a valid key/m);
    const revoked: string[] = [];
    await expect(stdioClient(d.url, `dsk_${'a'.repeat(43)}`, revoked)).rejects.toThrow();
    expect(revoked.join('')).toMatch(/^error: .*401|^error: .*(invalid|unknown|revoked)/im);
    const down: string[] = [];
    await expect(stdioClient('http://127.0.0.1:9', alice.apiKey, down)).rejects.toThrow();
    expect(down.join('')).toMatch(/could not reach http:\/\/127\.0\.0\.1:9/);
  });

  it('the MCP Inspector in strict mode finds nothing to warn of in the tools', async () => {
    const inspector = join(REPO, 'node_modules/.bin/mcp-inspector');
    const env = { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'inspector-home-')) };
    const args = ['--cli', '--strict', process.execPath, join(REPO, 'bin/docsearch'), 'mcp', '-e', `DOCSEARCH_URL=${d.url}`, '-e', `DOCSEARCH_TOKEN=${alice.apiKey}`, '--method', 'tools/list'];
    const listed = await run(inspector, args, { env, timeout: 60_000 });
    expect(JSON.parse(listed.stdout).tools).toHaveLength(6);
    const warnings = listed.stderr.replace(/^docsearch mcp: serving .*\n/m, '');
    expect(warnings, warnings).toBe('');
    // Every input says what it is.
    for (const tool of JSON.parse(listed.stdout).tools) {
      for (const [name, schema] of Object.entries(tool.inputSchema.properties as Record<string, { description?: string }>)) {
        expect(schema.description, `${tool.name}.${name}`).toEqual(expect.any(String));
      }
    }
  });
});
