/**
 * The daemon answers tools/list from one answer kept per process (src/mcp/server.ts): that answer must be exactly
 * what the SDK's own handler gives for the same tools. Both are asked over the Streamable HTTP transport: the
 * daemon's /mcp over real HTTP, the SDK's plain McpServer through the same transport class in-process.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { z } from 'zod';
import { TOOLS } from '../../src/mcp/server.js';

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

async function sdkAnswer(): Promise<unknown> {
  const plain = new McpServer({ name: 'docsearch', version: '1' });
  for (const tool of TOOLS) plain.registerTool(tool.name, { ...tool.config, inputSchema: z.strictObject(tool.config.inputSchema) }, (() => ({ content: [] })) as never);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await plain.connect(transport);
  try {
    const res = await transport.handleRequest(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: HEADERS, body: LIST }));
    return ((await res.json()) as { result: unknown }).result;
  } finally {
    await plain.close();
  }
}

describe('tools/list', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it("answers what the SDK's own handler lists for the same tools, request after request", async () => {
    const expected = await sdkAnswer();
    expect((expected as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${user.apiKey}` }, body: LIST });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: unknown }).result).toEqual(expected);
    }
  });
});
