/**
 * Requests Node's HTTP parser refuses before any route sees them (an over-long URL, a malformed request line) are
 * answered in the API's error shape (docs/api.md#errors), not with Node's bare status line: a client learns why. A
 * request head as long as docs/operations.md says the daemon takes is served.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, REPO, removeDir, startDaemon } from '../helpers/daemon.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../src/server/http-server.js';

/**
 * Sends raw bytes and reads the whole answer (the daemon closes the connection after such an error, or after a request
 * saying `Connection: close`: a request it serves is not half-closed, since Node's server drops a half-closed one).
 */
function raw(url: string, bytes: string, opts: { halfClose?: boolean } = {}): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => (opts.halfClose === false ? socket.write(bytes) : socket.end(bytes)));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = answer.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]), headers: answer.slice(0, split), body: answer.slice(split + 4) });
    });
  });
}

describe('requests the HTTP parser refuses', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  it('a URL over the limit of request line and headers: 431 with a JSON error saying why', async () => {
    const res = await raw(d.url, `GET /api/v1/documents?q=${'a'.repeat(MAX_REQUEST_HEAD_BYTES)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(res.body);
    expect(body.error.code).toBe('request_header_fields_too_large');
    expect(body.error.message).toContain(`over ${MAX_REQUEST_HEAD_BYTES.toLocaleString('en')} bytes`);
    expect(body.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a request line and headers of as many bytes as docs/operations.md says the daemon takes are served', async () => {
    // Operators size a proxy's header buffers from the number the docs give (Behind a reverse proxy).
    const said = `The daemon takes up to ${MAX_REQUEST_HEAD_BYTES.toLocaleString('en')} bytes`;
    expect(readFileSync(`${REPO}/docs/operations.md`, 'utf8').replace(/\s+/g, ' ')).toContain(said);
    const [start, end] = ['GET /api/v1/health?pad=', ' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'];
    const head = start + 'a'.repeat(MAX_REQUEST_HEAD_BYTES - start.length - end.length) + end;
    expect(head).toHaveLength(MAX_REQUEST_HEAD_BYTES);
    expect((await raw(d.url, head, { halfClose: false })).status).toBe(200);
  });

  it('a malformed request line: 400 invalid_request, and the daemon serves on', async () => {
    const res = await raw(d.url, 'GET /api/v1/health HTTP/1.1 junk\r\nHost: x\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'invalid_request', message: 'the request is not well-formed HTTP/1.1' });
    expect((await fetch(`${d.url}/api/v1/health`)).status).toBe(200);
  });
});
