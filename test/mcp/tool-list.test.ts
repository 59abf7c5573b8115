import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import type { Library } from '../../src/mcp/library.js';
import { createMcpServer, TOOLS } from '../../src/mcp/server.js';

async function list(server: McpServer): Promise<unknown> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

describe('tools/list', () => {
  it('answers what the SDK itself lists for the same tools, on every server built, from one kept answer', async () => {
    // The SDK's own handler, as createMcpServer registers the tools.
    const plain = new McpServer({ name: 'docsearch', version: '1' });
    for (const tool of TOOLS) plain.registerTool(tool.name, tool.config, (() => ({ content: [] })) as never);
    const expected = await list(plain);
    expect((expected as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));

    const library = {} as Library;
    const first = await list(createMcpServer(library, { version: '1', report: () => {} }));
    const second = await list(createMcpServer(library, { version: '1', report: () => {} }));
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
  });
});
