/**
 * What the other MCP suites let through, found by breaking src/mcp and the /mcp route one place at a time (a
 * mutation audit): each test here fails against one such break, through the official SDK's client on a real
 * daemon's /mcp (and `docsearch mcp`) with real API keys. A key with write:documents only: add_document saved the
 * note, then failed reading its project's name (a real defect), and the in-process library's own scope check was what
 * kept it from listing and reading documents as resources (dropping it passed the MCP suites). search's project_id /
 * project_ids and list_documents' project_id went unsent without a failure: the projects asked held the only match.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { call, callError, httpClient, stdioClient } from './mcp-client.js';

describe('MCP behaviour the other suites did not hold', () => {
  let d: Daemon;
  let alice: TestUser;
  let writer: Client;
  let writeOnlyKey: string;
  let aliceDefault: string;
  let defaultName: string;
  let second: string;
  let harbour: string;
  let ferry: string;
  let http: Client;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });
  beforeAll(async () => {
    http = await httpClient(d, alice.apiKey);
    const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'write only', scopes: ['write:documents'] } });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    writeOnlyKey = key.body.key;
    writer = await httpClient(d, writeOnlyKey);
    ({ id: aliceDefault, name: defaultName } = (await api(d, '/api/v1/projects', { token: alice.apiKey })).body.projects[0]);
    second = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Second' } })).body.id;
    harbour = (await call(http, 'add_document', { filename: 'harbour.md', text: 'The harbour master keeps the tide tables.' })).document.id;
    ferry = (await call(http, 'add_document', { filename: 'ferry.md', text: 'The ferry timetable follows the tide tables.', project_id: second })).document.id;
  });
  afterAll(async () => {
    await http?.close();
    await writer?.close();
  });

  it('a key with write:documents only is offered add_document alone, which saves the note and says so, on both transports', async () => {
    const stdio = await stdioClient(d.url, writeOnlyKey);
    try {
      for (const [client, over] of [[writer, 'http'], [stdio, 'stdio']] as const) {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add_document']);
        const saved = await call(client, 'add_document', { filename: `write only ${over}`, text: `A note saved over ${over} by a key that cannot read.` });
        expect(saved.document).toMatchObject({ filename: `write only ${over}.md`, project_id: aliceDefault, project_name: null, status: 'ready' });
        // Into a project named, as the upload takes it: no read of the project first.
        const named = await call(client, 'add_document', { filename: `named ${over}`, text: `Filed over ${over} into the second project.`, project_id: second });
        expect(named.document).toMatchObject({ project_id: second, project_name: null });
        expect(await callError(client, 'add_document', { filename: 'x.md', text: 'hello', project_id: 'prj_nope' })).toMatch(/\(not_found\)$/);
      }
    } finally {
      await stdio.close();
    }
    const listed = await call(http, 'list_documents', { limit: 100 });
    expect(listed.documents.filter((x: any) => /^(write only|named) /.test(x.filename)).map((x: any) => [x.filename, x.project_name]).sort()).toEqual([
      ['named http.md', 'Second'],
      ['named stdio.md', 'Second'],
      ['write only http.md', defaultName],
      ['write only stdio.md', defaultName],
    ]);
  });

  it('a key with write:documents only neither lists nor reads documents as resources: refused naming the scope', async () => {
    const refused = 'this credential lacks the read:documents scope (insufficient_scope)';
    await expect(writer.listResources()).rejects.toThrow(refused);
    await expect(writer.readResource({ uri: `docsearch://documents/${harbour}` })).rejects.toThrow(refused);
    // The same requests with a key that reads answer them.
    expect((await http.listResources()).resources.map((r) => r.uri)).toContain(`docsearch://documents/${harbour}`);
  });

  it('search and list_documents keep to the project asked, though another project matches too', async () => {
    const everywhere = await call(http, 'search', { query: 'tide tables', mode: 'keyword' });
    expect(new Set(everywhere.results.map((r: any) => r.document_id))).toEqual(new Set([harbour, ferry]));
    for (const only of [{ project_id: second }, { project_ids: [second] }]) {
      const found = await call(http, 'search', { query: 'tide tables', mode: 'keyword', ...only });
      expect(found.results.map((r: any) => [r.document_id, r.project.id])).toEqual([[ferry, second]]);
    }
    const listed = await call(http, 'list_documents', { project_id: second });
    expect(listed.documents.map((x: any) => x.id)).toEqual(expect.arrayContaining([ferry]));
    expect(listed.documents.every((x: any) => x.project_id === second)).toBe(true);
    expect(listed.documents.map((x: any) => x.id)).not.toContain(harbour);
  });
});
