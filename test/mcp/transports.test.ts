/**
 * docs/mcp.md's transports, setup lines and troubleshooting, held through real clients on one daemon:
 * - /mcp and `docsearch mcp` answer each protocol revision the doc names in that revision; /mcp keeps no session;
 *   malformed JSON is a parse error; a foreign Origin gets the doc's 403, an origin the operator listed is served;
 * - every stdio setup the doc shows (the `claude mcp add` lines, the Claude Desktop, VS Code and Codex entries), read
 *   from the doc itself and started as a host starts it, with `docsearch` on the PATH and the doc's values swapped
 *   for this daemon's URL and a real key (or a stored login where the entry has no key);
 * - the stdio troubleshooting entries: each cause writes the doc's words on standard error and ends the command.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv, unusedUrl } from '../cli/cli-env.js';
import { call } from './mcp-client.js';

const DOC = readFileSync(join(REPO, 'docs/mcp.md'), 'utf8');
const ALLOWED = 'https://assistant.example.org';
/** The URL clients reach the daemon at, as an operator behind a proxy sets it: not the address it listens on. */
const PUBLIC = 'https://docs.example.test';
const REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const initialize = (protocolVersion: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'old-client', version: '1' } } });

/** A stdio server entry as a host reads it from its config. */
interface Entry {
  where: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Every stdio setup in docs/mcp.md: the `claude mcp add … -- <command>` lines and the JSON and TOML entries. */
function documentedEntries(): Entry[] {
  const entries: Entry[] = [];
  for (const [, lang, body] of DOC.matchAll(/```(\w+)\n([\s\S]*?)```/g)) {
    if (lang === 'sh') {
      for (const line of body!.split('\n').filter((l) => l.startsWith('claude mcp add') && l.includes(' -- '))) {
        const [head, tail] = line.replace(/\s+#.*$/, '').split(' -- ');
        const env = Object.fromEntries([...head!.matchAll(/-e (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
        const [command, ...args] = tail!.trim().split(/\s+/);
        entries.push({ where: line, command: command!, args, env });
      }
    } else if (lang === 'json') {
      const config = JSON.parse(body!);
      const server = config.mcpServers?.docsearch ?? config.servers?.docsearch;
      if (server?.command) entries.push({ where: body!.trim(), command: server.command, args: server.args, env: server.env ?? {} });
    } else if (lang === 'toml') {
      // The one TOML shape the doc uses: key = JSON-like value, an inline table's keys bare.
      const table = Object.fromEntries([...body!.matchAll(/^(\w+) = (.+)$/gm)].map((m) => [m[1]!, JSON.parse(m[2]!.replace(/(\w+) = /g, '"$1": '))]));
      entries.push({ where: body!.trim(), command: table.command, args: table.args, env: table.env ?? {} });
    }
  }
  return entries;
}

describe('the MCP transports', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    { args: ['--mcp-allowed-origins', ALLOWED, '--public-url', PUBLIC] },
  );

  const post = (body: unknown, extra: Record<string, string> = {}) =>
    fetch(`${d.url}/mcp`, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${alice.apiKey}`, ...extra }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  it('answers each revision the doc names in that revision, over /mcp and over docsearch mcp, and keeps no session', async () => {
    for (const revision of REVISIONS) {
      const res = await post(initialize(revision));
      expect(res.status, revision).toBe(200);
      expect(res.headers.get('mcp-session-id'), revision).toBeNull();
      expect(res.headers.get('content-type'), revision).toMatch(/^application\/json/);
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion, revision).toBe(revision);
      // A later request in that revision, without any session: served.
      const listed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': revision });
      expect(listed.status, revision).toBe(200);
    }
    // A client newer than the server is answered in the newest revision the server implements: the doc's.
    const newer = await post(initialize('2099-01-01'));
    expect(((await newer.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(REVISIONS[0]);
    // The doc names the SDK release the server is built on.
    const sdk = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['@modelcontextprotocol/sdk']!;
    expect(DOC).toContain(`(\`@modelcontextprotocol/sdk\` ${sdk.split('.').slice(0, 2).join('.')})`);
    const env = cliEnv(d, { DOCSEARCH_TOKEN: alice.apiKey });
    const input = REVISIONS.map((r, i) => JSON.stringify({ ...initialize(r), id: i + 1 })).join('\n') + '\n';
    const res = await runCli(['mcp'], { env, input });
    const answers = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { protocolVersion: string } });
    expect(answers.map((a) => a.result.protocolVersion)).toEqual(REVISIONS);
  });

  it('answers malformed JSON with a JSON-RPC parse error (-32700) and HTTP 400', async () => {
    const res = await post('{"jsonrpc":"2.0","id":1,"method":');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('builds the challenge and the metadata a remote client follows from --public-url', async () => {
    const res = await fetch(`${d.url}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`);
    const resource = (await (await fetch(`${d.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string; authorization_servers: string[] };
    expect(resource).toMatchObject({ resource: `${PUBLIC}/mcp`, authorization_servers: [PUBLIC] });
    const server = (await (await fetch(`${d.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(server.authorization_endpoint).toBe(`${PUBLIC}/api/oauth/authorize`);
    expect(server.registration_endpoint).toBe(`${PUBLIC}/api/oauth/register`);
  });

  it('takes a request body of 5 MiB and refuses one byte more with 413', async () => {
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const padded = (size: number) => request + ' '.repeat(size - request.length);
    expect((await post(padded(5 * 1024 * 1024))).status).toBe(200);
    const over = await post(padded(5 * 1024 * 1024 + 1));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toBe('the request body is larger than 5 MiB');
  });

  it("refuses a page from another origin with the doc's 403, and serves an origin given to --mcp-allowed-origins", async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const refused = await post(list, { origin: 'https://elsewhere.example.net' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('requests from the origin https://elsewhere.example.net are not allowed (see --mcp-allowed-origins)');
    const allowed = await post(list, { origin: ALLOWED });
    expect(allowed.status).toBe(200);
    expect(((await allowed.json()) as { result: { tools: unknown[] } }).result.tools.length).toBe(6);
  });

  it('starts docsearch mcp as each setup in the doc writes it, and serves the library', { timeout: 120_000 }, async () => {
    const entries = documentedEntries();
    // Two claude lines, Claude Desktop, VS Code, Codex: a setup dropped from the doc, or one this stops reading, fails here.
    expect(entries, entries.map((e) => e.where).join('\n\n')).toHaveLength(5);
    // `docsearch` on the PATH the assistant sees, as the doc asks; a stored login for the entries without a key.
    const home = cliEnv(d);
    const bin = join(home.HOME!, 'bin');
    mkdirSync(bin);
    symlinkSync(BIN, join(bin, 'docsearch'));
    expect((await runCli(['login', '--server', d.url, '--with-token'], { env: home, input: `${alice.apiKey}\n` })).code).toBe(0);
    for (const entry of entries) {
      const env = Object.fromEntries(Object.entries(entry.env).map(([k, v]) => [k, /^https?:/.test(v) ? d.url : /^dsk_/.test(v) ? alice.apiKey : v]));
      const stderr: string[] = [];
      const transport = new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { ...home, DOCSEARCH_URL: '', PATH: `${bin}:${process.env.PATH ?? ''}`, ...env },
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
      const client = new Client({ name: 'host', version: '1' });
      try {
        await client.connect(transport);
        const projects = await call(client, 'list_projects', {});
        expect(projects.projects.map((p: { is_default: boolean }) => p.is_default), entry.where).toEqual([true]);
      } catch (err) {
        throw new Error(`${entry.where}\n${(err as Error).message}\nstderr: ${stderr.join('')}`);
      } finally {
        await client.close();
      }
      expect(stderr.join(''), entry.where).toContain(`docsearch mcp: serving ${d.url} on stdio (read:documents, write:documents`);
    }
  });

  it('takes the server and the credential as --server and --token too', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--server', d.url, '--token', alice.apiKey], env: cliEnv(null), stderr: 'pipe' });
    const client = new Client({ name: 'host', version: '1' });
    await client.connect(transport);
    try {
      expect((await call(client, 'list_projects', {})).projects).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('ends, with the troubleshooting table\'s words on standard error and nothing on standard output, when it cannot serve', async () => {
    // The words the credential row tells the operator to look for in the client's MCP log.
    const row = DOC.split('\n').find((l) => l.startsWith('| stdio: the server shows as failed, `not logged in`'))!;
    const logged = [...row.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/ …$/, ''));
    const saysTheRow = (stderr: string) => logged.some((words) => stderr.includes(words));
    const notLoggedIn = await runCli(['mcp'], { env: cliEnv(d) });
    expect(notLoggedIn.code).not.toBe(0);
    expect(notLoggedIn.stdout).toBe('');
    expect(notLoggedIn.stderr).toContain(`not logged in to ${d.url}`);
    expect(saysTheRow(notLoggedIn.stderr), notLoggedIn.stderr).toBe(true);
    // A key the user revoked: the server refuses it at GET /api/v1/me.
    const made = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'revoked for mcp', scopes: ['read:documents'] } });
    expect(made.status).toBe(201);
    expect((await api(d, `/api/v1/keys/${made.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
    const revoked = await runCli(['mcp'], { env: cliEnv(d, { DOCSEARCH_TOKEN: made.body.key }) });
    expect(revoked.code).not.toBe(0);
    expect(revoked.stdout).toBe('');
    expect(saysTheRow(revoked.stderr), revoked.stderr).toBe(true);
    const url = await unusedUrl();
    const unreachable = await runCli(['mcp'], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: alice.apiKey }) });
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.stdout).toBe('');
    expect(unreachable.stderr).toContain(`could not reach ${url} (ECONNREFUSED) — is \`docsearch serve\` running?`);
    const malformed = await runCli(['mcp'], { env: cliEnv(d, { DOCSEARCH_TOKEN: 'not-a-key' }) });
    expect(malformed.code).not.toBe(0);
    expect(malformed.stdout).toBe('');
    expect(malformed.stderr).toMatch(/^error: DOCSEARCH_TOKEN: /m);
    expect(saysTheRow(malformed.stderr), malformed.stderr).toBe(true);
  });
});
