import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/** What a client library, curl or a proxy meets beyond the happy path of /api/v1 (docs/api.md, Conventions). */
describe('REST API HTTP semantics', () => {
  let d: Daemon;
  let user: TestUser;
  let projectId: string;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    projectId = (await send('/api/v1/projects', { body: '{"name":"semantics"}' })).body.id;
  });

  /** A request with exactly these bytes and headers (fetch adds no Content-Type to a byte body). */
  async function send(path: string, opts: { method?: string; body?: string | Uint8Array; type?: string; headers?: Record<string, string>; token?: string | null } = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? user.apiKey : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['content-type'] = opts.type ?? 'application/json';
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
    const res = await fetch(d.url + path, { method: opts.method ?? (body ? 'POST' : 'GET'), headers, body });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  function expectError(res: Awaited<ReturnType<typeof send>>, status: number, code: string, message?: string) {
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.error.code).toBe(code);
    if (message !== undefined) expect(res.body.error.message).toBe(message);
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  }

  it('a known path with a method it lacks is a 405 with Allow in the error shape; an unknown path a 404', async () => {
    const wrong = await send('/api/v1/projects', { method: 'DELETE', headers: { accept: 'text/html' } });
    expectError(wrong, 405, 'method_not_allowed', 'DELETE is not allowed on /api/v1/projects');
    expect(wrong.headers.get('allow')).toBe('HEAD, GET, POST');
    expectError(await send('/api/v1/no-such-thing', { method: 'DELETE' }), 404, 'not_found');
  });

  it('OPTIONS is a 204 with Allow and no content, credential or not', async () => {
    const options = await send(`/api/v1/projects/${projectId}`, { method: 'OPTIONS', token: null });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('HEAD, GET, PATCH, DELETE');
    expect(options.headers.get('content-type')).toBeNull();
    expect(options.text).toBe('');
  });

  it('paths are case-sensitive: /API/V1 is no API path', async () => {
    expect((await send('/api/v1/projects')).status).toBe(200);
    // Not an API path, so a web page for a browser; a client asking for JSON gets the error body.
    expectError(await send('/API/V1/projects', { headers: { accept: 'application/json' } }), 404, 'not_found');
  });

  it('HEAD answers every GET route with the GET status and headers and no body', async () => {
    const doc = (await send('/api/v1/openapi.json')).body;
    const gets = Object.entries(doc.paths as Record<string, Record<string, unknown>>).filter(([, ops]) => ops.get);
    expect(gets.length).toBeGreaterThan(20);
    for (const [template] of gets) {
      // Path parameters: the real project where one fits, else a made-up id (a 404 is a GET answer like another).
      const path = template.replace('{id}', projectId).replace(/\{[^}]+\}/g, 'x_none');
      const get = await send(path);
      const head = await send(path, { method: 'HEAD' });
      expect(head.status, path).toBe(get.status);
      expect(head.text, path).toBe('');
      for (const h of ['content-type', 'cache-control', 'allow', 'www-authenticate']) expect(head.headers.get(h), `${path} ${h}`).toBe(get.headers.get(h));
    }
  });

  it('errors on API paths stay JSON whatever the Accept header asks for', async () => {
    for (const accept of ['text/html', '*/*', 'application/json', 'application/xml']) {
      expectError(await send('/api/v1/nothing', { headers: { accept } }), 404, 'not_found');
      expectError(await send('/api/v1/projects', { token: null, headers: { accept } }), 401, 'unauthorized');
    }
  });

  it('JSON bodies: application/json in any letter case, with charset utf-8 or none', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset="UTF-8"']) {
      const res = await send(`/api/v1/projects/${projectId}`, { method: 'PATCH', body: '{"description":"ok"}', type });
      expect(res.status, `${type}: ${res.text}`).toBe(200);
    }
    const gz = await send('/api/v1/projects', { body: gzipSync('{"name":"gzipped"}'), headers: { 'content-encoding': 'gzip' } });
    expect(gz.status, gz.text).toBe(201);
  });

  it('the 1 MiB limit counts the decompressed bytes: a small gzip body that inflates past it is a 413', async () => {
    const bomb = gzipSync(`{"name":"big","description":"${' '.repeat(2 * 1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(10_000);
    const res = await send('/api/v1/projects', { body: bomb, headers: { 'content-encoding': 'gzip' } });
    expectError(res, 413, 'payload_too_large', 'request body is over the 1 MiB limit for JSON');
    expect((await send('/api/v1/me')).status).toBe(200);
  });

  it('another media type is a 415, and so is JSON declared in another charset', async () => {
    const latin = await send('/api/v1/projects', { body: '{"name":"latin"}', type: 'application/json; charset=iso-8859-1' });
    expectError(latin, 415, 'unsupported_media_type', 'request body must be UTF-8 JSON, not charset=iso-8859-1');
    expectError(await send('/api/v1/projects', { body: '{"name":"t"}', type: 'text/plain' }), 415, 'unsupported_media_type', 'request body must be application/json');
    const bare = await fetch(`${d.url}/api/v1/projects`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: new Uint8Array(Buffer.from('{"name":"t"}')) });
    expect(bare.status).toBe(415); // fetch adds no Content-Type to bytes
    expect(((await bare.json()) as { error: { message: string } }).error.message).toBe('request body must be application/json (no Content-Type was sent)');
  });

  it('a 415 names what is taken: Accept-Patch on a PATCH, Accept-Encoding for an unknown Content-Encoding', async () => {
    const merge = await send(`/api/v1/projects/${projectId}`, { method: 'PATCH', body: '{"description":"m"}', type: 'application/merge-patch+json' });
    expectError(merge, 415, 'unsupported_media_type');
    expect(merge.headers.get('accept-patch')).toBe('application/json');
    const coding = await send('/api/v1/projects', { body: '{"name":"z"}', headers: { 'content-encoding': 'compress' } });
    expectError(coding, 415, 'unsupported_media_type', 'unsupported Content-Encoding "compress": send gzip, deflate, br or none');
    expect(coding.headers.get('accept-encoding')).toBe('gzip, deflate, br');
  });

  it('a body that is not UTF-8 is a 400, never stored with replacement characters', async () => {
    const latin1 = Buffer.from('{"name":"caf\xe9"}', 'latin1');
    expectError(await send('/api/v1/projects', { body: latin1 }), 400, 'invalid_request', 'request body is not valid UTF-8 (JSON is sent in UTF-8)');
    const names = (await send('/api/v1/projects')).body.projects.map((p: { name: string }) => p.name);
    expect(names.some((n: string) => n.includes('\uFFFD'))).toBe(false);
    // The same name in UTF-8, with a byte order mark (RFC 8259 lets a parser ignore it), is fine.
    const utf8 = await send('/api/v1/projects', { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"café"}')]) });
    expect(utf8.status, utf8.text).toBe(201);
    expect(utf8.body.name).toBe('café');
  });

  it('malformed JSON is a 400 whose details carry the parser words', async () => {
    const invalid = await send('/api/v1/projects', { body: '{"name": ' });
    expectError(invalid, 400, 'invalid_request', 'request body is not valid JSON');
    expect(invalid.body.error.details).toEqual([{ path: 'body', message: expect.stringMatching(/JSON/) }]);
  });

  it('valid JSON that is not an object is a 400 saying what it is', async () => {
    const notObjects: [string, string][] = [
      ['null', 'null'],
      ['42', 'a number'],
      ['"name"', 'a string'],
      ['true', 'a boolean'],
      ['[{"name":"x"}]', 'an array'],
    ];
    for (const [body, what] of notObjects) expectError(await send('/api/v1/projects', { body }), 400, 'invalid_request', `request body must be a JSON object, not ${what}`);
  });

  it('a key given twice in one object is a 400 naming it, at any depth', async () => {
    // The last of two equal keys would win here, the first in some proxy or client library: refuse either reading.
    expectError(await send('/api/v1/projects', { body: '{"name":"one","name":"two"}' }), 400, 'invalid_request', 'body.name: is given more than once; send each key once');
    expectError(await send('/api/v1/projects', { body: '{"name":"one","\\u006eame":"two"}' }), 400, 'invalid_request', 'body.name: is given more than once; send each key once');
    const nested = await send('/api/v1/projects', { body: '{"name":"n","metadata":{"a":{"b":[1,{"c":1,"c":2}]}}}' });
    expectError(nested, 400, 'invalid_request', 'body.metadata.a.b[1].c: is given more than once; send each key once');
    // Equal keys in two different objects, and a "key" inside a string, are no repeat.
    const fine = await send('/api/v1/projects', { body: '{"name":"distinct","metadata":{"name":"x","t":"\\"name\\":1"}}' });
    expect(fine.status, fine.text).toBe(201);
  });

  it('a "__proto__" key is refused by name, not called invalid JSON', async () => {
    expectError(await send('/api/v1/projects', { body: '{"name":"p","metadata":{"__proto__":{"x":1}}}' }), 400, 'invalid_request', 'body.metadata: the key "__proto__" is not accepted');
  });

  it('a query parameter sent twice where one is taken is named as repeated', async () => {
    const res = await send('/api/v1/projects?limit=1&limit=2');
    expectError(res, 400, 'invalid_request', 'query.limit: is given 2 times; send it once');
    expectError(await send('/api/v1/projects?cursor=a&cursor=b&cursor=c'), 400, 'invalid_request', 'query.cursor: is given 3 times; send it once');
  });

  it('an answer a browser may keep (a thumbnail) varies on the credential and honours If-None-Match', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 90, g: 140, b: 200 } } }).png().toBuffer();
    const up = await uploadFiles(d, user.apiKey, [{ name: 'swatch.png', bytes: png }]);
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    const path = `/api/v1/documents/${up.body.documents[0].id}/thumbnail`;
    const first = await send(path);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, max-age=86400');
    expect(first.headers.get('vary')).toBe('Authorization');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"/);
    // node:http, as a browser revalidating its copy: fetch() adds `Cache-Control: no-cache` beside If-None-Match.
    const revalidate = (method: string, tag: string) =>
      new Promise<{ status: number; etag: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(d.url + path, { method, headers: { authorization: `Bearer ${user.apiKey}`, 'if-none-match': tag } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('latin1')));
          res.on('end', () => resolve({ status: res.statusCode!, etag: res.headers.etag, body }));
        });
        req.on('error', reject).end();
      });
    for (const method of ['GET', 'HEAD']) expect(await revalidate(method, etag), method).toEqual({ status: 304, etag, body: '' });
    expect((await revalidate('GET', '"other"')).status).toBe(200);
    // The JSON answers hold no ETag and are never stored, so they carry no Vary.
    expect((await send('/api/v1/projects')).headers.get('vary')).toBeNull();
  });

  it('HEAD on a real original and thumbnail: the GET headers, length included, and no bytes', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 10, g: 200, b: 60 } } }).png().toBuffer();
    const id = (await uploadFiles(d, user.apiKey, [{ name: 'head.png', bytes: png }])).body.documents[0].id;
    for (const path of [`/api/v1/documents/${id}/file`, `/api/v1/documents/${id}/thumbnail`]) {
      const get = await send(path);
      const head = await send(path, { method: 'HEAD' });
      expect([get.status, head.status], path).toEqual([200, 200]);
      expect(head.text).toBe('');
      for (const h of ['content-type', 'content-length', 'content-disposition', 'cache-control', 'etag', 'vary']) expect(head.headers.get(h), `${path} ${h}`).toBe(get.headers.get(h));
    }
  });

  it('every answer is JSON with a charset and no-store, the private ones and the errors alike', async () => {
    for (const path of ['/api/v1/me', '/api/v1/projects', `/api/v1/projects/${projectId}`, '/api/v1/keys', '/api/v1/health', '/api/v1/openapi.json']) {
      const res = await send(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
  });
});
