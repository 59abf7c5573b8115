import type { Command } from 'commander';
import { VERSION } from '../../core/version.js';
import { ME } from '../api-types.js';
import type { Context } from '../context.js';
import { defineCommand } from './shared/command.js';

/**
 * `docsearch mcp`: an MCP server on stdin/stdout for clients that start a command (Claude Desktop, Claude Code,
 * Cursor…), over any docsearch server's REST API with the stored login, --token or DOCSEARCH_TOKEN. Standard
 * output carries the protocol alone; anything for people goes to standard error.
 */
export function build(ctx: Context): Command {
  return defineCommand('mcp', {
    summary: 'run an MCP server on stdio for AI assistants (Claude, Cursor, VS Code…)',
    description:
      'Serve the library to an AI assistant over the Model Context Protocol on standard input and output: tools to search, read ' +
      'and list documents and to save notes, as the logged-in user (or DOCSEARCH_TOKEN / --token). The assistant starts this ' +
      'command itself; see docs/mcp.md for each client\'s configuration. Remote clients can use the server\'s /mcp endpoint instead.',
    examples: ['docsearch mcp', 'claude mcp add docsearch -- docsearch mcp', 'DOCSEARCH_TOKEN=dsk_… docsearch mcp --server https://docs.example.com'],
  }).action(async () => {
    // Loaded here, not at start: every other command would pay for the SDK's import.
    const [{ CheckedStdioTransport }, { createMcpServer }, { HttpLibrary }] = await Promise.all([
      import('../mcp/stdio-transport.js'),
      import('../../mcp/server.js'),
      import('../mcp/http-library.js'),
    ]);
    const { url } = ctx.server();
    // The server and the credential are tried before serving: an unreachable server or an unusable credential
    // ends the command with the reason on standard error (the client's MCP log), so the client shows the server
    // as failed at once, not as connected with every tool failing. The credential's scopes decide the tools.
    const { scopes } = await ctx.http().get('/api/v1/me', { shape: ME });
    const report = (err: unknown) => ctx.io.stderr.write(`docsearch mcp: ${(err as Error)?.stack ?? String(err)}\n`);
    const server = createMcpServer(new HttpLibrary(ctx.http()), { version: VERSION, scopes, report });
    const transport = new CheckedStdioTransport(ctx.io.stdin, ctx.io.stdout);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await server.connect(transport);
    ctx.io.stderr.write(`docsearch mcp: serving ${url} on stdio (${scopes.join(', ')})\n`);
    // The client ends the session by closing our stdin (MCP stdio transport), once what it asked is answered; a signal ends it too.
    await closed;
  });
}
