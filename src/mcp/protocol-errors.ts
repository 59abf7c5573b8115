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
 * each stored handler is wrapped once every handler is set. A request holding a `__proto__` key is an Invalid Request
 * naming where, on every transport, as /mcp answers it.
 */
export function cleanParamErrors(server: Server): void {
  type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
  const handlers = (server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      const proto = protoKeyAt((request as { params?: unknown }).params, 'params');
      if (proto) throw protocolError(ErrorCode.InvalidRequest, `invalid request: ${proto}: the key "__proto__" is not accepted`);
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

/**
 * Where a parsed message holds an own `__proto__` key (`params.arguments.filters.metadata`), or null. JSON.parse keeps
 * it as a key, but the tools' schemas rebuild each object by assignment, which sets the prototype instead: the key
 * (a filter) was dropped without a word over stdio, where /mcp refuses it from the text (server/mcp/route.ts).
 * Iterative: a message nested thousands deep must not end in a stack overflow.
 */
function protoKeyAt(value: unknown, path: string): string | null {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) v.forEach((item, i) => stack.push([item, `${at}[${i}]`]));
    else {
      if (Object.hasOwn(v, '__proto__')) return at;
      for (const [k, item] of Object.entries(v)) stack.push([item, `${at}.${k}`]);
    }
  }
  return null;
}
