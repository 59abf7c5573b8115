/**
 * The library the permission matrix runs in, and how it runs one row (test/access/permission-matrix.test.ts runs
 * every row; test/access/access-mutations.test.ts runs some against a deliberately broken build).
 *
 * Each row of docs/permissions.md has a spec in matrix-rows.ts: the request, the documented success status, what
 * shows P or D in a list, and the effect an allowed cell must have. A row's cells are judged so:
 * - a refused or empty cell (`401`, `403`, `404`, `∅`) answers with that status and leaves the library's state as it
 *   was: the whole database is read back after it (matrix-state.ts) and must not differ;
 * - a `404` answers byte for byte what the same request about ids that do not exist answers (ids and request id
 *   normalised), so it tells nothing of what exists;
 * - an allowed cell (`✓`) answers the documented success status, and its effect is read back.
 * The refused cells of a row share one project like P (they must not change it); each allowed cell that changes
 * something gets a project of its own, so a wrongly allowed change cannot spoil the cells after it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCode, pkce, post as oauthPost } from '../auth/oauth-flow.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { httpClient } from '../mcp/mcp-client.js';
import { loggedIn, newKeyOnPage, WebClient } from '../server/web-client.js';
import { changes, rows, type State, type StateReader, stateReader } from './matrix-state.js';
import { type Outcome, type Principal, PRINCIPALS, type Row } from './matrix-table.js';

export const WORD = 'zanzibarite';
const PDF = makePdf([[{ lines: [`The ${WORD} handbook explains how the quarterly audit is run.`, 'Every team files its report by the fifth day.'] }]], { title: 'Handbook' });
/** D of a fresh P: the same bytes each time, which the index has embedded already. */
const NOTE = Buffer.from(`A note on ${WORD} for the team.\n`);
/** Bytes that say PDF and are none: a document that fails, for the retry rows. */
const BROKEN_PDF = Buffer.from('%PDF-1.7\nnot a PDF after all\n');

/** What a row acts on: P and what it holds. A missing target (for the 404 comparison) has ids that do not exist. */
export interface Target {
  /** P: Alice's, shared with Bob (editor), Carol (viewer), the group "team" (editor) and Gina (viewer). */
  project: string;
  /** Bob's member id on P. */
  member: string;
  /** D: a ready document of P. */
  document: string;
  /** T: a document of P in its trash ('' unless asked for). */
  trashed: string;
  /** F: a document of P that failed ('' unless asked for). */
  failed: string;
  /** S: a folder source of P ('' unless asked for). */
  source: string;
  /** K: an API key of Alice's without a project limit ('' unless asked for). */
  key: string;
  /** An account made for the cell, for the admin rows ('' unless asked for). */
  account: string;
  /** A group made for the cell, with Eve in it ('' unless asked for). */
  group: string;
  /** L: P's label "matrix", on D ('' unless asked for). */
  label: string;
  /** V: Alice's saved search shared with P ('' unless asked for). */
  saved: string;
}

/** What a fresh P holds besides D. */
export interface Needs {
  trash?: boolean;
  failed?: boolean;
  source?: boolean | 'paused';
  key?: boolean;
  account?: 'active' | 'disabled';
  group?: boolean;
  label?: boolean;
  saved?: boolean;
}

export type Person = 'alice' | 'bob' | 'carol' | 'dan' | 'eve' | 'frank' | 'gina';
export type User = TestUser & { id: string };

/** Whose account each principal acts with (a key or token of Alice's for the last two). */
export const PERSON: Record<Principal, Person> = {
  owner: 'alice',
  editor: 'bob',
  viewer: 'carol',
  'group member': 'dan',
  'non-member': 'eve',
  admin: 'frank',
  disabled: 'gina',
  'key for another project': 'alice',
  'read-only token': 'alice',
};

/** An answer as the cell judges it; MCP answers are given the status their refusal's code stands for. */
export interface Answer {
  status: number;
  body: any;
  text: string;
  location: string | null;
}

/** Who sends a cell's request, on its surface. */
export interface As {
  principal: Principal;
  user: User;
  /** REST: the principal's credential. */
  token: string;
  /** Web: the person's signed-in browser and its CSRF token. */
  web: WebClient;
  csrf: string;
}

export interface RestRequest {
  method?: string;
  path: string;
  body?: unknown;
  /** Files to POST as multipart (the upload route). */
  files?: { name: string; bytes: Buffer }[];
  fields?: Record<string, string>;
}

export interface WebRequest {
  method?: 'GET' | 'POST';
  path: string;
  /** A form posted urlencoded; `_csrf` is added. */
  form?: Record<string, string | string[]>;
  /** Posted as multipart by the page script (JSON answer), with the CSRF token as a header. */
  multipart?: FormData;
  /** The page script's JSON requests (answered in JSON). */
  json?: boolean;
  /** Posted as JSON by the page script, with the CSRF token as a header. */
  jsonBody?: unknown;
  /** A 303 is followed and the page it leads to read (the answer keeps the 303): for what a flash says. */
  follow?: boolean;
}

export type McpRequest = { tool: string; arguments: Record<string, unknown> } | { list: 'resources' } | { read: string };

/** What an allowed cell's effect check is given. */
export interface Cell {
  m: Matrix;
  t: Target;
  as: As;
  answer: Answer;
  before: State;
  after: State;
}

export interface Spec<R> {
  /** What the cells act on: the shared P (default; the row changes nothing of it), or a fresh P with these. */
  on?: 'shared' | Needs;
  request(t: Target, as: As, m: Matrix): R | Promise<R>;
  /** The documented success status (REST: one of the route's 2xx; MCP: 200 for a result). */
  ok: number;
  /** Whether an answer shows P or D (lists and searches): `∅` when it does not. */
  shows?(a: Answer, t: Target, m: Matrix): boolean;
  /** Throws unless an allowed cell did what it says (read back from the state after it, or the owner's view). */
  effect?(c: Cell): void | Promise<void>;
  /** Puts back, after an allowed cell, what must not stay changed for the rows after it (an e-mail, the sharing policy). */
  undo?(c: Cell): Promise<void>;
}

export type Surface = Row['surface'];

/** The specs of each surface, by operation as the table names it. */
export interface Specs {
  rest: Record<string, Spec<RestRequest>>;
  web: Record<string, Spec<WebRequest>>;
  mcp: Record<string, Spec<McpRequest>>;
}

/** An id like `id` that no row of the library has: same prefix and length. */
function missingId(id: string): string {
  if (!id) return id;
  const m = /^([a-z]+)_(.*)$/.exec(id);
  return m ? `${m[1]}_${'0'.repeat(9)}${'Z'.repeat(m[2]!.length - 9)}` : `${id.slice(0, -1)}Z`;
}

export const missing = (t: Target): Target => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, missingId(v)])) as unknown as Target;

/** An answer with the target's ids and the request id replaced by their names: what a 404 is compared by. */
function normalised(a: Answer, t: Target): string {
  let text = `${a.status} ${a.location ?? ''} ${a.text}`;
  for (const [field, id] of Object.entries(t)) if (id) text = text.replaceAll(id, `{${field}}`);
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{request_id}');
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const at = Math.max(0, i - 40);
  return `«…${a.slice(at, i + 80)}» where a missing id's answer says «…${b.slice(at, i + 80)}»`;
}

export interface MatrixOptions {
  /** Another build's launcher (the mutation check). */
  bin?: string;
}

export class Matrix {
  d!: Daemon;
  users!: Record<Person, User>;
  /** Alice's project Q (the limited key's). */
  q!: string;
  /** P, with D (a PDF), F, T, S and K. */
  shared!: Target;
  state!: StateReader;
  /** A folder under --source-roots that folder sources read (empty: their passes add nothing). */
  sourceDir!: string;
  /** An application every person has connected (Settings → Connected apps). */
  connectedApp!: string;
  /** The daemon's public URL: a host name (localhost), where passkeys are offered. */
  publicUrl!: string;
  private root!: string;
  private readonly bearer = {} as Record<Principal, string>;
  private readonly mcpBearer = {} as Record<Principal, string>;
  private readonly web = {} as Record<Person, { client: WebClient; csrf: string }>;
  private readonly mcp = new Map<Principal, Promise<Client | number>>();
  private made = 0;

  constructor(private readonly specs: Specs) {}

  /** A number no earlier call gave: for names that must differ. */
  next(): number {
    return ++this.made;
  }

  async start(opts: MatrixOptions = {}): Promise<void> {
    this.root = mkdtempSync(join(tmpdir(), 'docsearch-matrix-sources-'));
    this.sourceDir = join(this.root, 'folder');
    mkdirSync(this.sourceDir);
    const port = await freePort();
    this.publicUrl = `http://localhost:${port}`;
    // A mail server that is not there: what would be mailed waits in the outbox (its rows are the sender's to change).
    this.d = await startDaemon({ timeoutMs: 60_000, bin: opts.bin, args: ['--port', String(port), '--public-url', this.publicUrl, '--source-roots', this.root, '--smtp-url', 'smtp://127.0.0.1:9'] });
    this.state = await stateReader(this.d);
    // The first account (the admin) by the operator command; the others through the web, which costs no process each.
    const first = await addUser(this.d);
    const admin = await loggedIn(this.d, first);
    await admin.get('/settings/keys');
    this.web.frank = { client: admin, csrf: admin.csrf };
    const frank: User = { ...first, id: rows(await this.state.snapshot(), 'users').find((u) => u.email === first.email)!.id };
    const people = ['alice', 'bob', 'carol', 'dan', 'eve', 'gina'] as const;
    // One at a time: the admin's page shows each invitation's link once, from the session.
    const joined: { user: User; client: WebClient }[] = [];
    for (const p of people) joined.push(await this.join(`${p}-${process.pid}@example.com`, true));
    this.users = { frank } as Record<Person, User>;
    people.forEach((p, i) => {
      const { user, client } = joined[i]!;
      this.users[p] = user;
      this.web[p] = { client, csrf: client.csrf };
    });
    const { alice, dan, gina } = this.users;
    const team = await admin.post('/admin/groups', { _csrf: admin.csrf, name: 'team', description: '' });
    await admin.post(`${team.location}/members`, { _csrf: admin.csrf, email: dan.email });
    this.q = (await this.ok('Q', api(this.d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Q' } }))).body.id;
    const limited = (await this.ok('limited key', api(this.d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'Q only', project_ids: [this.q] } }))).body.key as string;
    for (const p of PRINCIPALS) this.bearer[p] = this.mcpBearer[p] = this.users[PERSON[p]].apiKey;
    this.bearer['key for another project'] = this.mcpBearer['key for another project'] = limited;
    const reader = await this.registerApp('Matrix reader');
    this.bearer['read-only token'] = await this.token(this.web.alice.client, reader);
    this.mcpBearer['read-only token'] = await this.token(this.web.alice.client, reader, `${this.publicUrl}/mcp`);
    this.connectedApp = await this.registerApp('Connected app');
    for (const person of Object.keys(this.users) as Person[]) await this.connect(this.users[person]);
    // Gina holds a grant on every P, made before she is disabled.
    this.shared = await this.fixture({ trash: true, failed: true, source: true, key: true, label: true, saved: true }, PDF);
    await admin.post(`/admin/users/${gina.id}/disable`, { _csrf: admin.csrf });
  }

  /**
   * An account invited through Admin → Users and joined in a browser of its own (signed in after), quicker than
   * `users add`; with an API key of both scopes made on Settings → API keys when asked.
   */
  private async join(email: string, withKey: boolean): Promise<{ user: User; client: WebClient }> {
    const admin = this.web.frank;
    const page = await admin.client.submit('/admin/users/invite', { _csrf: admin.csrf, email });
    const link = /id="invite-link" readonly value="([^"]+)"/.exec(page.text)?.[1];
    if (!link) throw new Error(`no invitation link for ${email}: ${page.status} ${page.text.slice(0, 300)}`);
    const client = new WebClient(this.d);
    await client.get(link);
    const password = 'correct horse battery staple';
    const joined = await client.post('/invite', { _csrf: client.csrf, token: new URL(link).searchParams.get('token')!, password, password2: password });
    if (joined.status !== 303) throw new Error(`joining as ${email}: ${joined.status}`);
    const id = rows(await this.state.snapshot(), 'users').find((u) => u.email === email)?.id as string | undefined;
    if (!id) throw new Error(`no account ${email} after joining`);
    let apiKey = '';
    if (withKey) {
      await client.get('/settings/keys');
      const made = await client.submit('/settings/keys', { _csrf: client.csrf, name: 'matrix', scopes: ['read:documents', 'write:documents'], expires: 'never' });
      apiKey = newKeyOnPage(made.text) ?? '';
      if (!apiKey) throw new Error(`no key shown for ${email}: ${made.status}`);
    }
    await client.get('/settings/keys');
    return { user: { email, password, apiKey, id }, client };
  }

  /** An application registered by RFC 7591 dynamic registration: a public client, PKCE only. */
  private async registerApp(name: string): Promise<string> {
    const res = await this.ok(
      `register ${name}`,
      api(this.d, '/api/oauth/register', { body: { client_name: name, redirect_uris: ['http://127.0.0.1:9/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] } }),
    );
    return res.body.client_id as string;
  }

  async stop(): Promise<void> {
    for (const c of this.mcp.values()) {
      const client = await c.catch(() => null);
      if (client && typeof client !== 'number') await client.close();
    }
    await this.state?.close();
    await this.d?.stop();
    if (this.root) removeDir(this.root);
  }

  async ok<T extends { status: number; body?: unknown }>(what: string, res: Promise<T>): Promise<T> {
    const r = await res;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  }

  /** The REST API as Alice, who owns every P: the owner's view of what a cell did. */
  owner(path: string, opts: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
    return api(this.d, path, { ...opts, token: this.users.alice.apiKey });
  }

  /** A project like P, with D and what `needs` asks for. */
  async fixture(needs: Needs, document: Buffer = NOTE): Promise<Target> {
    const alice = this.users.alice.apiKey;
    const project = (await this.ok('create P', api(this.d, '/api/v1/projects', { token: alice, body: { name: `Matrix project ${this.next()}` } }))).body.id as string;
    const upload = async (name: string, bytes: Buffer) =>
      (await this.ok(`upload ${name}`, uploadFiles(this.d, alice, [{ name, bytes }], { projectId: project, query: '?wait=true' }))).body.documents[0].id as string;
    const d = await upload(document === PDF ? 'handbook.pdf' : 'note.txt', document);
    const share = (body: object) => this.ok('share P', api(this.d, `/api/v1/projects/${project}/members`, { token: alice, body }));
    const member = (await share({ email: this.users.bob.email, role: 'editor' })).body.id as string;
    await share({ email: this.users.carol.email, role: 'viewer' });
    await share({ group: 'team', role: 'editor' });
    if (!this.shared) await share({ email: this.users.gina.email, role: 'viewer' });
    const t: Target = { project, member, document: d, trashed: '', failed: '', source: '', key: '', account: '', group: '', label: '', saved: '' };
    if (needs.trash) {
      t.trashed = await upload('old.txt', Buffer.from(`An old ${WORD} note, deleted ${this.next()}.\n`));
      await this.ok('delete T', api(this.d, `/api/v1/documents/${t.trashed}`, { method: 'DELETE', token: alice }));
    }
    if (needs.failed) t.failed = await upload('broken.pdf', BROKEN_PDF);
    if (needs.source) t.source = (await this.ok('add S', api(this.d, `/api/v1/projects/${project}/sources`, { token: alice, body: { url: this.sourceUrl(), every: '1d' } }))).body.id;
    if (needs.source === 'paused') await this.ok('pause S', api(this.d, `/api/v1/projects/${project}/sources/${t.source}`, { method: 'PATCH', token: alice, body: { status: 'paused' } }));
    if (needs.key) t.key = (await this.ok('make K', api(this.d, '/api/v1/keys', { token: alice, body: { name: `K ${this.next()}` } }))).body.id;
    if (needs.account) t.account = await this.account(needs.account);
    if (needs.group) t.group = await this.group();
    if (needs.label) {
      await this.ok('label D', api(this.d, `/api/v1/documents/${d}`, { method: 'PATCH', token: alice, body: { labels: ['matrix'] } }));
      const labels = (await this.ok('labels of P', api(this.d, `/api/v1/projects/${project}/labels`, { token: alice }))).body.labels as { id: string }[];
      t.label = labels[0]!.id;
    }
    if (needs.saved) {
      const search = { query: `${WORD} handbook`, filters: { labels: ['matrix'] } };
      t.saved = (await this.ok('save V', api(this.d, '/api/v1/saved-searches', { token: alice, body: { name: `V ${this.next()}`, search, project_id: project } }))).body.id;
    }
    await this.state?.settle();
    return t;
  }

  /** An account made for an admin row, disabled when asked. */
  private async account(state: 'active' | 'disabled'): Promise<string> {
    const { user } = await this.join(`account-${this.next()}@example.com`, false);
    if (state === 'disabled') await this.web.frank.client.post(`/admin/users/${user.id}/disable`, { _csrf: this.web.frank.csrf });
    return user.id;
  }

  /** A group made through Admin → Groups, with Eve in it. */
  private async group(): Promise<string> {
    const admin = this.web.frank;
    const made = await admin.client.post('/admin/groups', { _csrf: admin.csrf, name: `scratch ${this.next()}`, description: '' });
    const id = /^\/admin\/groups\/([^/?#]+)$/.exec(made.location ?? '')?.[1];
    if (!id) throw new Error(`making a group: ${made.status} ${made.location}`);
    await admin.client.post(`/admin/groups/${id}/members`, { _csrf: admin.csrf, email: this.users.eve.email });
    return id;
  }

  /** The person connects the Connected app (an OAuth grant of theirs, listed on Settings → Connected apps). */
  async connect(user: User): Promise<void> {
    const person = (Object.keys(this.users) as Person[]).find((p) => this.users[p].id === user.id)!;
    await this.token(this.web[person].client, this.connectedApp);
  }

  sourceUrl(): string {
    return `file://${this.sourceDir}`;
  }

  /** Runs every cell of a row; what each cell did, as the table writes it (with what went wrong, if anything). */
  async run(row: Row): Promise<Record<Principal, string>> {
    const spec = this.spec(row);
    const got = {} as Record<Principal, string>;
    const cells = PRINCIPALS.filter((p) => row.expected[p] !== '—');
    for (const p of PRINCIPALS) if (row.expected[p] === '—') got[p] = '—';
    const fresh = spec.on && spec.on !== 'shared' ? spec.on : null;
    const refused = cells.filter((p) => row.expected[p] !== '✓');
    if (refused.length > 0) {
      const t = fresh ? await this.fixture(fresh) : this.shared;
      await this.state.settle();
      for (const p of refused) {
        const as = this.as(p);
        const expected = row.expected[p];
        // Built first: a request may need something made for it, which is not the cell's doing.
        const req = await spec.request(t, as, this);
        const absentReq = expected === '404' ? await spec.request(missing(t), as, this) : null;
        const before = await this.state.snapshot();
        const absent = absentReq ? await this.send(row.surface, absentReq, as) : null;
        const answer = await this.send(row.surface, req, as);
        const after = await this.state.snapshot();
        got[p] = this.judge(spec, expected, answer, t, changes(before, after), absent);
      }
    }
    for (const p of cells.filter((c) => row.expected[c] === '✓')) {
      const as = this.as(p);
      const t = fresh ? await this.fixture(fresh) : this.shared;
      const req = await spec.request(t, as, this);
      const before = spec.effect ? await this.state.snapshot() : new Map();
      const answer = await this.send(row.surface, req, as);
      let outcome = this.judge(spec, '✓', answer, t, [], null);
      if (spec.effect) {
        await this.state.settle();
        const after = await this.state.snapshot();
        if (outcome === '✓') {
          const cell = { m: this, t, as, answer, before, after };
          try {
            await spec.effect(cell);
          } catch (err) {
            outcome = `✓ without its effect: ${(err as Error).message.split('\n')[0]}; changed: ${changes(before, after).join('; ') || 'nothing'}`;
          }
          await spec.undo?.(cell);
        }
      }
      got[p] = outcome;
    }
    return got;
  }

  private spec(row: Row): Spec<any> {
    const table = row.surface === 'REST API' ? this.specs.rest : row.surface === 'MCP' ? this.specs.mcp : this.specs.web;
    const spec = table[row.operation];
    if (!spec) throw new Error(`no spec for ${row.surface}: ${row.operation} in test/access/matrix-rows.ts`);
    return spec;
  }

  /** The cell as the table writes it, or what went wrong. */
  private judge(spec: Spec<unknown>, expected: Outcome, a: Answer, t: Target, changed: string[], absent: Answer | null): string {
    let got: string;
    if (a.status === 401 || ((a.status === 302 || a.status === 303) && a.location?.startsWith('/login'))) got = '401';
    else if (a.status === 403 || a.status === 404) got = String(a.status);
    else if (a.status === spec.ok) got = spec.shows && !spec.shows(a, t, this) ? '∅' : '✓';
    else return `${a.status} (documented success: ${spec.ok}) ${a.text.slice(0, 300)}`;
    if (got !== expected) return got === '✓' || got === '∅' ? got : `${got} ${a.text.slice(0, 200)}`;
    if (expected === '✓') return got;
    if (changed.length > 0) return `${got}, but changed ${changed.join('; ')}`;
    if (absent) {
      const [x, y] = [normalised(a, t), normalised(absent, missing(t))];
      if (x !== y) return `404 unlike a missing id's: ${firstDifference(x, y)}`;
    }
    return got;
  }

  as(principal: Principal): As {
    const person = PERSON[principal];
    return { principal, user: this.users[person], token: this.bearer[principal], web: this.web[person].client, csrf: this.web[person].csrf };
  }

  private async send(surface: Surface, req: unknown, as: As): Promise<Answer> {
    if (surface === 'REST API') return this.rest(req as RestRequest, as);
    if (surface === 'MCP') return this.callMcp(req as McpRequest, as);
    return this.page(req as WebRequest, as);
  }

  private async rest(req: RestRequest, as: As): Promise<Answer> {
    const res = req.files
      ? await uploadFiles(this.d, as.token, req.files, { fields: req.fields }).catch((err) => ({ status: 0, body: String(err) }))
      : await api(this.d, req.path, { method: req.method, token: as.token, body: req.body });
    const text = typeof res.body === 'string' ? res.body : (JSON.stringify(res.body) ?? '');
    return { status: res.status, body: res.body, text, location: null };
  }

  private async page(req: WebRequest, as: As): Promise<Answer> {
    const client = as.web;
    let res;
    if (req.multipart) res = await client.request('POST', req.path, req.multipart, { 'x-csrf-token': as.csrf, accept: 'application/json' });
    else if (req.jsonBody !== undefined) res = await this.postJson(client, as.csrf, req.path, req.jsonBody);
    else if (req.form || req.method === 'POST') {
      const form = { _csrf: as.csrf, ...req.form };
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
      res = await client.request('POST', req.path, body, req.json ? { 'x-csrf-token': as.csrf, accept: 'application/json' } : {});
    } else res = await client.request('GET', req.path, undefined, req.json ? { accept: 'application/json' } : {});
    let text = res.text;
    if (req.follow && res.status === 303 && res.location && !res.location.startsWith('/login')) text = (await client.get(res.location)).text;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* a page */
    }
    return { status: res.status, body, text, location: res.location };
  }

  /** A page script's JSON post (the passkey forms). */
  private async postJson(client: WebClient, csrf: string, path: string, body: unknown) {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf };
    headers.cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(this.d.url + path, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual' });
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  /** A passkey of the person's, registered through Settings → Security with a software authenticator; its id. */
  async passkey(as: As): Promise<string> {
    const options = await this.postJson(as.web, as.csrf, '/settings/security/passkeys/options', {});
    if (options.status !== 200) return 'pk_none';
    const response = registrationResponse(JSON.parse(options.text), this.publicUrl);
    const made = await this.postJson(as.web, as.csrf, '/settings/security/passkeys', { response, name: `Key ${this.next()}` });
    if (made.status !== 200) throw new Error(`registering a passkey: ${made.status} ${made.text.slice(0, 300)}`);
    return rows(await this.state.snapshot(), 'passkeys').filter((k) => k.user_id === as.user.id).at(-1)!.id as string;
  }

  /** The person's passkeys removed again (a passkey makes their next sign-in ask for it). */
  async withoutPasskeys(as: As): Promise<void> {
    for (const k of rows(await this.state.snapshot(), 'passkeys').filter((x) => x.user_id === as.user.id)) {
      await as.web.post(`/settings/security/passkeys/${k.id}/remove`, { _csrf: as.csrf, password: as.user.password });
    }
  }

  /** The principal's MCP client on /mcp, or the status its connection was refused with. */
  private mcpClient(principal: Principal): Promise<Client | number> {
    let c = this.mcp.get(principal);
    if (!c) {
      c = httpClient(this.d, this.mcpBearer[principal]).catch(async () => {
        const res = await fetch(`${this.d.url}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.mcpBearer[principal]}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'matrix', version: '1' } } }),
        });
        return res.status;
      });
      this.mcp.set(principal, c);
    }
    return c;
  }

  async ownerMcp(): Promise<Client> {
    const c = await this.mcpClient('owner');
    if (typeof c === 'number') throw new Error(`the owner could not connect to /mcp: ${c}`);
    return c;
  }

  private async callMcp(req: McpRequest, as: As): Promise<Answer> {
    const client = await this.mcpClient(as.principal);
    if (typeof client === 'number') return { status: client, body: null, text: `connecting to /mcp: ${client}`, location: null };
    // A refusal's code, as the tool error's text ends with it (mcp/tool-result.ts) or the protocol error names it. A
    // tool the credential's scopes do not allow is not listed for it, and calling it is refused (insufficient_scope).
    const statusOf = (text: string, code?: number) => (code === -32002 || /\(not_found\)$/.test(text) ? 404 : /\((forbidden|insufficient_scope)\)$/.test(text) ? 403 : 500);
    try {
      if ('tool' in req) {
        const res = await client.callTool({ name: req.tool, arguments: req.arguments });
        const text = ((res.content as { text?: string }[]) ?? []).map((c) => c.text ?? '').join('\n').replace(/^MCP error -?\d+: /, '');
        return res.isError ? { status: statusOf(text), body: null, text, location: null } : { status: 200, body: res.structuredContent, text, location: null };
      }
      const body = 'list' in req ? await client.listResources() : await client.readResource({ uri: req.read });
      return { status: 200, body, text: JSON.stringify(body), location: null };
    } catch (err) {
      const e = err as { code?: number; message?: string };
      const text = String(e.message ?? err);
      return { status: statusOf(text.replace(/^MCP error -?\d+: /, ''), e.code), body: null, text, location: null };
    }
  }

  /** An access token with read:documents only, through the authorization code flow in the person's browser. */
  private async token(browser: WebClient, clientId: string, resource?: string): Promise<string> {
    const { verifier, challenge } = pkce();
    const redirect = 'http://127.0.0.1:9/callback';
    const code = await getCode(browser, { client_id: clientId, redirect_uri: redirect, scope: 'read:documents', state: 's', code_challenge: challenge, code_challenge_method: 'S256', resource });
    const res = await oauthPost(this.d, '/api/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: redirect,
      code_verifier: verifier,
      resource,
    });
    if (res.status !== 200 || res.body.scope !== 'read:documents') throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.access_token as string;
  }

}
