/**
 * MCP probed where the hostile /mcp suite does not reach: `docsearch mcp`'s own lines on stdio (a key given twice,
 * a line that is not a message, a batch, a line over the size limit, stdin ending with calls in flight), odd resource
 * URIs, tools named as Object's own properties, and a credential revoked mid-session. Each answer matches what /mcp answers, and nothing runs that a refusal
 * should have stopped.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from '../cli/cli-env.js';
import { callError, httpClient, stdioClient } from './mcp-client.js';

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

interface Answer {
  id: number | string | null;
  result?: any;
  error?: { code: number; message: string };
}

describe('MCP probed on stdio and /mcp', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  /** Writes `lines` to `docsearch mcp` after the handshake, then ends its stdin: every answer it wrote, by id. */
  async function stdio(lines: string[], token = alice.apiKey): Promise<{ answers: Answer[]; stderr: string; code: number | null }> {
    const res = await runCli(['mcp'], { env: cliEnv(d, { DOCSEARCH_TOKEN: token }), input: [INITIALIZE, INITIALIZED, ...lines].join('\n') + '\n' });
    const answers = res.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Answer);
    return { answers: answers.filter((a) => a.id !== 0), stderr: res.stderr, code: res.code };
  }

  const post = async (body: string) => {
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    return { status: res.status, body: (await res.json()) as Answer };
  };

  const filenames = async () => ((await api(d, '/api/v1/documents', { token: alice.apiKey })).body.documents as { filename: string }[]).map((x) => x.filename);

  it('refuses a key given twice on stdio as /mcp does (-32600 naming it), and saves nothing', async () => {
    const note = (id: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"add_document","arguments":{"text":"The lease runs five years.","filename":"one.txt","filename":"two.txt"}}}`;
    const twiceParams = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_projects","arguments":{}},"params":{"name":"add_document","arguments":{"text":"x","filename":"three.txt"}}}`;
    const escaped = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"lease","\\u0071uery":"rent"}}}`;
    const { answers } = await stdio([note(1), twiceParams, escaped]);
    expect(answers.find((a) => a.id === 1)?.error).toEqual({ code: -32600, message: 'invalid request: params.arguments.filename: is given more than once; send each key once' });
    expect(answers.find((a) => a.id === 2)?.error).toEqual({ code: -32600, message: 'invalid request: params: is given more than once; send each key once' });
    expect(answers.find((a) => a.id === 3)?.error).toEqual({ code: -32600, message: 'invalid request: params.arguments.query: is given more than once; send each key once' });
    // /mcp: the same refusal, the path rooted at the body as the REST API names it.
    const overHttp = await post(note(1));
    expect(overHttp.status).toBe(400);
    expect(overHttp.body.error).toEqual({ code: -32600, message: 'invalid request: body.params.arguments.filename: is given more than once; send each key once' });
    expect(await filenames()).toEqual([]);
  });

  it('answers every stdio line it cannot take with a JSON-RPC error, and goes on serving', async () => {
    const over = `{"jsonrpc":"2.0","id":40,"method":"ping","pad":"${'x'.repeat(5 * 1024 * 1024)}"}`;
    const { answers } = await stdio([
      'not json',
      '{"jsonrpc":"2.0","id":11,"method":',
      '{"jsonrpc":"2.0","id":12,"method":5}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
      '[{"jsonrpc":"2.0","id":13,"method":"ping"}]',
      '[]',
      '{"__proto__":{"method":"ping"},"jsonrpc":"2.0","id":14}',
      `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}}`,
      over,
      `{"jsonrpc":"2.0","id":"${'i'.repeat(10_000)}","method":"ping"}`,
      '{"jsonrpc":"2.0","id":16,"method":"nope"}',
      '{"jsonrpc":"2.0","id":17,"method":"ping"}',
    ]);
    const codes = answers.map((a) => [typeof a.id === 'string' ? `${a.id.length} chars` : a.id, a.error?.code ?? 'result']);
    expect(codes).toEqual(
      expect.arrayContaining([
        [null, -32700], // not JSON
        [null, -32700], // cut short
        [12, -32700], // not a JSON-RPC message, as the SDK answers it on /mcp
        [null, -32700], // an id that is an object
        [null, -32600], // a batch
        [null, -32600], // an empty batch
        [14, -32600], // __proto__
        [15, -32600], // nested too deep
        [null, -32600], // over 5 MiB
        ['10000 chars', 'result'],
        [16, -32601],
        [17, 'result'],
      ]),
    );
    expect(answers).toHaveLength(12);
    expect(answers.find((a) => a.error?.message.includes('5 MiB'))?.error?.message).toBe('invalid request: the message is larger than 5 MiB');
    expect(answers.find((a) => a.error?.message.includes('batch (a'))?.error?.message).toBe('invalid request: a batch (a JSON array) is not served on stdio; send each message on its own line');
  });

  it('answers the calls it read before the client closed stdin', async () => {
    const { answers, code } = await stdio([JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'list_projects', arguments: {} } })]);
    expect(code).toBe(0);
    expect(answers.find((a) => a.id === 21)?.result?.structuredContent?.projects?.map((p: { name: string }) => p.name)).toEqual(['default']);
  });

  it('refuses a resource URI with a broken %-escape as Invalid Params on both transports, not as a failure of the server', async () => {
    const stderr: string[] = [];
    const clients = [await httpClient(d, alice.apiKey), await stdioClient(d.url, alice.apiKey, stderr)];
    try {
      for (const client of clients) {
        for (const uri of ['docsearch://documents/%ZZ', 'docsearch://documents/%E0%A4%A']) {
          const err = await client.readResource({ uri }).then(() => null, (e: { code: number; message: string }) => e);
          expect(err?.code, uri).toBe(-32602);
          expect(err?.message).toContain(`unknown resource ${uri}: its id is not valid percent-encoding`);
        }
        // `..` and escaped slashes stay inside the id: no document, never another route.
        const dots = await client.readResource({ uri: 'docsearch://documents/..%2F..%2Fapi%2Fv1%2Fprojects' }).then(() => null, (e: { code: number }) => e);
        expect(dots?.code).toBe(-32002);
      }
      expect(stderr.join('')).not.toMatch(/URIError|\n\s+at /);
    } finally {
      for (const c of clients) await c.close();
    }
  });

  it("answers a tool named as one of Object's own (constructor, __proto__, toString) as not found, on both transports", async () => {
    const clients = [await httpClient(d, alice.apiKey), await stdioClient(d.url, alice.apiKey)];
    try {
      for (const client of clients) {
        for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope']) {
          expect(await callError(client, name, {}), name).toBe(`MCP error -32602: Tool ${name} not found`);
        }
      }
    } finally {
      for (const c of clients) await c.close();
    }
  });

  it('refuses every call once the key is revoked mid-session, on both transports, and never shows the key', async () => {
    const made = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'revoked mid-session' } });
    expect(made.status).toBe(201);
    const stderr: string[] = [];
    const [http, overStdio] = [await httpClient(d, made.body.key), await stdioClient(d.url, made.body.key, stderr)];
    try {
      expect((await overStdio.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
      expect((await api(d, `/api/v1/keys/${made.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      const refused = await callError(overStdio, 'list_projects', {});
      expect(refused).toContain('the credential is not valid, has expired or was revoked');
      await expect(http.callTool({ name: 'list_projects', arguments: {} })).rejects.toThrow();
      expect(refused + stderr.join('')).not.toContain(made.body.key);
    } finally {
      await http.close();
      await overStdio.close();
    }
  });
});
