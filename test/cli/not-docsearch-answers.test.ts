/**
 * The client against a server that answers 200 with JSON that is not docsearch's (a proxy's `{"ok":true}`, another
 * service on the port, `[]`), through the built binary: every command that reads an answer says that the server did
 * not answer as docsearch does, naming the request and what was wrong, with the hint to check the address (exit 1,
 * as the CLI's other server errors; docs/cli.md "Errors and exit codes"), instead of JavaScript's own words
 * ("Cannot read properties of undefined"). The server answers every other request as docsearch would, so each
 * command reaches the request under test. `auth status` does not call such a login ok; `docsearch mcp` says the same
 * as a tool error.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { callError, stdioClient } from '../mcp/mcp-client.js';
import { cliEnv } from './cli-env.js';

const TOKEN = `dsk_${'a'.repeat(43)}`;
const PRJ = 'prj_012345678abcdefABCDEF';
const DOC = 'doc_012345678abcdefABCDEF';
const SRC = 'src_012345678abcdefABCDEF';
const USR = 'usr_012345678abcdefABCDEF';
const AT = '2026-01-01T00:00:00.000Z';
const NOTES = join(mkdtempSync(join(tmpdir(), 'not-docsearch-')), 'notes.txt');
writeFileSync(NOTES, 'Sea otters hold hands while they sleep.\n');

const project = { id: PRJ, name: 'handbook', description: '', metadata: {}, document_count: 1, chunk_count: 1, size_bytes: 10, created_at: AT, updated_at: AT, role: 'owner', owner: 'ann@example.com' };
const document = { id: DOC, filename: 'report.pdf', project_id: PRJ, status: 'failed', error: 'unreadable', size_bytes: 10, content_type: 'application/pdf', sha256: 'a'.repeat(64), chunk_count: 1, created_at: AT, updated_at: AT };
const source = { id: SRC, project_id: PRJ, kind: 'web', url: 'https://example.com/docs/', every: '1h', status: 'active', paused_reason: null, held_deletions: null, last_sync: null, next_sync: null, last_result: null, options: {}, secrets: [], secrets_to_reenter: [], created_at: AT, updated_at: AT };
const key = { id: 'key_012345678abcdefABCDEF', name: 'ci', prefix: 'dsk_', last4: 'aaaa', scopes: ['read:documents'], created_at: AT, last_used_at: null, expires_at: null, expired: false };
const group = { id: 'grp_012345678abcdefABCDEF', name: 'editors', description: '', source: 'local', member_count: 0, created_at: AT, project_count: 0, members: [] };

/** What a docsearch server answers to the requests a command makes before the one under test. */
function docsearchAnswer(method: string, path: string): unknown {
  const routes: [string, RegExp, unknown][] = [
    ['GET', /^\/api\/v1\/me$/, { id: USR, email: 'ann@example.com', kind: 'api_key', scopes: ['read:documents', 'write:documents'], expires_at: null }],
    ['GET', /^\/api\/v1\/projects$/, { projects: [project], next_cursor: null }],
    ['GET', /^\/api\/v1\/projects\/[^/]+\/sources$/, { sources: [source] }],
    // `projects share` reads the members first, to keep an existing member's role when no --role is given.
    ['GET', /^\/api\/v1\/projects\/[^/]+\/members$/, { members: [] }],
    ['GET', /^\/api\/v1\/documents\/[^/]+$/, document],
    ['GET', /^\/api\/v1\/documents$/, { documents: [document], next_cursor: null }],
    ['GET', /^\/api\/v1\/trash$/, { documents: [{ ...document, trashed_at: AT, trashed_by: null, purge_at: AT }], next_cursor: null }],
    ['GET', /^\/api\/v1\/keys$/, { keys: [key] }],
    ['GET', /^\/api\/v1\/saved-searches$/, { saved_searches: [{ id: 'svs_012345678abcdefABCDEF', name: 'weekly', search: { query: 'otters' }, project_id: null, created_by: 'ann@example.com', mine: true }] }],
    ['GET', /^\/api\/v1\/admin\/groups\/[^/]+$/, group],
  ];
  return routes.find(([m, p]) => m === method && p.test(path))?.[2];
}

/**
 * Each command that reads an answer, the request whose answer it reads (the one answered wrongly), the field the
 * answer must have first, and what the command rightly says before it asks (its progress line, with the URL).
 */
const COMMANDS: { argv: string[]; request: string; first: string; input?: string; says?: string }[] = [
  { argv: ['search', 'otters', '--passages'], request: 'POST /api/v1/search', first: 'results' },
  { argv: ['search', 'otters', '--documents'], request: 'POST /api/v1/search', first: 'documents' },
  { argv: ['search', '--saved', 'weekly'], request: 'GET /api/v1/saved-searches', first: 'saved_searches' },
  { argv: ['search', 'otters', '--save', 'weekly'], request: 'POST /api/v1/saved-searches', first: 'id' },
  { argv: ['saved-searches', 'list'], request: 'GET /api/v1/saved-searches', first: 'saved_searches' },
  { argv: ['saved-searches', 'rename', 'weekly', 'daily'], request: 'PATCH /api/v1/saved-searches/svs_012345678abcdefABCDEF', first: 'id' },
  { argv: ['projects', 'list'], request: 'GET /api/v1/projects', first: 'projects' },
  { argv: ['projects', 'create', 'notes'], request: 'POST /api/v1/projects', first: 'id' },
  { argv: ['projects', 'rename', 'handbook', 'manual'], request: `PATCH /api/v1/projects/${PRJ}`, first: 'id' },
  { argv: ['projects', 'settings', 'handbook', '--language', 'de'], request: `PATCH /api/v1/projects/${PRJ}`, first: 'id' },
  { argv: ['projects', 'transfer', 'handbook', 'bob@example.com'], request: `POST /api/v1/projects/${PRJ}/transfer`, first: 'id' },
  { argv: ['projects', 'members', 'handbook'], request: `GET /api/v1/projects/${PRJ}/members`, first: 'members' },
  { argv: ['projects', 'share', 'handbook', 'bob@example.com'], request: `POST /api/v1/projects/${PRJ}/members`, first: 'id' },
  { argv: ['documents', 'list'], request: 'GET /api/v1/documents', first: 'documents' },
  { argv: ['documents', 'show', DOC], request: `GET /api/v1/documents/${DOC}`, first: 'id' },
  { argv: ['documents', 'show', 'report.pdf'], request: 'GET /api/v1/documents', first: 'documents' },
  { argv: ['documents', 'rename', DOC, 'summary.pdf'], request: `PATCH /api/v1/documents/${DOC}`, first: 'id' },
  { argv: ['documents', 'move', DOC, '--to', 'handbook'], request: `PATCH /api/v1/documents/${DOC}`, first: 'id' },
  { argv: ['documents', 'retry', DOC], request: `POST /api/v1/documents/${DOC}/retry`, first: 'id' },
  { argv: ['documents', 'label', DOC, 'add', 'urgent'], request: `PATCH /api/v1/documents/${DOC}`, first: 'id' },
  { argv: ['trash', 'list'], request: 'GET /api/v1/trash', first: 'documents' },
  { argv: ['trash', 'restore', DOC], request: `POST /api/v1/trash/${DOC}/restore`, first: 'id' },
  { argv: ['keys', 'list'], request: 'GET /api/v1/keys', first: 'keys' },
  { argv: ['keys', 'create', '--name', 'ci'], request: 'POST /api/v1/keys', first: 'id' },
  { argv: ['keys', 'revoke', 'ci', '--yes'], request: 'GET /api/v1/keys', first: 'keys' },
  { argv: ['sources', 'list'], request: `GET /api/v1/projects/${PRJ}/sources`, first: 'sources' },
  { argv: ['sources', 'show', SRC], request: `GET /api/v1/projects/${PRJ}/sources/${SRC}`, first: 'id' },
  { argv: ['sources', 'sync', SRC], request: `POST /api/v1/projects/${PRJ}/sources/${SRC}/sync`, first: 'id' },
  { argv: ['sources', 'edit', SRC, '--every', '1d'], request: `PATCH /api/v1/projects/${PRJ}/sources/${SRC}`, first: 'id' },
  { argv: ['sources', 'add', 'handbook', 'https://example.com/docs/'], request: `POST /api/v1/projects/${PRJ}/sources`, first: 'id' },
  { argv: ['whoami'], request: 'GET /api/v1/me', first: 'id' },
  { argv: ['login', '--with-token'], request: 'GET /api/v1/projects', first: 'projects', input: `${TOKEN}\n` },
  { argv: ['upload', NOTES, '--project', 'handbook'], request: 'POST /api/v1/upload', first: 'documents', says: 'uploading 1 file to project handbook on' },
  { argv: ['admin', 'users', 'list'], request: 'GET /api/v1/admin/users', first: 'users' },
  { argv: ['admin', 'users', 'invite', 'bob@example.com'], request: 'POST /api/v1/admin/invitations', first: 'invitations' },
  { argv: ['admin', 'users', 'disable', USR, '--yes'], request: `POST /api/v1/admin/users/${USR}/disable`, first: 'user' },
  { argv: ['admin', 'users', 'enable', USR], request: `POST /api/v1/admin/users/${USR}/enable`, first: 'user' },
  { argv: ['admin', 'users', 'delete', USR, '--yes'], request: `DELETE /api/v1/admin/users/${USR}`, first: 'transferred' },
  { argv: ['admin', 'users', 'reset-link', USR], request: `POST /api/v1/admin/users/${USR}/reset-link`, first: 'mailed' },
  { argv: ['admin', 'users', 'set-quota', USR, '500MiB'], request: `PATCH /api/v1/admin/users/${USR}`, first: 'id' },
  { argv: ['admin', 'users', 'set-admin', USR], request: `PATCH /api/v1/admin/users/${USR}`, first: 'id' },
  { argv: ['admin', 'groups', 'list'], request: 'GET /api/v1/admin/groups', first: 'groups' },
  { argv: ['admin', 'groups', 'create', 'editors'], request: 'POST /api/v1/admin/groups', first: 'id' },
  { argv: ['admin', 'groups', 'members', 'editors'], request: 'GET /api/v1/admin/groups/editors', first: 'id' },
  { argv: ['admin', 'groups', 'delete', 'editors'], request: 'GET /api/v1/admin/groups/editors', first: 'id' },
  { argv: ['admin', 'invitations', 'list'], request: 'GET /api/v1/admin/invitations', first: 'invitations' },
  { argv: ['admin', 'mail', 'list'], request: 'GET /api/v1/admin/mail', first: 'mail' },
  { argv: ['admin', 'mail', 'test'], request: 'POST /api/v1/admin/mail/test', first: 'id' },
  { argv: ['admin', 'mail', 'retry'], request: 'POST /api/v1/admin/mail/retry', first: 'queued' },
];

/** Two ways of not being docsearch: a list where an object is due, and an object without the fields. */
const WRONG = [
  { body: '[]', why: () => 'the answer is a list, not an object' },
  { body: '{"ok":true}', why: (first: string) => `no "${first}"` },
];

describe('the CLI against a server that answers JSON of another shape', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  /** A server answering `request` with `body`, every other request as docsearch (404 for what the table does not expect). */
  async function serve(request: string, body: string): Promise<string> {
    const s = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      req.resume();
      req.on('end', () => {
        const good = docsearchAnswer(req.method ?? 'GET', path);
        const wrong = `${req.method} ${path}` === request;
        res.writeHead(wrong || good !== undefined ? 200 : 404, { 'content-type': 'application/json' });
        res.end(wrong ? body : JSON.stringify(good ?? { error: { code: 'not_found', message: `nothing here for ${req.method} ${path}`, request_id: 'req_test' } }));
      });
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it('every command that reads an answer says the server did not answer as docsearch does: exit 1, the request, what was wrong, nothing on stdout', { timeout: 300_000 }, async () => {
    const runs = COMMANDS.flatMap((c) => WRONG.map((w) => ({ ...c, ...w })));
    const failures: string[] = [];
    // A few at a time: each is a process of its own.
    for (let i = 0; i < runs.length; i += 4) {
      await Promise.all(
        runs.slice(i, i + 4).map(async (r) => {
          const url = await serve(r.request, r.body);
          const argv = r.argv[0] === 'login' ? [...r.argv, '--server', url] : r.argv;
          const env = cliEnv(null, r.argv[0] === 'login' ? {} : { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: TOKEN });
          const res = await runCli(argv, { env, ...(r.input ? { input: r.input } : {}) });
          const want = `${r.says ? `${r.says} ${url}\n` : ''}error: ${r.request}: ${url} did not answer as a docsearch server does (${r.why(r.first)})\nhint: is ${url} a docsearch server? A proxy or another service may be answering at that address\n`;
          if (res.code !== 1 || res.stdout !== '' || res.stderr !== want) {
            failures.push(`docsearch ${r.argv.join(' ')} answered ${r.body}: exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}\nwanted: ${want}`);
          }
        }),
      );
    }
    expect(failures.join('\n')).toBe('');
  });

  it('auth status does not call such a login ok: the line says what the server answered, exit 1', async () => {
    const url = await serve('GET /api/v1/me', '{"ok":true}');
    const res = await runCli(['auth', 'status'], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: TOKEN }) });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`unreachable: GET /api/v1/me: ${url} did not answer as a docsearch server does (no "id")`);
  });

  it('docsearch mcp: a tool whose answer is not docsearch\'s is a tool error saying so, not a failure inside the tool', { timeout: 60_000 }, async () => {
    const url = await serve('GET /api/v1/projects', '{"ok":true}');
    const client = await stdioClient(url, TOKEN);
    try {
      const text = await callError(client, 'list_projects', {});
      expect(text).toBe(`GET /api/v1/projects: ${url} did not answer as a docsearch server does (no "projects") (is ${url} a docsearch server? A proxy or another service may be answering at that address) (not_docsearch)`);
    } finally {
      await client.close();
    }
  });
});
