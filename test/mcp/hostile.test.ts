import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { rng } from '../helpers/rng.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/**
 * /mcp against hostile input, over real HTTP to the built daemon with an API key: malformed JSON-RPC, oversized
 * bodies, foreign origins, wrong methods and media types. Every answer must be a JSON-RPC error or a tool error,
 * never a 5xx or a dropped connection, and the daemon must still search correctly afterwards.
 */

const ACCEPT = 'application/json, text/event-stream';
const NOTE = 'The axolotl regenerates its limbs, spinal cord and parts of its heart after injury.';

let d: Daemon;
let key: string;
let documentId: string;

daemonForSuite(async (daemon) => {
  d = daemon;
  key = (await addUser(d)).apiKey;
  const up = await uploadFiles(d, key, [{ name: 'axolotl.txt', bytes: Buffer.from(NOTE) }], { query: '?wait=true' });
  expect(up.status).toBe(200);
  documentId = up.body.documents[0].id;
  expect(up.body.documents[0].status).toBe('ready');
});

/**
 * What a hostile body must get: `http` a 4xx refusal with a JSON-RPC error object (the envelope itself is bad),
 * `rpc` a JSON-RPC error answering the request's id (a well-formed request the protocol refuses), `tool` a tool
 * result with isError (a tools/call the tool refuses).
 */
type Expect = 'http' | 'rpc' | 'tool';
interface Hostile {
  kind: string;
  body: Buffer;
  expect: Expect;
}

const req = (o: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, ...o });
const call = (name: string, args: unknown) => req({ method: 'tools/call', params: { name, arguments: args } });

function generate(n: number): Hostile[] {
  const rand = rng(20261126);
  const int = (max: number) => Math.floor(rand() * max);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const valid = () => JSON.stringify(pick([req({ method: 'tools/list' }), call('search', { query: 'limb regeneration' }), req({ method: 'ping' })]));
  const hugeInt = () => pick(['123456789012345678901234567890', '9'.repeat(400), '-9007199254740993', '1e309', '18446744073709551616']);
  const kinds: (() => Omit<Hostile, 'kind'> & { kind?: string })[] = [
    // truncated JSON: a valid request cut anywhere before its end
    () => {
      const s = valid();
      return { body: Buffer.from(s.slice(0, int(s.length - 1))), expect: 'http' };
    },
    () => ({ body: json(req({ jsonrpc: pick(['1.0', '2', 2, null, '', '2.0 ', ['2.0']]), method: 'tools/list' })), expect: 'http' }),
    () => ({ body: json(pick([{ jsonrpc: '2.0', id: int(1000) }, { jsonrpc: '2.0', id: 1, params: {} }, { jsonrpc: '2.0', id: 'x', method: null }])), expect: 'http' }),
    () => ({ body: json(req({ method: pick([5, true, {}, ['tools/list'], 1.5, -1]) })), expect: 'http' }),
    () => ({ body: json(req({ method: pick(['tools/list', 'tools/call', 'ping']), params: pick(['x', '', 'tools/list', 7, true]) })), expect: 'http' }),
    () => ({ body: json({ jsonrpc: '2.0', id: pick([{}, { a: 1 }, [], [1], true, 1.5]), method: 'tools/list' }), expect: 'http' }),
    () => ({ body: Buffer.from(`{"jsonrpc":"2.0","id":${hugeInt()},"method":"tools/list"}`), expect: 'http' }),
    // a huge integer where the tool expects a small one: the tool's own validation refuses it
    () => ({ body: Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","limit":${hugeInt()}}}}`), expect: 'tool' }),
    () => {
      const depth = pick([33, 100, 5000]);
      const [open, close] = pick([['[', ']'], ['{"a":', '}']] as const);
      return { kind: `nesting ${depth}`, body: Buffer.from(open.repeat(depth) + '1' + close.repeat(depth)), expect: 'http' };
    },
    () => {
      const depth = 5000;
      const args = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      return { kind: 'nesting 5000 in arguments', body: Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":${args}}}`), expect: 'http' };
    },
    // invalid UTF-8 where a JSON-RPC member name or a delimiter belongs
    () => {
      const bad = Buffer.from(pick([[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]));
      const s = valid();
      // a delimiter, not a character inside a string (there the bytes would only become U+FFFD in a valid request)
      const delimiters = [...s].flatMap((c, i) => ('{}[]:,"'.includes(c) ? [i] : []));
      const at = pick(delimiters);
      return { body: Buffer.concat([Buffer.from(s.slice(0, at)), bad, Buffer.from(s.slice(at + 1))]), expect: 'http' };
    },
    () => ({ body: Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/'), Buffer.from([0xff, 0xfe]), Buffer.from('list"}')]), expect: 'rpc' }),
    () => ({ body: Buffer.from(pick(['[]', ' [ ] ', '[1]', '[1,2,3]', '[null]', '["tools/list"]', '[[]]', '[{}]', '[{"jsonrpc":"2.0","id":1,"method":5}]'])), expect: 'http' }),
    // random bytes, and random printable noise
    () => ({ body: Buffer.from(Array.from({ length: 1 + int(2048) }, () => int(256))), expect: 'http' }),
    () => ({ body: Buffer.from(Array.from({ length: 1 + int(200) }, () => String.fromCharCode(32 + int(95))).join('')), expect: 'http' }),
    () => ({ body: Buffer.from(pick(['', ' ', 'null', 'true', '0', '"tools/list"', '{}', '{"jsonrpc":"2.0"}'])), expect: 'http' }),
    () => ({ body: json(req({ method: pick(['tools/nope', 'initialise', 'TOOLS/LIST', 'resources/write', '', 'rpc.discover']) })), expect: 'rpc' }),
    () => ({ body: json(req({ method: 'tools/call', params: pick([{}, { name: 5 }, { name: 'search', arguments: 'x' }, { name: 'search', arguments: [1] }, { arguments: {} }]) })), expect: 'rpc' }),
    () => ({ body: json(req({ method: 'resources/read', params: pick([{}, { uri: 5 }, { uri: 'docsearch://nope' }, { uri: 'file:///etc/passwd' }, { uri: 'docsearch://documents/' + 'x'.repeat(40) }]) })), expect: 'rpc' }),
    () => ({ body: json(call(pick(['nope', 'Search', 'search ', '', 'x'.repeat(5000), '__proto__', 'constructor']), { query: 'x' })), expect: 'tool' }),
    () => ({
      body: json(
        call(
          'search',
          pick([
            {},
            { query: 5 },
            { query: '' },
            { query: '   ' },
            { query: 'x'.repeat(2001) },
            { query: 'x', limit: 0 },
            { query: 'x', limit: 51 },
            { query: 'x', limit: 1.5 },
            { query: 'x', limit: '10' },
            { query: 'x', mode: 'fuzzy' },
            { query: 'x', group: 'page' },
            { query: 'x', cursor: '' },
            { query: 'x', cursor: 'not-a-cursor' },
            { query: 'x', project_id: '' },
            { query: ['x'] },
            { query: { $ne: 1 } },
          ]),
        ),
      ),
      expect: 'tool',
    }),
    () => ({
      body: json(
        pick([
          call('get_document', { document_id: 'x'.repeat(int(40) + 1) }),
          call('get_document', {}),
          call('get_document', { document_id: 7 }),
          call('list_documents', { limit: -1 }),
          call('list_projects', { limit: 'all' }),
          call('list_projects', { cursor: 'zzz' }),
          call('add_document', {}),
          call('add_document', { text: '', filename: 'a.txt' }),
          call('add_document', { text: 'x', filename: '../../etc/passwd', project_id: 'nope' }),
        ]),
      ),
      expect: 'tool',
    }),
  ];
  return Array.from({ length: n }, (_, i) => {
    const k = i % kinds.length;
    const h = kinds[k]!();
    return { kind: h.kind ?? `generator ${k}`, body: h.body, expect: h.expect };
  });
}

const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: ACCEPT, ...extra });

async function post(body: Buffer | string, extra: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: headers(extra), body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

function expectRpcError(body: any): void {
  expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.any(String) } });
  expect(Number.isInteger(body.error.code)).toBe(true);
}

interface Streamed {
  /** The answer's status line and headers, and its body as far as it came. */
  head: string;
  status: number;
  body: string;
  /** Body bytes written before the status line came back. */
  sentBeforeAnswer: number;
  answerMs: number;
  /** From the answer until the daemon ended the connection (Infinity: still open when we gave up). */
  closedAfterMs: number;
}

/**
 * Writes a POST /mcp on a raw socket and keeps streaming its body (chunked, or under a declared length) until the
 * answer arrives, ignoring write errors: what the daemon reads before it answers, and whether it then ends the
 * connection rather than leave it open without reading.
 */
function streamUntilAnswered(opts: { declaredLength?: number; limitBytes: number }): Promise<Streamed> {
  const { port } = new URL(d.url);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sock = net.connect(Number(port), '127.0.0.1');
    const chunked = opts.declaredLength === undefined;
    let sent = 0;
    let got = '';
    let answered: { at: number; sent: number } | undefined;
    const finish = (closedAt: number) => {
      clearTimeout(timer);
      sock.destroy();
      const [head = '', body = ''] = got.split('\r\n\r\n', 2);
      resolve({ head, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: chunked || /transfer-encoding: chunked/i.test(head) ? body.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n$/, '') : body, sentBeforeAnswer: answered?.sent ?? sent, answerMs: (answered?.at ?? NaN) - t0, closedAfterMs: closedAt - (answered?.at ?? t0) });
    };
    // Far past the 5 s a connection whose body was left unread stays open (http-server.ts): only a daemon that holds it
    // open meets it (the keep-alive timeout of an idle one is 65 s).
    const timer = setTimeout(() => finish(Number.POSITIVE_INFINITY), 45_000);
    sock.on('data', (data: Buffer) => {
      got += data.toString('latin1');
      if (!answered && /^HTTP\/1\.1 \d{3}/.test(got)) answered = { at: performance.now(), sent };
    });
    sock.on('close', () => finish(performance.now()));
    sock.on('error', () => {});
    const head = [
      'POST /mcp HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${key}`,
      'Content-Type: application/json',
      `Accept: ${ACCEPT}`,
      chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${opts.declaredLength}`,
    ];
    sock.write(head.join('\r\n') + '\r\n\r\n');
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    const pump = () => {
      while (!answered && !sock.destroyed && sent < opts.limitBytes) {
        sent += piece.length;
        if (!sock.write(frame)) return void sock.once('drain', pump);
      }
    };
    pump();
  });
}

describe('/mcp under hostile input', () => {
  it('answers 1,000 malformed JSON-RPC bodies with JSON-RPC or tool errors, never a 5xx or a dropped connection', async () => {
    const bodies = generate(1000);
    const outcomes = new Map<string, number>();
    const wrong: string[] = [];
    let next = 0;
    // Four clients at once, each on keep-alive connections.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < bodies.length) {
          const h = bodies[next++]!;
          const res = await post(h.body);
          const where = `${h.kind} (${h.body.toString('latin1').slice(0, 120)}) → ${res.status} ${res.text.slice(0, 200)}`;
          const body = res.body;
          const rpcError = body?.jsonrpc === '2.0' && Number.isInteger(body.error?.code) && typeof body.error?.message === 'string';
          const ok =
            res.status < 500 &&
            (h.expect === 'http'
              ? res.status >= 400 && rpcError
              : h.expect === 'rpc'
                ? res.status === 200 && rpcError && body.id === 1
                : res.status === 200 && body?.jsonrpc === '2.0' && body.id === 1 && body.result?.isError === true && typeof body.result.content?.[0]?.text === 'string');
          if (!ok) wrong.push(`expected ${h.expect}: ${where}`);
          const key = `${h.expect} ${res.status}`;
          outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        }
      }),
    );
    expect(wrong).toEqual([]);
    // Every kind of answer was exercised, not only the first.
    expect([...outcomes.keys()].sort()).toEqual(expect.arrayContaining(['http 400', 'rpc 200', 'tool 200']));
  });

  it('refuses an empty batch with Invalid Request (JSON-RPC 2.0 §6), not an empty 202', async () => {
    for (const body of ['[]', ' [ ]\n']) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expectRpcError(res.body);
      expect(res.body.error.code).toBe(-32600);
    }
  });

  it('refuses a body whose Content-Length passes the limit with 413 before reading it', async () => {
    const res = await streamUntilAnswered({ declaredLength: 512 * 1024 * 1024, limitBytes: 512 * 1024 * 1024 });
    expect(res.status, res.head).toBe(413);
    expectRpcError(JSON.parse(res.body));
    // Answered on the header: what arrived first is at most what the sockets buffer, nowhere near the 512 MiB declared.
    expect(res.sentBeforeAnswer).toBeLessThan(64 * 1024 * 1024);
    expect(res.answerMs).toBeGreaterThan(0); // answered while the connection was open
    // The daemon does not hold the connection open for the rest: it ends it after 5 s of silence. (Not at once:
    // closing a socket with unread bytes resets it, which can lose the 413 on its way.)
    expect(res.closedAfterMs).toBeLessThan(Number.POSITIVE_INFINITY);
  });

  it('refuses an endless chunked body with 413 once it passes the limit, without reading the rest', async () => {
    const res = await streamUntilAnswered({ limitBytes: 512 * 1024 * 1024 });
    expect(res.status, res.head).toBe(413);
    expectRpcError(JSON.parse(res.body));
    // The limit is 5 MiB: the answer comes once about that much arrived (plus what the sockets buffer), not at the end.
    expect(res.sentBeforeAnswer).toBeLessThan(64 * 1024 * 1024);
    expect(res.answerMs).toBeGreaterThan(0); // answered while the connection was open
    // The daemon does not hold the connection open for the rest: it ends it after 5 s of silence. (Not at once:
    // closing a socket with unread bytes resets it, which can lose the 413 on its way.)
    expect(res.closedAfterMs).toBeLessThan(Number.POSITIVE_INFINITY);
  });

  it('refuses a foreign Origin with 403 and serves the public URL\'s own origin and none', async () => {
    const list = JSON.stringify(req({ method: 'tools/list' }));
    for (const origin of ['http://evil.example', 'null', `${d.url}.evil.example`, d.url.replace('127.0.0.1', 'localhost')]) {
      const res = await post(list, { origin });
      expect(res.status, origin).toBe(403);
      expectRpcError(res.body);
    }
    const own = await post(list, { origin: new URL(d.url).origin });
    expect(own.status).toBe(200);
    expect(own.body.result.tools.map((t: { name: string }) => t.name)).toContain('search');
    const none = await post(list);
    expect(none.status).toBe(200);
    expect(none.body.result.tools.map((t: { name: string }) => t.name)).toContain('search');
  });

  it('answers GET, DELETE and PUT with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const res = await fetch(`${d.url}/mcp`, { method, headers: headers(), body: method === 'PUT' ? '{}' : undefined });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('POST');
      expectRpcError(await res.json());
    }
  });

  it('refuses a body that is not application/json with 415', async () => {
    const list = JSON.stringify(req({ method: 'tools/list' }));
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      const res = await post(list, { 'content-type': type });
      expect(res.status, type).toBe(415);
      expectRpcError(res.body);
    }
    const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${key}`, accept: ACCEPT }, body: Buffer.from(list) });
    expect(res.status).toBe(415);
  });

  it('answers a POST whose Accept lacks application/json or text/event-stream with 406, as the SDK does', async () => {
    const list = JSON.stringify(req({ method: 'tools/list' }));
    for (const accept of ['', 'application/json', 'text/event-stream', 'text/html']) {
      const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: list });
      expect(res.status, accept).toBe(406);
      expectRpcError(await res.json());
    }
    expect((await post(list, { accept: '*/*, application/json, text/event-stream' })).status).toBe(200);
  });

  it('is still up afterwards and answers a search through an MCP client as the REST API does', async () => {
    expect((await api(d, '/api/v1/health')).status).toBe(200);
    const client = new Client({ name: 'hostile-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = await client.callTool({ name: 'search', arguments: { query: 'which animal regrows its limbs', limit: 5 } });
      expect(result.isError).toBeFalsy();
      const out = result.structuredContent as { results: { document_id: string; chunk_id: string; text: string }[] };
      expect(out.results[0]).toMatchObject({ document_id: documentId, text: NOTE });
      const rest = await api(d, '/api/v1/search', { token: key, body: { query: 'which animal regrows its limbs', limit: 5 } });
      expect(rest.status).toBe(200);
      expect(out.results.map((r) => r.chunk_id)).toEqual(rest.body.results.map((r: { chunk_id: string }) => r.chunk_id));
    } finally {
      await client.close();
    }
  });
});
