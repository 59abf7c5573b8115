import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Library } from './library.js';
import { registerDocumentResources } from './resources.js';
import { runTool } from './tool-result.js';
import { addDocumentTool } from './tools/add-document.js';
import { getDocumentTool } from './tools/get-document.js';
import { listDocumentsTool } from './tools/list-documents.js';
import { listProjectsTool } from './tools/list-projects.js';
import { searchTool } from './tools/search.js';
import type { ToolDefinition } from './tools/tool.js';

export const TOOLS: readonly ToolDefinition[] = [searchTool, getDocumentTool, listProjectsTool, listDocumentsTool, addDocumentTool];

const INSTRUCTIONS =
  "docsearch holds the user's own documents (PDF, Word, text), in projects. To answer from them: search, then read around " +
  'the best hits with get_document and cite the file name and page. list_projects and list_documents show what is there; ' +
  'add_document saves a note for later.';

export interface McpServerOptions {
  version: string;
  /** Called with an unexpected failure (a bug, a store down); the client only learns that the call failed. */
  report: (err: unknown) => void;
}

/**
 * The MCP server over one library, for one caller: the same tools and resources on both transports (the
 * daemon's `/mcp` builds one per request over its route handlers; `docsearch mcp` one per process over HTTP).
 */
export function createMcpServer(library: Library, opts: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'docsearch', title: 'docsearch', version: opts.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, tool.config, ((args: Record<string, unknown>) => runTool(() => tool.run(library, args), opts.report)) as never);
  }
  registerDocumentResources(server.server, library, opts.report);
  return server;
}
