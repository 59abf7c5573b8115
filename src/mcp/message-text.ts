import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { MAX_JSON_DEPTH, suspectKey, tooDeep } from '../core/json-checks.js';

/** The largest JSON-RPC message, on /mcp (a body) and on stdio (a line): add_document's notes are at most 1 M characters, ~4 MiB of UTF-8 at worst. */
export const MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

export interface MessageRefusal {
  code: number;
  message: string;
}

/**
 * What both transports refuse in a message JSON.parse accepted, before the SDK reads it: a key repeated within one
 * object (JSON.parse keeps the last, a proxy or another reader may keep the first: they would read different
 * requests), a `__proto__` key (the tools' schemas drop it without a word: a filter on it narrowed nothing), nesting
 * deeper than the recursive code further on takes, an empty batch (JSON-RPC 2.0 §6: an Invalid Request; the SDK would
 * take it as zero notifications). `root` names the message in paths: `body` on /mcp, as the REST API names its bodies;
 * nothing on stdio, as its refusal of a `__proto__` key in params reads (`params.arguments.filters.metadata`).
 */
export function messageRefusal(text: string, message: unknown, root: 'body' | ''): MessageRefusal | null {
  const invalid = (what: string) => ({ code: ErrorCode.InvalidRequest, message: `invalid request: ${what}` });
  const suspect = suspectKey(text, root);
  if (suspect) return invalid(`${suspect.path || 'the message'}: ${suspect.problem}`);
  if (tooDeep(message)) return invalid(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(message) && message.length === 0) return invalid('an empty batch');
  return null;
}
