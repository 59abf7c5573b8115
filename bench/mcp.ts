/**
 * npm run bench:mcp [-- --docs 1000] [--rounds 3]
 *
 * What MCP costs over the REST API for the same search, against a real daemon (the built binary, the built-in
 * model). The library is `--docs` SciFact abstracts (those the test questions are judged against first), uploaded
 * through the API; once they are ready and the search indexes preloaded, the SciFact test questions are asked
 * `--rounds` times, each question both ways in one loop, alternating which goes first so drift hits both alike:
 *
 * - MCP: `tools/call search` through the SDK's Client + StreamableHTTPClientTransport (one connected client, reused)
 *   with the API key — what an MCP host pays, the client's own parsing and output-schema check included;
 * - MCP raw: the same JSON-RPC request POSTed with fetch — the server's share without the client SDK's;
 * - REST: POST /api/v1/search with the same body (query, limit, mode, group);
 *
 * and `tools/list` through the same client and as a raw POST (the SDK Client compiles a JSON Schema validator for
 * every tool's output schema on each listTools: client time, not the server's). Every question is asked once through REST before measuring, so all
 * measured calls find its query vector cached (the first ask of a query embeds it: ~1–5 ms that would otherwise
 * fall on whichever transport went first). All requests use keep-alive connections (undici's fetch, which the
 * SDK's transport uses too). Prints p50/p95 of each, the p50 overhead of MCP over REST (bar ≤ 3 ms), tools/list
 * p50 (bar ≤ 5 ms), and whether both transports returned the same passages (chunk ids, in order) per question.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addUser, removeDir, startDaemon, waitPreloaded } from '../test/helpers/daemon.js';
import { cpuMs, ingestThroughApi, percentile } from './ingest-api.js';
import { available, readCorpus, readSplit, SCIFACT } from './scifact.js';

const log = (m: string) => process.stderr.write(`${m}\n`);
const { values: argv } = parseArgs({ options: { docs: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' } } });
const DOCS = Number(argv.docs);
const ROUNDS = Number(argv.rounds);
const SEARCH = { limit: 10, mode: 'hybrid', group: 'none' } as const;
const ACCEPT = 'application/json, text/event-stream';

if (!available()) {
  log(`SciFact not found at ${SCIFACT}: nothing to measure`);
  process.exit(2);
}

const questions = readSplit('test');
// The abstracts the questions are judged against first, then the corpus in order, up to --docs.
const judged = new Set(questions.flatMap((q) => [...q.relevant.keys()]));
const corpus = readCorpus();
const chosen = [...corpus.filter((d) => judged.has(d.id)), ...corpus.filter((d) => !judged.has(d.id))].slice(0, DOCS);

const load0 = loadavg()[0]!;
const d = await startDaemon({ args: ['--log-level', 'warn'], timeoutMs: 120_000 });
let failed = false;
try {
  const { apiKey } = await addUser(d);
  log(`uploading ${chosen.length} abstracts`);
  const ingest = await ingestThroughApi(d, apiKey, chosen.map((doc) => ({ name: `scifact-${doc.id}.txt`, bytes: Buffer.from(`${doc.title}\n\n${doc.text}\n`) })), {
    perRequest: 20,
    onTick: (left, total) => log(`  ${left} of ${total} not ready yet`),
  });
  log(`${ingest.documents} documents, ${ingest.chunks} chunks (${ingest.failed} failed) in ${ingest.seconds.toFixed(0)} s`);
  await waitPreloaded(d);

  const auth = { authorization: `Bearer ${apiKey}` };
  const client = new Client({ name: 'bench-mcp', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers: auth } }));
  await client.listTools(); // what a host does first; also gives the client the output schema it checks results against

  const rest = async (query: string): Promise<string[]> => {
    const res = await fetch(`${d.url}/api/v1/search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query, ...SEARCH }) });
    const body = (await res.json()) as { results: { chunk_id: string }[] };
    if (res.status !== 200) throw new Error(`REST search answered ${res.status}: ${JSON.stringify(body)}`);
    return body.results.map((r) => r.chunk_id);
  };
  const mcp = async (query: string): Promise<string[]> => {
    const result = await client.callTool({ name: 'search', arguments: { query, ...SEARCH } });
    if (result.isError) throw new Error(`MCP search failed: ${JSON.stringify(result.content)}`);
    return (result.structuredContent as { results: { chunk_id: string }[] }).results.map((r) => r.chunk_id);
  };
  let rpcId = 0;
  const mcpRaw = async (query: string): Promise<string[]> => {
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'search', arguments: { query, ...SEARCH } } }),
    });
    const body = (await res.json()) as { result?: { isError?: boolean; structuredContent: { results: { chunk_id: string }[] } } };
    if (res.status !== 200 || !body.result || body.result.isError) throw new Error(`raw MCP search answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body.result.structuredContent.results.map((r) => r.chunk_id);
  };

  const rawList = async (): Promise<void> => {
    const res = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/list' }),
    });
    const body = (await res.json()) as { result?: { tools: unknown[] } };
    if (res.status !== 200 || !body.result?.tools.length) throw new Error(`raw tools/list answered ${res.status}`);
  };
  const timed = async <T>(into: number[], fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const out = await fn();
    into.push(performance.now() - t0);
    return out;
  };

  log(`warming: ${questions.length} questions once through REST`);
  for (const q of questions) await rest(q.text);
  for (const q of questions.slice(0, 20)) (await mcp(q.text), await mcpRaw(q.text), await client.listTools(), await rawList());

  const ms = { mcp: [] as number[], raw: [] as number[], rest: [] as number[], list: [] as number[], rawList: [] as number[] };
  const paired: number[] = [];
  let same = 0;
  let compared = 0;
  const differing: string[] = [];
  const cpu0 = cpuMs(d.proc.pid!);
  log(`measuring: ${ROUNDS} rounds of ${questions.length} questions`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, q] of questions.entries()) {
      // Three orders in turn, so each transport goes first, second and last equally often.
      const steps = [
        async () => timed(ms.mcp, () => mcp(q.text)),
        async () => timed(ms.raw, () => mcpRaw(q.text)),
        async () => timed(ms.rest, () => rest(q.text)),
      ];
      const order = [0, 1, 2].map((k) => (k + i + round) % 3);
      const ids: string[][] = [];
      for (const k of order) ids[k] = await steps[k]!();
      paired.push(ms.mcp.at(-1)! - ms.rest.at(-1)!);
      await timed(ms.list, () => client.listTools());
      await timed(ms.rawList, () => rawList());
      compared++;
      const [viaMcp, viaRaw, viaRest] = ids as [string[], string[], string[]];
      if (viaMcp.join() === viaRest.join() && viaRaw.join() === viaRest.join()) same++;
      else if (differing.length < 5) differing.push(`${q.id}: MCP ${viaMcp.slice(0, 3).join(' ')}… REST ${viaRest.slice(0, 3).join(' ')}…`);
    }
  }
  const daemonCpuPerRequest = (cpuMs(d.proc.pid!) - cpu0) / (compared * 5);
  await client.close();

  const p = (xs: number[], q: number) => percentile(xs, q).toFixed(2);
  const overhead = percentile(ms.mcp, 50) - percentile(ms.rest, 50);
  const rawOverhead = percentile(ms.raw, 50) - percentile(ms.rest, 50);
  const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, Node ${process.version}`;
  const out = [
    `${new Date().toISOString().slice(0, 10)}, ${machine}; 1-min load average at start ${load0.toFixed(1)}, at end ${loadavg()[0]!.toFixed(1)}.`,
    `${ingest.documents} SciFact abstracts (${ingest.chunks} chunks), ${questions.length} test questions × ${ROUNDS} rounds = ${compared} searches per transport, interleaved; limit ${SEARCH.limit}, ${SEARCH.mode}, group ${SEARCH.group}.`,
    '',
    '| request | p50 (ms) | p95 (ms) |',
    '|---|---:|---:|',
    `| REST \`POST /api/v1/search\` | ${p(ms.rest, 50)} | ${p(ms.rest, 95)} |`,
    `| MCP \`tools/call search\` (SDK Client) | ${p(ms.mcp, 50)} | ${p(ms.mcp, 95)} |`,
    `| MCP \`tools/call search\` (raw JSON-RPC POST) | ${p(ms.raw, 50)} | ${p(ms.raw, 95)} |`,
    `| MCP \`tools/list\` (SDK Client) | ${p(ms.list, 50)} | ${p(ms.list, 95)} |`,
    `| MCP \`tools/list\` (raw JSON-RPC POST) | ${p(ms.rawList, 50)} | ${p(ms.rawList, 95)} |`,
    '',
    `MCP over REST, p50: **${overhead.toFixed(2)} ms** through the SDK Client (bar ≤ 3 ms: ${overhead <= 3 ? 'met' : 'NOT met'}), ${rawOverhead.toFixed(2)} ms as a raw POST; median of the per-question differences ${percentile(paired, 50).toFixed(2)} ms.`,
    `tools/list p50: **${p(ms.rawList, 50)} ms** as a raw POST (bar ≤ 5 ms: ${percentile(ms.rawList, 50) <= 5 ? 'met' : 'NOT met'}); ${p(ms.list, 50)} ms through the SDK Client, which compiles a validator for every tool's output schema on each listTools.`,
    `Same passages (chunk ids, in order) through MCP, raw MCP and REST: ${same}/${compared} searches.`,
    `Daemon CPU per request (all five kinds together): ${daemonCpuPerRequest.toFixed(2)} ms.`,
    ...differing.map((x) => `  differs: ${x}`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  if (same !== compared) failed = true;
} finally {
  await d.stop();
  removeDir(d.dataDir);
}
if (failed) process.exit(1);
