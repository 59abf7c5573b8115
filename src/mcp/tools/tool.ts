import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ZodRawShape } from 'zod';
import type { Library } from '../library.js';

/** One tool: what tools/list shows (schemas, annotations, a description written for a model) and its work. */
export interface ToolDefinition {
  name: string;
  /** The scope a credential needs to use it: tools/list shows a credential only the tools it may call. */
  scope: 'read:documents' | 'write:documents';
  config: {
    title: string;
    description: string;
    inputSchema: ZodRawShape;
    outputSchema: ZodRawShape;
    annotations: ToolAnnotations;
  };
  /** `args` have passed inputSchema (no argument it does not name). Throws LibraryError for refusals. */
  run(library: Library, args: Record<string, unknown>): Promise<CallToolResult>;
}
