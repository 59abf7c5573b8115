import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN, type Daemon } from '../helpers/daemon.js';

/** The official SDK's client on the daemon's /mcp with a bearer credential (an API key or a token for /mcp). */
export async function httpClient(d: Daemon | string, token: string): Promise<Client> {
  const url = typeof d === 'string' ? d : `${d.url}/mcp`;
  const client = new Client({ name: 'docsearch-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** The official SDK's client on `docsearch mcp` (the built binary on stdio), as an assistant starts it. */
export async function stdioClient(server: string, token: string, stderr: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DOCSEARCH_URL: server, DOCSEARCH_TOKEN: token },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const client = new Client({ name: 'docsearch-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** tools/call's structured answer, failing the test with the tool's own message when it reports an error. */
export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.content)}`);
  return res.structuredContent;
}

/** tools/call that is expected to fail: the tool error's text. */
export async function callError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const res = await client.callTool({ name, arguments: args });
  if (!res.isError) throw new Error(`${name} succeeded: ${JSON.stringify(res.structuredContent)}`);
  return (res.content as { text: string }[]).map((c) => c.text).join('\n');
}
