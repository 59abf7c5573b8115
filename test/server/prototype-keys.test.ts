/**
 * Names that every JavaScript object carries on its prototype (`constructor`, `toString`, `__proto__`), coming from
 * outside — a URL, an upload's bytes or fields, a web form, an MCP call over stdio — through the real interfaces of
 * one daemon. A lookup table must not find Object's own properties under them (a 500), and a `__proto__` key is
 * refused naming where it was, never dropped without a word (test/search/filter-probe.test.ts holds the filters').
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeZip } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { stdioClient } from '../mcp/mcp-client.js';
import { loggedIn } from './web-client.js';

const OBJECT_NAMES = ['constructor', 'toString', 'hasOwnProperty', '__proto__'];

describe('names on Object.prototype, from outside', () => {
  let d: Daemon;
  let user: TestUser;
  let projectId: string;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    projectId = (await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'prototype keys' } })).body.id;
    // `constructor` is a metadata key like any other.
    const kept = await uploadFiles(d, user.apiKey, [{ name: 'kept.txt', bytes: Buffer.from('kept harbour notes') }], { projectId, metadata: '{"constructor": "x"}', query: '?wait=true' });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.documents[0].metadata).toEqual({ constructor: 'x' });
  });

  const documentCount = async () => (await api(d, `/api/v1/documents?project_id=${projectId}`, { token: user.apiKey })).body.documents.length as number;

  it('serves no static asset named like an Object property: a 404, as any unknown file, not a 500', async () => {
    for (const name of OBJECT_NAMES) {
      const res = await fetch(`${d.url}/static/${name}`);
      expect(res.status, name).toBe(404);
    }
    expect((await fetch(`${d.url}/static/app.css`)).status).toBe(200);
  });

  it('refuses a Content-Encoding named like an Object property as any unknown one (415), and goes on serving', async () => {
    // Object was taken for a decoder: the body was piped into `{}`, which threw outside any request, and the daemon exited.
    for (const coding of OBJECT_NAMES) {
      const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: `coded ${coding}` }, headers: { 'content-encoding': coding } });
      expect(res.status, `${coding}: ${JSON.stringify(res.body)}`).toBe(415);
      expect(res.body.error.message).toBe(`unsupported Content-Encoding "${coding.toLowerCase()}": send gzip, deflate, br or none`);
    }
    expect((await fetch(`${d.url}/api/v1/health`)).status).toBe(200);
  });

  it("refuses a ZIP archive whose mimetype names an Object property as no format it reads (415), not a 500", async () => {
    for (const mimetype of ['constructor', 'toString']) {
      const zip = makeZip({ mimetype, 'content.xml': '<office:document-content>harbour</office:document-content>' });
      const res = await uploadFiles(d, user.apiKey, [{ name: `${mimetype}.odt`, bytes: zip }], { projectId });
      expect(res.status, JSON.stringify(res.body)).toBe(415);
      expect(res.body.error.message).toContain('is a ZIP archive of 2 files ("mimetype", "content.xml"), none of them the parts of a DOCX');
    }
    expect(await documentCount()).toBe(1);
  });

  it('refuses a "__proto__" key or a key given twice in an upload\'s metadata, as JSON bodies do, keeping nothing', async () => {
    // Kept once: no filter, PATCH or MCP call could name the key again (each refuses it), so it could never be removed.
    const cases: [string, string][] = [
      ['{"__proto__": {"team": "ops"}}', 'metadata: the key "__proto__" is not accepted'],
      ['{"a": {"\\u005f_proto__": 1}}', 'metadata.a: the key "__proto__" is not accepted'],
      ['{"team": "ops", "team": "hr"}', 'metadata.team: is given more than once; send each key once'],
    ];
    for (const [metadata, message] of cases) {
      const res = await uploadFiles(d, user.apiKey, [{ name: 'notes.txt', bytes: Buffer.from('harbour notes') }], { projectId, metadata });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.message).toBe(message);
    }
    expect(await documentCount()).toBe(1);
  });

  it('refuses a source kind named like an Object property on the web form with the form again (400), not a 500', async () => {
    const web = await loggedIn(d, user);
    await web.get(`/projects/${projectId}/sources`);
    for (const kind of ['constructor', 'toString', '__proto__']) {
      const res = await web.submit(`/projects/${projectId}/sources`, { _csrf: web.csrf, kind, url: 'https://example.com/docs/', every: '1h' });
      expect(res.status, `${kind}: ${res.text.slice(0, 300)}`).toBe(400);
      expect(res.text).toContain('The source was not added: kind: must be one of');
    }
    expect((await api(d, `/api/v1/projects/${projectId}/sources`, { token: user.apiKey })).body.sources).toEqual([]);
  });

  it('answers the web search page with a language filter that is no language tag (constructor, 1) with its refusal (400), not a 500', async () => {
    // The search refused the code, then the page's filter chip asked Intl for the language's name, and Intl threw.
    const web = await loggedIn(d, user);
    for (const language of ['constructor', '__proto__', '1']) {
      const res = await web.get(`/search?q=harbour&language=${language}`);
      expect(res.status, `${language}: ${res.text.slice(0, 300)}`).toBe(400);
      expect(res.text).toContain('must be a language code');
    }
  });

  it('docsearch mcp on stdio refuses a "__proto__" filter key as /mcp does, rather than search without the filter', async () => {
    const stderr: string[] = [];
    const client = await stdioClient(d.url, user.apiKey, stderr);
    try {
      // A computed key is an own property, so the JSON the client sends carries it.
      const filters = { metadata: { ['__proto__']: { $in: ['nobody'] } } };
      const refused = await client.callTool({ name: 'search', arguments: { query: 'harbour', filters } }).then(
        () => null,
        (err: { code: number; message: string }) => err,
      );
      // An Invalid Request (-32600), as /mcp answers it (docs/mcp.md).
      expect(refused?.code).toBe(-32600);
      expect(refused?.message).toContain('invalid request: params.arguments.filters.metadata: the key "__proto__" is not accepted');
      await expect(client.callTool({ name: 'list_documents', arguments: { filters: { labels: ['x'], metadata: { a: [{ ['__proto__']: 1 }] } } } })).rejects.toThrow(
        'invalid request: params.arguments.filters.metadata.a[0]: the key "__proto__" is not accepted',
      );
      // The session goes on: the next call is answered.
      const found = await client.callTool({ name: 'search', arguments: { query: 'harbour', filters: { metadata: { constructor: 'x' } } } });
      expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
      const answer = found.structuredContent as { results?: { filename: string }[]; documents?: { filename: string }[] };
      expect((answer.results ?? answer.documents ?? []).map((r) => r.filename)).toEqual(['kept.txt']);
    } finally {
      await client.close();
    }
  });
});
