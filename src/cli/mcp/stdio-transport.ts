import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, isJSONRPCNotification, isJSONRPCRequest, type JSONRPCMessage, JSONRPCMessageSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { MAX_MESSAGE_BYTES, type MessageRefusal, messageRefusal } from '../../mcp/message-text.js';

/** A request's id as JSON-RPC allows it (a string or an integer), or null where none can be read. */
function idOf(message: unknown): RequestId | null {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return null;
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as RequestId) : null;
}

/**
 * The MCP stdio transport (one JSON-RPC message per line on stdin, the answers on stdout) answering every line.
 * The SDK's StdioServerTransport reads each line with JSON.parse alone, so a key given twice was taken as its last
 * value where /mcp refuses the request; and it drops a line it cannot read without a word, leaving the client waiting
 * for an answer that never comes. Here a line passes the checks /mcp makes (mcp/message-text.ts) or is answered with
 * the error /mcp gives it, with the request's id where one can be read, so the client's call fails rather than waits.
 * When stdin ends (the client ending the session), the requests already read are answered before the transport closes.
 */
export class CheckedStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The rest of a line that passed the limit: dropped up to its newline. */
  private skipping = false;
  private readonly inFlight = new Set<RequestId>();
  private ended = false;
  private closed = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream,
    private readonly stdout: NodeJS.WritableStream,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdin.on('end', this.onEnd);
  }

  private readonly onError = (err: Error) => this.onerror?.(err);

  private readonly onEnd = () => {
    this.ended = true;
    if (this.inFlight.size === 0) void this.close();
  };

  private readonly onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, from)) {
      this.take(bytes.subarray(from, nl), true);
      from = nl + 1;
    }
    if (from < bytes.length) this.take(bytes.subarray(from), false);
  };

  /** A piece of a line (`ends`: its newline came): buffered up to the limit /mcp keeps to, then read. */
  private take(part: Buffer, ends: boolean): void {
    if (!this.skipping) {
      this.pendingBytes += part.length;
      if (this.pendingBytes > MAX_MESSAGE_BYTES) {
        this.pending = [];
        this.pendingBytes = 0;
        this.skipping = true;
        this.refuse(null, { code: ErrorCode.InvalidRequest, message: `invalid request: the message is larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB` });
      } else this.pending.push(part);
    }
    if (!ends) return;
    if (!this.skipping) this.read(Buffer.concat(this.pending).toString('utf8').replace(/\r$/, ''));
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = false;
  }

  private read(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.refuse(null, { code: ErrorCode.ParseError, message: 'parse error: the line is not valid JSON' });
    }
    const refusal = messageRefusal(line, value, '');
    // A repeated "id" leaves no id to answer.
    if (refusal) return this.refuse(refusal.message.startsWith('invalid request: id:') ? null : idOf(value), refusal);
    // MCP since 2025-06-18 has no batches; a client of an earlier revision gets a refusal, not silence.
    if (Array.isArray(value)) {
      return this.refuse(null, { code: ErrorCode.InvalidRequest, message: 'invalid request: a batch (a JSON array) is not served on stdio; send each message on its own line' });
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    // As the SDK answers it on /mcp.
    if (!parsed.success) return this.refuse(idOf(value), { code: ErrorCode.ParseError, message: 'Parse error: Invalid JSON-RPC message' });
    if (isJSONRPCRequest(parsed.data)) this.inFlight.add(parsed.data.id);
    // A request the client cancels is never answered (MCP cancellation): not waited for at the end.
    if (isJSONRPCNotification(parsed.data) && parsed.data.method === 'notifications/cancelled') {
      const id = idOf({ id: parsed.data.params?.requestId });
      if (id !== null) this.inFlight.delete(id);
    }
    this.onmessage?.(parsed.data);
  }

  private refuse(id: RequestId | null, refusal: MessageRefusal): void {
    void this.write(JSON.stringify({ jsonrpc: '2.0', id, error: refusal }) + '\n');
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => (this.stdout.write(text) ? resolve() : this.stdout.once('drain', resolve)));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.write(JSON.stringify(message) + '\n');
    if (('result' in message || 'error' in message) && message.id !== undefined && this.inFlight.delete(message.id) && this.ended && this.inFlight.size === 0) {
      await this.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdin.off('end', this.onEnd);
    this.stdin.pause();
    this.onclose?.();
  }
}
