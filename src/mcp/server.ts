import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type JSONRPCMessage, ListToolsRequestSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { Library } from './library.js';
import { cleanParamErrors } from './protocol-errors.js';
import { registerDocumentResources } from './resources.js';
import { runTool, toolError } from './tool-result.js';
import { addDocumentTool } from './tools/add-document.js';
import { getDocumentTool } from './tools/get-document.js';
import { getDocumentsTool } from './tools/get-documents.js';
import { listDocumentsTool } from './tools/list-documents.js';
import { listProjectsTool } from './tools/list-projects.js';
import { searchTool } from './tools/search.js';
import type { ToolDefinition } from './tools/tool.js';

export const TOOLS: readonly ToolDefinition[] = [searchTool, getDocumentTool, getDocumentsTool, listProjectsTool, listDocumentsTool, addDocumentTool];

const INSTRUCTIONS =
  "docsearch holds the user's own documents (PDF, Word and OpenDocument files, slides, spreadsheets, e-books, web pages, e-mails, " +
  'Markdown and text, scans read by OCR), in projects. To answer from them: search, then read around the best hits with ' +
  'get_document and cite the file name and page. list_projects and list_documents show what is there; add_document saves a note for later.';

export interface McpServerOptions {
  version: string;
  /** The caller's scopes: only the tools they allow are listed and run; another is refused naming the scope. */
  scopes: readonly string[];
  /** Called with an unexpected failure (a bug, a store down); the client only learns that the call failed. */
  report: (err: unknown) => void;
}

/** The tools a credential with `scopes` may call. */
export const toolsFor = (scopes: readonly string[]): ToolDefinition[] => TOOLS.filter((t) => scopes.includes(t.scope));

/**
 * A tool's config for the SDK: its arguments as a strict object, so an argument it does not name is refused, not
 * ignored. Made once per tool: /mcp registers every tool on each request's server.
 */
const sdkConfigs = new Map(TOOLS.map((tool) => [tool, { ...tool.config, inputSchema: z.strictObject(tool.config.inputSchema) }]));
const sdkConfig = (tool: ToolDefinition) => sdkConfigs.get(tool)!;

/**
 * The MCP server over one library, for one caller: the same tools and resources on both transports (the
 * daemon's `/mcp` builds one per request over its route handlers; `docsearch mcp` one per process over HTTP).
 */
export function createMcpServer(library: Library, opts: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'docsearch', title: 'docsearch', version: opts.version },
    // The SDK's server otherwise makes an Ajv instance of its own (for elicitation, which these tools never ask
    // for) each time: a quarter of a millisecond of every /mcp request. One per process serves them all.
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()) },
  );
  const tools = toolsFor(opts.scopes);
  for (const tool of tools) {
    server.registerTool(tool.name, sdkConfig(tool), ((args: Record<string, unknown>) => runTool(() => tool.run(library, args), opts.report)) as never);
  }
  // A tool the credential lacks the scope for is not listed; called anyway (a client that listed the tools under
  // another grant), it answers which scope is missing rather than "not found", which a model cannot act on.
  for (const tool of TOOLS.filter((t) => !tools.includes(t))) {
    const refusal = toolError(
      `this credential lacks the ${tool.scope} scope that ${tool.name} needs: the user can give it an API key with that scope, or approve this client again with it (insufficient_scope)`,
    );
    server.registerTool(tool.name, { description: tool.config.description }, (() => refusal) as never);
  }
  // The SDK looks a called tool up in a plain object: `constructor` or `toString` found Object's and answered "Tool
  // constructor disabled", as if it were one the user could turn on. Without a prototype they are not found.
  Object.setPrototypeOf((server as unknown as { _registeredTools: object })._registeredTools, null);
  registerDocumentResources(server.server, library, opts.report);
  // The SDK converts every tool's zod schemas to JSON Schema on each tools/list (bench/results/mcp.md), and /mcp builds a
  // server per request: the answer is the same for every caller with the same tools, so it is made by the SDK once and kept.
  const key = tools.map((t) => t.name).join(',');
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    let answer = toolLists.get(key);
    if (!answer) {
      answer = sdkToolList(opts.version, tools).catch((err: unknown) => (toolLists.delete(key), Promise.reject(err)));
      toolLists.set(key, answer);
    }
    return answer;
  });
  cleanParamErrors(server.server);
  return server;
}

const toolLists = new Map<string, Promise<ListToolsResult>>();
let validator: AjvJsonSchemaValidator | undefined;

/** tools/list as the SDK's own handler answers it, from a server of the same tools over no library. */
async function sdkToolList(version: string, tools: readonly ToolDefinition[]): Promise<ListToolsResult> {
  const server = new McpServer({ name: 'docsearch', version });
  for (const tool of tools) server.registerTool(tool.name, sdkConfig(tool), (() => ({ content: [] })) as never);
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  try {
    const answer = new Promise<JSONRPCMessage>((resolve) => (theirs.onmessage = resolve));
    await theirs.start();
    await theirs.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const message = await answer;
    if (!('result' in message)) throw new Error(`tools/list failed: ${JSON.stringify(message)}`);
    return message.result as ListToolsResult;
  } finally {
    await server.close();
  }
}
