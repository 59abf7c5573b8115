/**
 * MCP in shared mode end to end, through the built binary and HTTP only: three `docsearch serve` replicas on one
 * PostgreSQL 15 and one Ceph RGW bucket behind haproxy (test/helpers/topology.ts), balanced round robin per request
 * with no sticky sessions, driven by the official SDK's Client over StreamableHTTPClientTransport at haproxy's /mcp
 * with an API key. `/mcp` is stateless (a server and transport per request, JSON answers), so a session's requests
 * may each land on another replica: a note added on one is searched, read and listed on every replica.
 *
 * Which replica served which request is read from the replicas' own access logs: every request the client sends
 * carries an X-Request-Id of ours, which the daemon keeps as its request id and writes on its one "request" log line
 * (src/server/middleware/request-id.ts), with the method, path and status. The tests count on no order of haproxy's
 * rotation (whatever else passes through haproxy, such as the SDK's GET stream, takes turns in it too): a request
 * meant for every replica is sent again until each replica has served it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { startTopology, type Topology, topologyUnavailable } from '../helpers/topology.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { waitFor } from '../ingest/pipeline/helpers.js';
import { documentUri } from '../../src/mcp/resources.js';

const SKIP = topologyUnavailable();
const MINUTE = 60_000;
const MARKER = 'The lighthouse keeper on Tristan da Cunha logs every albatross in a green ledger.';
const NOTE = 'mcp-across-replicas.md';

/** One HTTP request an MCP client sent: our request id, the HTTP method, and the JSON-RPC method (or "-" for none). */
interface Sent {
  id: string;
  who: string;
  http: string;
  rpc: string;
}

/** The access-log line a replica wrote for a request. */
interface Served {
  replica: number;
  method: string;
  path: string;
  status: number;
  ms: number;
}

describe.skipIf(SKIP !== null)(`MCP on three replicas behind haproxy, round robin, no sticky sessions${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let topo: Topology;
  let alice: TestUser;
  let bob: TestUser;
  const clients: Client[] = [];
  /** The note the first user adds (the second test looks for it as the other user). */
  let noteId: string | undefined;
  const sent: Sent[] = [];

  beforeAll(async () => {
    topo = await startTopology({ replicas: 3 });
    alice = await addUser(topo.replicas[0]!.daemon);
    bob = await addUser(topo.replicas[1]!.daemon);
  }, 10 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail') return;
    for (const replica of topo.replicas) process.stderr.write(`--- replica ${replica.index}, last log lines:\n${replica.logs().split('\n').slice(-40).join('\n')}\n`);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await topo?.stop();
  }, 5 * MINUTE);

  /** An SDK client on haproxy's /mcp with the user's API key; each request it sends gets an X-Request-Id we record. */
  async function connect(user: TestUser, who: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${topo.lb.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
      fetch: (url, init) => {
        const id = `e2e-mcp-${who}-${sent.length}`;
        const headers = new Headers(init?.headers);
        headers.set('x-request-id', id);
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string; params?: { name?: string } }) : undefined;
        const rpc = body?.method === 'tools/call' ? `tools/call ${body.params?.name}` : (body?.method ?? '-');
        sent.push({ id, who, http: init?.method ?? 'GET', rpc });
        return fetch(url, { ...init, headers });
      },
    });
    const client = new Client({ name: 'docsearch-e2e', version: '0.0.0' });
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  /** Where each of these requests was served, by the replicas' access logs (pino writes asynchronously: waited for). */
  async function servedBy(requests: Sent[]): Promise<Map<string, Served[]>> {
    return waitFor(
      async () => {
        const found = new Map<string, Served[]>(requests.map((x) => [x.id, []]));
        for (const replica of topo.replicas) {
          for (const line of replica.logs().split('\n')) {
            if (!line.includes('"msg":"request"') || !line.includes('e2e-mcp-')) continue;
            const entry = JSON.parse(line) as { req_id: string; method: string; path: string; status: number; ms: number };
            found.get(entry.req_id)?.push({ replica: replica.index, method: entry.method, path: entry.path, status: entry.status, ms: entry.ms });
          }
        }
        return [...found.values()].every((x) => x.length > 0) ? found : undefined;
      },
      10_000,
      'every request in a replica access log',
    );
  }

  /**
   * Runs `request` (one POST of `who`'s session, its answer checked inside) through haproxy until every replica has
   * served it, and returns the replicas in the order they served it. A session held to one replica (sticky) never
   * gets there. Ten rounds of the rotation: even were every turn of it taken by another client in between, 30
   * requests would miss a replica once in 60,000.
   */
  async function onEveryReplica(who: string, request: () => Promise<void>): Promise<number[]> {
    const order: number[] = [];
    while (new Set(order).size < topo.replicas.length) {
      expect(order.length, `the replicas that served the request, in order: ${order.join(', ')}`).toBeLessThan(10 * topo.replicas.length);
      await request();
      const x = sent.filter((y) => y.who === who && y.http === 'POST').at(-1)!;
      order.push((await servedBy([x])).get(x.id)![0]!.replica);
    }
    return order;
  }

  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const structured = (res: CallToolResult) => {
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    return res.structuredContent as Record<string, any>;
  };

  it("a session's requests are served by every replica: a note added on one is searched, read and listed on each", async () => {
    const client = await connect(alice, 'alice');
    expect(client.getServerVersion()?.name).toBe('docsearch');

    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['add_document', 'get_document', 'get_documents', 'list_documents', 'list_projects', 'search']);

    const text = `# Across replicas\n\n${prose('mcp-replicas', 6)}\n\n${MARKER}\n\n${prose('mcp-replicas-tail', 4)}\n`;
    const added = structured(await call(client, 'add_document', { filename: NOTE, text }));
    expect(added.duplicate).toBe(false);
    expect(added.document).toMatchObject({ filename: NOTE, status: 'ready', content_type: expect.stringMatching(/^text\//) });
    const id = added.document.id as string;
    noteId = id;
    // Every replica, asked straight away and not through haproxy, has the ready note's chunks: the text is read
    // through the handle that catches up when a document settles (ChunkIndex.documentChunks); the main handle
    // re-checked the store only once a second, and a replica that had not ingested the note answered no chunks.
    const chunkCount = (await api(topo.replicas[0]!.daemon, `/api/v1/documents/${id}`, { token: alice.apiKey })).body.chunk_count as number;
    expect(chunkCount).toBeGreaterThan(0);
    const chunksOn = await Promise.all(
      topo.replicas.map(async (r) => (await api(r.daemon, `/api/v1/documents/${id}/text`, { token: alice.apiKey })).body.pages.flatMap((p: { chunks: unknown[] }) => p.chunks).length),
    );
    expect(chunksOn).toEqual(topo.replicas.map(() => chunkCount));

    // Each at once, with no retry: add_document answers once the note is searchable on every replica, the two that
    // did not ingest it too.
    const searchedOn = await onEveryReplica('alice', async () => {
      const found = structured(await call(client, 'search', { query: MARKER, limit: 5 }));
      expect(found.weak).toBe(false);
      const hit = (found.results as { document_id: string; filename: string; text: string }[]).find((x) => x.document_id === id);
      expect(hit, JSON.stringify(found.results)).toBeDefined();
      expect(hit!.filename).toBe(NOTE);
      expect(hit!.text).toContain('green ledger');
    });
    const readOn = await onEveryReplica('alice', async () => {
      const read = structured(await call(client, 'get_document', { document_id: id }));
      expect(read.document).toMatchObject({ id, filename: NOTE, status: 'ready' });
      expect(read.text).toContain(MARKER);
      expect(read.next_offset).toBeNull();
    });
    const listedOn = await onEveryReplica('alice', async () => {
      const listed = structured(await call(client, 'list_documents', {}));
      expect((listed.documents as { id: string; filename: string }[]).map((d) => [d.id, d.filename])).toEqual([[id, NOTE]]);
    });
    const resourcesOn = await onEveryReplica('alice', async () => {
      const resources = await client.listResources();
      expect(resources.resources).toEqual([expect.objectContaining({ uri: documentUri(id), name: NOTE, mimeType: 'text/plain' })]);
    });
    const resourceReadOn = await onEveryReplica('alice', async () => {
      const contents = await client.readResource({ uri: documentUri(id) });
      expect(contents.contents).toHaveLength(1);
      expect((contents.contents[0] as { text: string }).text).toContain(MARKER);
    });

    // Every request of the session was served by exactly one replica, logged with what the client sent; the
    // JSON-RPC requests answered 200, the `initialized` notification 202, and the optional GET stream 405.
    const mine = sent.filter((x) => x.who === 'alice');
    const served = await servedBy(mine);
    for (const x of mine) {
      const at = served.get(x.id)!;
      expect(at, x.id).toHaveLength(1);
      expect(at[0]).toMatchObject({ method: x.http, path: '/mcp', status: x.http === 'GET' ? 405 : x.rpc.startsWith('notifications/') ? 202 : 200 });
    }
    const posts = mine.filter((x) => x.http === 'POST');
    const replicaOf = (x: Sent) => served.get(x.id)![0]!.replica;
    process.stderr.write(`MCP POSTs in order: ${posts.map((x) => `${x.rpc} -> r${replicaOf(x)} (${served.get(x.id)![0]!.ms} ms)`).join(', ')}\n`);
    const rounds = [searchedOn, readOn, listedOn, resourcesOn, resourceReadOn];
    expect(posts.map((x) => x.rpc)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call add_document',
      ...['tools/call search', 'tools/call get_document', 'tools/call list_documents', 'resources/list', 'resources/read'].flatMap((rpc, i) => rounds[i]!.map(() => rpc)),
    ]);
  }, 5 * MINUTE);

  it("another user's client on the same haproxy sees none of the first user's documents, on any replica", async () => {
    expect(noteId, 'the first test added the note').toBeDefined();

    const client = await connect(bob, 'bob');
    await onEveryReplica('bob', async () => {
      const found = structured(await call(client, 'search', { query: MARKER, limit: 10 }));
      expect(found.results ?? []).toEqual([]);
      expect(found.total).toEqual({ value: 0, relation: 'eq' });
    });
    await onEveryReplica('bob', async () => {
      const listed = structured(await call(client, 'list_documents', {}));
      expect(listed).toEqual({ documents: [], next_cursor: null });
    });
    await onEveryReplica('bob', async () => {
      expect((await client.listResources()).resources).toEqual([]);
    });
    // Nor by its id: not found, as the REST API answers (not "forbidden", which would tell it exists).
    await onEveryReplica('bob', async () => {
      const other = await call(client, 'get_document', { document_id: noteId });
      expect(other.isError).toBe(true);
      expect(JSON.stringify(other.content)).toMatch(/not_found/);
    });
    await onEveryReplica('bob', async () => {
      await expect(client.readResource({ uri: documentUri(noteId!) })).rejects.toThrow(/-32002|not found/i);
    });
  }, 2 * MINUTE);
});
