import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LibraryError } from './library.js';

/** A tool's answer: the structured result, and the same JSON as text for clients that read only text (MCP 2025-11-25 §tools). */
export function structured<T extends Record<string, unknown>>(value: T): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * Runs a tool's work and turns a library's refusal (not found, lacking scope, bad input) into a tool error the
 * model can act on. Anything else is reported without its internals: `report` logs it for the operator.
 */
export async function runTool(work: () => Promise<CallToolResult>, report: (err: unknown) => void): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof LibraryError) return toolError(`${err.message} (${err.code})`);
    report(err);
    return toolError('the tool failed on the server; the server log has the details');
  }
}
