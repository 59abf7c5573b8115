import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

/**
 * Requests a hostile client can send must each get a clear 4xx answer in the error model, lose
 * nothing and leave no temp files — and never take the daemon down (issue #12 items 1, 8, 9).
 */

const BOUNDARY = 'XyZ';

function part(headers: string, body: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from('\r\n')]);
}
const closing = Buffer.from(`--${BOUNDARY}--\r\n`);
const fileHeaders = (filename: string) => `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain`;

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request over its own connection with exactly the headers and bytes given. */
function rawPost(d: Daemon, path: string, headers: Record<string, string>, body: Buffer, method = 'POST'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(d.url + path, { method, headers: { connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* keep the text */
        }
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('hostile requests', () => {
  let d: Daemon;
  let user: TestUser;
  // A stalled upload is ended after --upload-idle-timeout: 5 s here rather than the default 30 s, the same answer sooner.
  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
    },
    { args: ['--upload-idle-timeout', '5'] },
  );

  const auth = () => ({ authorization: `Bearer ${user.apiKey}` });
  const multipart = () => ({ ...auth(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
  const tempFiles = () => readdirSync(join(d.dataDir, 'files', 'tmp')).length;
  const alive = async () => expect((await api(d, '/api/v1/health')).status).toBe(200);

  it('a multipart body without its closing boundary is a 400, and the daemon lives on', async () => {
    const body = part(fileHeaders('t.txt'), 'hello');
    const res = await rawPost(d, '/api/v1/upload', multipart(), body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/^malformed multipart body: unexpected end of/i);
    await alive();
    expect(tempFiles()).toBe(0);
    // Cut inside the part headers, too.
    const cut = await rawPost(d, '/api/v1/upload', multipart(), Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; na`));
    expect(cut.status).toBe(400);
    await alive();
  });

  it('a client that disconnects mid-upload leaves no temp file and no broken daemon', async () => {
    const head = part(fileHeaders('big.txt'), 'x'.repeat(200_000));
    await new Promise<void>((resolve, reject) => {
      const url = new URL(d.url);
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /api/v1/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.apiKey}\r\n` +
            `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n`,
        );
        sock.write(head, () => setTimeout(() => sock.destroy(), 300));
      });
      sock.on('close', () => resolve());
      sock.on('error', reject);
    });
    await alive();
    await expect.poll(tempFiles, { timeout: 5000 }).toBe(0);
  });

  it('a declared Content-Length above the limit is refused at once without reading the body', async () => {
    const url = new URL(d.url);
    const limit = 50 * 1024 * 1024;
    const answer = await new Promise<{ head: string; sentAfterAnswer: boolean }>((resolve, reject) => {
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /api/v1/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.apiKey}\r\n` +
            `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${limit * 50}\r\n\r\n`,
        );
        // Send no body at all: the answer must come anyway.
      });
      let head = '';
      sock.on('data', (c: Buffer) => {
        head += c.toString();
        if (head.includes('\r\n\r\n') && /\r\n\r\n[\s\S]*\}/.test(head)) {
          resolve({ head, sentAfterAnswer: false });
          sock.destroy();
        }
      });
      sock.setTimeout(5000, () => reject(new Error(`no answer within 5 s; got: ${head}`)));
      sock.on('error', reject);
    });
    expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.head).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer.head).toContain('"code":"payload_too_large"');
    // docs/operations.md (a proxy's body limit left to the daemon): the answer says the daemon's limits.
    expect(answer.head).toContain('larger than an upload can be (at most 20 files of 50 MiB each)');
    await alive();
  });

  it('a chunked body is answered 413 as soon as a file passes the limit, before the body ends', async () => {
    const big = Buffer.alloc(51 * 1024 * 1024, 'a');
    const res = await new Promise<RawResponse>((resolve, reject) => {
      const req = httpRequest(d.url + '/api/v1/upload', { method: 'POST', headers: { ...multipart(), 'transfer-encoding': 'chunked' } }, (r) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => {
          req.destroy();
          resolve({ status: r.statusCode!, headers: r.headers, body: JSON.parse(text) });
        });
      });
      req.on('error', () => undefined); // the server closes the connection once it has answered
      setTimeout(() => reject(new Error('no answer before the body ended')), 10_000).unref();
      req.write(Buffer.from(`--${BOUNDARY}\r\n${fileHeaders('big.txt')}\r\n\r\n`));
      req.write(big); // the closing boundary is never sent: the answer must not wait for it
    });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.body.error.code).toBe('payload_too_large');
    await expect.poll(tempFiles, { timeout: 5000 }).toBe(0);
  });

  it('Expect: 100-continue: no go-ahead for a body no upload can fit, a go-ahead for one that can', async () => {
    const url = new URL(d.url);
    const exchange = (length: number) =>
      new Promise<string>((resolve, reject) => {
        const sock = connect(Number(url.port), url.hostname, () => {
          sock.write(
            `POST /api/v1/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.apiKey}\r\n` +
              `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
          );
        });
        let got = '';
        sock.on('data', (c: Buffer) => {
          got += c.toString();
          if (/^HTTP\/1\.1 \d{3} /.test(got)) {
            sock.destroy();
            resolve(got);
          }
        });
        sock.setTimeout(5000, () => reject(new Error(`no answer; got: ${got}`)));
        sock.on('error', reject);
      });
    expect(await exchange(2 ** 40)).toMatch(/^HTTP\/1\.1 413 /);
    const uploadsAnswered = () => d.stdout().split('\n').filter((l) => l.includes('"path":"/api/v1/upload","status":')).length;
    const before = uploadsAnswered();
    expect(await exchange(1000)).toMatch(/^HTTP\/1\.1 100 Continue/);
    // The client left after the go-ahead: its handler ends (logged as answered) instead of waiting for good for a
    // body, which held the daemon's shutdown for a minute.
    await expect.poll(uploadsAnswered, { timeout: 5000 }).toBe(before + 1);
    await alive();
  });

  it('an upload that stalls is ended with a 400 instead of holding the socket for the request timeout', async () => {
    const url = new URL(d.url);
    const head = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /api/v1/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${user.apiKey}\r\n` +
            `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 100000\r\n\r\n--${BOUNDARY}\r\n${fileHeaders('slow.txt')}\r\n\r\nstarted`,
        );
      });
      let got = '';
      sock.on('data', (c: Buffer) => (got += c.toString()));
      sock.on('close', () => resolve(got));
      sock.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    // The stall's own answer: the request timeout (15 min) would answer 408, without these words.
    expect(head).toContain('the upload stalled: no data arrived for 5 s');
    await expect.poll(tempFiles, { timeout: 5000 }).toBe(0);
  }, 60_000);

  it('5,000-deep metadata JSON is a 400, not a stack overflow', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const body = Buffer.concat([part('Content-Disposition: form-data; name="metadata"', `{"a":${deep}}`), part(fileHeaders('t.txt'), 'hello there'), closing]);
    const res = await rawPost(d, '/api/v1/upload', multipart(), body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^metadata: nested deeper than \d+ levels$/);
    expect(tempFiles()).toBe(0);
    // The same nesting in a JSON body.
    const json = await api(d, '/api/v1/projects', { token: user.apiKey, body: `{"name":"x","description":${deep}}` });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe('invalid_request');
  });

  it('a bogus Content-Encoding is a 4xx JSON error', async () => {
    const json = await rawPost(d, '/api/v1/projects', { ...auth(), 'content-type': 'application/json', 'content-encoding': 'deflate' }, Buffer.from('{"name":"x"}'));
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe('invalid_request');
    expect(json.body.error.message).toBe('the request body could not be decoded as deflate');
    const unknown = await rawPost(d, '/api/v1/projects', { ...auth(), 'content-type': 'application/json', 'content-encoding': 'br2' }, Buffer.from('{"name":"x"}'));
    expect(unknown.status).toBe(415);
    expect(unknown.body.error.code).toBe('unsupported_media_type');
    // A real deflate body (RFC 9110: the zlib format) still works for JSON routes.
    const real = await rawPost(d, '/api/v1/projects', { ...auth(), 'content-type': 'application/json', 'content-encoding': 'deflate' }, deflateSync('{"name":"deflated"}'));
    expect(real.status, JSON.stringify(real.body)).toBe(201);
    expect(real.body.name).toBe('deflated');
    const upload = await rawPost(d, '/api/v1/upload', { ...multipart(), 'content-encoding': 'deflate' }, Buffer.concat([part(fileHeaders('t.txt'), 'hi'), closing]));
    expect(upload.status).toBe(415);
    expect(upload.body.error.message).toBe('uploads must not be sent with a Content-Encoding (got deflate)');
    expect(tempFiles()).toBe(0);
  });

  it('TRACE and unknown methods get a JSON error body', async () => {
    for (const [method, path] of [
      ['TRACE', '/api/v1/projects'],
      ['TRACE', '/'],
      ['PROPFIND', '/api/v1/projects'],
    ] as const) {
      const res = await rawPost(d, path, { accept: 'application/json' }, Buffer.alloc(0), method);
      expect([405, 501], `${method} ${path}`).toContain(res.status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.error.code).toMatch(/^(method_not_allowed|not_implemented)$/);
      expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
    }
  });

  it('a long filename is cut on a code point boundary, never inside a surrogate pair', async () => {
    const name = 'ab' + '\u{1F600}'.repeat(300) + '.txt'; // a cut at an odd UTF-16 unit would end inside an emoji
    const body = Buffer.concat([part(fileHeaders(name), 'surrogate test body'), closing]);
    const res = await rawPost(d, '/api/v1/upload', multipart(), body);
    expect(res.status).toBe(202);
    const stored: string = res.body.documents[0].filename;
    expect([...stored]).toHaveLength(255); // characters, as a rename counts them (core/name-limits.ts)
    expect(stored).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect([...stored].every((c) => c === 'a' || c === 'b' || c === '\u{1F600}' || '.txt'.includes(c))).toBe(true);
  });

  it('filename="" is a clear 400 that does not contradict itself', async () => {
    const body = Buffer.concat([part(fileHeaders(''), 'no name'), closing]);
    const res = await rawPost(d, '/api/v1/upload', multipart(), body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('a "file" part has an empty or missing filename: send filename="<name>" in its Content-Disposition');
    expect(tempFiles()).toBe(0);
  });
});
