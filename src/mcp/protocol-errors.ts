import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

/**
 * A JSON-RPC error with `message` as it is. (The SDK's McpError writes "MCP error <code>: " into its message, and
 * the client's McpError adds the same again: "MCP error -32002: MCP error -32002: …".)
 */
export function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

interface ZodIssueLike {
  path: PropertyKey[];
  message: string;
}

/** zod's error (the SDK parses with zod's core, whose errors are not Error instances). */
const isSchemaError = (err: unknown): err is { issues: ZodIssueLike[] } =>
  typeof err === 'object' && err !== null && /ZodError/.test((err as { name?: unknown }).name as string) && Array.isArray((err as { issues?: unknown }).issues);

/**
 * Makes a request whose params do not fit the method's schema (`tools/call` with `arguments: null`) an Invalid
 * Params error naming the field. The SDK parses each request inside the handler it stores and answers a failed
 * parse as an internal error (-32603) whose message is the schema issues as JSON; it offers no hook for this, so
 * each stored handler is wrapped once every handler is set. (A `__proto__` key or a key given twice never gets this
 * far: both transports refuse the message's text first, mcp/message-text.ts.)
 */
export function cleanParamErrors(server: Server): void {
  type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
  const handlers = (server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (err) {
        if (!isSchemaError(err)) throw err;
        const issues = err.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`);
        throw protocolError(ErrorCode.InvalidParams, `invalid ${method} request: ${issues.join('; ')}`);
      }
    });
  }
}
