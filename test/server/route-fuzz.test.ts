/**
 * A route-wide probe of the REST API: every operation in /api/v1/openapi.json (and the document's own route) is sent,
 * by a user who owns its objects and by one who does not, requests a hostile or careless client sends — each JSON body
 * field of the wrong type or a hostile string, extra fields named like Object.prototype's members, path parameters that
 * are no ids, odd query strings and headers, methods the path does not take, and broken HTTP framing. Every answer must
 * be a 2xx/3xx/4xx (an error in the documented shape: code, message, details naming the field), none later than a few
 * seconds; a 404 for another user's object must read as one for a missing id; and the daemon answers /health at the
 * end. The two requests that ended the daemon in an earlier round (`?metadata.__proto__=1`, `Content-Encoding:
 * constructor`) were one class — outside names used as keys of plain objects — found by hand; this finds a class.
 *
 * The attacks are not a cross product: each request changes one thing of a valid request (a baseline per operation
 * below), so the one change is what is answered. Operations come from the document: a new one fails the coverage
 * check until its baseline is written here, and its body fields are then fuzzed from its schema.
 */
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { rng } from '../helpers/rng.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/** An answer later than this is a hang: every request here is small, and the daemon answers refusals at once. */
const HANG_MS = 5000;

interface Operation {
  operationId: string;
  parameters?: { name: string; in: 'path' | 'query' }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
}
interface Op {
  id: string;
  method: string;
  template: string;
  pathParams: string[];
  queryParams: string[];
  bodyFields: string[];
  json: boolean;
}

interface Probe {
  caller: string;
  token?: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** What was changed, for the report. */
  what: string;
}
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Fixtures of one user, by name: ids of their objects, and spares for the operations that use one up. */
type Fx = Record<string, string>;

const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
/** Wrong types for any field (a field of that type takes one of them as it is: no harm, it is a valid request). */
const WRONG_TYPES: unknown[] = [42, -1, 1e308, [], [1], {}, null, true];
const HOSTILE_STRINGS = [...PROTO_NAMES, '', ' ', 'x'.repeat(100_000), 'a\u0000b', '\ud800', 'a\udfffb', '..', '%00', '\u202e\u0000'];
/** Inside objects: the wrong types, and operator objects where a filter takes them (`{"$in": […]}`). */
const NESTED_VALUES: unknown[] = [null, 42, {}, [], 'constructor', '\ud800', { $in: 'constructor' }, { $constructor: 1 }, { $in: [{ a: 1 }] }, { toString: 1 }, { $exists: 'constructor' }];
const ELEMENTS: unknown[] = [...PROTO_NAMES, '\ud800', 'x'.repeat(10_000), '', 42, null, {}, [], { constructor: 1 }];
const METADATA_QUERIES = ['{"constructor":{"$in":["x"]}}', '{"a":{"__proto__":1}}', '{"a":{"$constructor":1}}', '{"toString":{"$exists":true}}', '{"__proto__":{"$in":[1]}}', '[]', 'null'];
const PATH_ATTACKS = ['..', '.', '%00', '%2e%2e', '%2E%2E%2Fhealth', '%2F', 'x'.repeat(10_000), 'constructor', '__proto__', 'toString', '%ED%A0%80', '%ZZ', '%20', '%C3%A9', 'a%00b'];
const CONTENT_TYPES = [
  'application/json; charset=latin1',
  'application/json; charset=constructor',
  'application/json; charset="UTF-8"',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/json; boundary=x; q=1',
  'application/json, text/plain',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'constructor',
  '',
];
const ACCEPTS = ['text/html', 'application/xml', '*/*;q=0', 'constructor', 'application/json;q=foo', 'text/event-stream'];
const ODD_HEADERS: Record<string, string>[] = [
  { 'if-none-match': '*' },
  { 'if-none-match': 'W/"x", "constructor"' },
  { 'if-modified-since': 'constructor' },
  { 'if-modified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' },
  { 'x-request-id': 'x'.repeat(200) },
  { 'x-request-id': '../constructor' },
  { 'accept-encoding': 'constructor, __proto__;q=1' },
  { 'accept-language': 'constructor' },
  { cookie: '__proto__=1; constructor=2; session=x' },
  { 'x-forwarded-for': 'constructor' },
  { origin: 'null' },
];
const RANGES = ['bytes=0-0', 'bytes=-1', 'bytes=5-1', 'bytes=0-', 'bytes=999999999-', 'bytes=-0', `bytes=${'0-0,'.repeat(500)}0-0`, 'bytes=constructor', 'items=0-1', 'bytes=0-1, 1-2'];

/** Every object (not array) inside a value, with its path of keys. */
function objectsIn(value: Record<string, unknown>, path: string[] = []): [string[], Record<string, unknown>][] {
  return Object.entries(value).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? [[[...path, k], v as Record<string, unknown>] as [string[], Record<string, unknown>], ...objectsIn(v as Record<string, unknown>, [...path, k])] : []));
}

/** A copy of `value` with `path` set to `v`; keys as own properties (`constructor` too). */
function setAt(value: Record<string, unknown>, path: string[], v: unknown): Record<string, unknown> {
  const [key, ...rest] = path;
  const inner = value[key!];
  return { ...value, [key!]: rest.length === 0 ? v : setAt(inner && typeof inner === 'object' && Object.hasOwn(value, key!) ? (inner as Record<string, unknown>) : {}, rest, v) };
}

describe('route fuzz: every /api/v1 route, hostile input', () => {
  let d: Daemon;
  let admin: TestUser;
  let owner: TestUser;
  let other: TestUser;
  const fx: Record<'admin' | 'owner' | 'other', Fx> = { admin: {}, owner: {}, other: {} };
  let ops: Op[] = [];
  let counter = 0;
  const fresh = (what: string) => `${what} ${++counter}`;
  // Where the folder sources are: the sources allowed (--source-roots), empty, under the run's temp folder.
  const roots = mkdtempSync(join(tmpdir(), 'fuzz-sources-'));

  const call = async (u: TestUser, path: string, body?: unknown, method?: string) => {
    const res = await api(d, path, { token: u.apiKey, body, method });
    if (res.status >= 300) throw new Error(`${method ?? (body ? 'POST' : 'GET')} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const uploadOne = async (u: TestUser, projectId: string, name: string) => {
    const text = `${name}: harbour notes, fuzzed ${++counter}`;
    // A PDF where a thumbnail is asked for: a text has none (404), and the thumbnail route's own code would go unprobed.
    const bytes = name.endsWith('.pdf') ? makePdf([[{ lines: [text] }]]) : Buffer.from(text);
    const res = await uploadFiles(d, u.apiKey, [{ name, bytes }], { projectId, query: '?wait=true' });
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.documents[0].id as string;
  };

  /** How each fixture is made, again after an operation has used one up. */
  const makers: Record<string, (u: TestUser, f: Fx) => Promise<string>> = {
    delProject: async (u) => (await call(u, '/api/v1/projects', { name: fresh('to delete') })).id,
    xferProject: async (u) => (await call(u, '/api/v1/projects', { name: fresh('to transfer') })).id,
    delLabel: async (u, f) => (await call(u, `/api/v1/projects/${f.project}/labels`, { name: fresh('gone') })).id,
    delSaved: async (u) => (await call(u, '/api/v1/saved-searches', { name: fresh('gone'), search: { query: 'harbour' } })).id,
    delSource: async (u, f) => (await call(u, `/api/v1/projects/${f.project}/sources`, { url: `file://${f.folder}`, every: '1d' })).id,
    delKey: async (u) => (await call(u, '/api/v1/keys', { name: fresh('spare') })).id,
    delDoc: async (u, f) => uploadOne(u, f.project!, `${fresh('doomed')}.txt`),
    delTrashed: async (u, f) => {
      const id = await uploadOne(u, f.project!, `${fresh('trashed')}.txt`);
      await call(u, `/api/v1/documents/${id}`, undefined, 'DELETE');
      return id;
    },
    resTrashed: async (u, f) => makers.delTrashed!(u, f),
    delMember: async (u, f) => (await call(u, `/api/v1/projects/${f.shared}/members`, { email: admin.email, role: 'viewer' })).id,
    // The admin's: accounts, groups, invitations.
    delUser: async () => (await addUser(d)).email,
    delGroup: async (u) => (await call(u, '/api/v1/admin/groups', { name: fresh('gone group') })).id,
    groupUser: async (u, f) => {
      await call(u, `/api/v1/admin/groups/${f.group}/members`, { user: f.victim });
      return f.victim!;
    },
    delInvitation: async (u) => (await call(u, '/api/v1/admin/invitations', { emails: [`${fresh('invited').replace(' ', '-')}@example.com`], send: false })).invitations[0].id,
  };

  async function userFixtures(u: TestUser, name: string): Promise<Fx> {
    const f: Fx = { folder: join(roots, name) };
    mkdirSync(f.folder!, { recursive: true });
    f.project = (await call(u, '/api/v1/projects', { name: `${name} main` })).id;
    f.label = (await call(u, `/api/v1/projects/${f.project}/labels`, { name: 'fuzz' })).id;
    f.saved = (await call(u, '/api/v1/saved-searches', { name: `${name} search`, search: { query: 'harbour' }, project_id: f.project })).id;
    f.source = (await call(u, `/api/v1/projects/${f.project}/sources`, { url: `file://${f.folder}`, every: '1d' })).id;
    f.key = (await call(u, '/api/v1/keys', { name: 'listed' })).id;
    f.doc = await uploadOne(u, f.project!, 'harbour.pdf');
    f.shared = (await call(u, '/api/v1/projects', { name: `${name} shared` })).id;
    for (const kind of ['delProject', 'xferProject', 'delLabel', 'delSaved', 'delSource', 'delKey', 'delDoc', 'delTrashed', 'resTrashed', 'delMember']) f[kind] = await makers[kind]!(u, f);
    return f;
  }

  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d); // the first account: the library's admin
      let victim: TestUser;
      let spare: TestUser;
      [owner, other, victim, spare] = await Promise.all([addUser(d), addUser(d), addUser(d), addUser(d)]);
      const doc = (await api(d, '/api/v1/openapi.json', { token: owner.apiKey })).body as { paths: Record<string, Record<string, Operation>> };
      ops = Object.entries(doc.paths).flatMap(([template, byMethod]) =>
        Object.entries(byMethod).map(([method, op]) => {
          const json = op.requestBody?.content['application/json']?.schema;
          return {
            id: op.operationId,
            method: method.toUpperCase(),
            template,
            pathParams: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
            queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
            bodyFields: Object.keys(json?.properties ?? {}),
            json: json !== undefined,
          };
        }),
      );
      ops.push({ id: 'openapi', method: 'GET', template: '/api/v1/openapi.json', pathParams: [], queryParams: [], bodyFields: [], json: false });
      [fx.owner, fx.other] = await Promise.all([userFixtures(owner, 'owner'), userFixtures(other, 'other')]);
      const a: Fx = {};
      a.quotaProject = (await call(admin, '/api/v1/projects', { name: 'quota' })).id;
      a.victim = victim.email;
      a.delUser = spare.email;
      a.group = (await call(admin, '/api/v1/admin/groups', { name: 'fuzzers' })).id;
      for (const kind of ['delGroup', 'groupUser', 'delInvitation']) a[kind] = await makers[kind]!(admin, a);
      fx.admin = a;
      // The first search loads the model: not a hang of any probe.
      await call(owner, '/api/v1/search', { query: 'harbour' });
    },
    { args: ['--source-roots', roots], setupTimeoutMs: 120_000 },
  );

  /** Path parameters of a valid request, from the fixtures of the objects' owner. */
  const TARGETS: Record<string, (f: Fx) => Record<string, string>> = {
    'projects.get': (f) => ({ id: f.project! }),
    'projects.update': (f) => ({ id: f.project! }),
    'projects.delete': (f) => ({ id: f.delProject! }),
    'projects.members.list': (f) => ({ id: f.shared! }),
    'projects.members.add': (f) => ({ id: f.shared! }),
    'projects.members.remove': (f) => ({ id: f.shared!, member_id: f.delMember! }),
    'projects.transfer': (f) => ({ id: f.xferProject! }),
    'labels.list': (f) => ({ id: f.project! }),
    'labels.create': (f) => ({ id: f.project! }),
    'labels.update': (f) => ({ id: f.project!, label_id: f.label! }),
    'labels.delete': (f) => ({ id: f.project!, label_id: f.delLabel! }),
    'saved_searches.get': (f) => ({ id: f.saved! }),
    'saved_searches.rename': (f) => ({ id: f.saved! }),
    'saved_searches.delete': (f) => ({ id: f.delSaved! }),
    'sources.list': (f) => ({ id: f.project! }),
    'sources.create': (f) => ({ id: f.project! }),
    'sources.get': (f) => ({ id: f.project!, sid: f.source! }),
    'sources.update': (f) => ({ id: f.project!, sid: f.source! }),
    'sources.delete': (f) => ({ id: f.project!, sid: f.delSource! }),
    'sources.sync': (f) => ({ id: f.project!, sid: f.source! }),
    'keys.delete': (f) => ({ id: f.delKey! }),
    'documents.get': (f) => ({ id: f.doc! }),
    'documents.update': (f) => ({ id: f.doc! }),
    'documents.delete': (f) => ({ id: f.delDoc! }),
    'documents.file': (f) => ({ id: f.doc! }),
    'documents.text': (f) => ({ id: f.doc! }),
    'documents.thumbnail': (f) => ({ id: f.doc! }),
    'documents.retry': (f) => ({ id: f.doc! }),
    'trash.restore': (f) => ({ id: f.resTrashed! }),
    'trash.purge': (f) => ({ id: f.delTrashed! }),
    'admin.users.get': (f) => ({ user: f.victim! }),
    'admin.users.update': (f) => ({ user: f.victim! }),
    'admin.users.delete': (f) => ({ user: f.delUser! }),
    'admin.users.disable': (f) => ({ user: f.victim! }),
    'admin.users.enable': (f) => ({ user: f.victim! }),
    'admin.users.reset_link': (f) => ({ user: f.victim! }),
    'admin.projects.update': (f) => ({ project: f.quotaProject! }),
    'admin.invitations.revoke': (f) => ({ id: f.delInvitation! }),
    'admin.groups.get': (f) => ({ group: f.group! }),
    'admin.groups.delete': (f) => ({ group: f.delGroup! }),
    'admin.groups.members.add': (f) => ({ group: f.group! }),
    'admin.groups.members.remove': (f) => ({ group: f.group!, user: f.groupUser! }),
  };
  /** The fixture an operation's success uses up: made again after it. */
  const SPENDS: Record<string, string> = {
    'projects.delete': 'delProject',
    'projects.members.remove': 'delMember',
    'projects.transfer': 'xferProject',
    'labels.delete': 'delLabel',
    'saved_searches.delete': 'delSaved',
    'sources.delete': 'delSource',
    'keys.delete': 'delKey',
    'documents.delete': 'delDoc',
    'trash.restore': 'resTrashed',
    'trash.purge': 'delTrashed',
    'admin.users.delete': 'delUser',
    'admin.invitations.revoke': 'delInvitation',
    'admin.groups.delete': 'delGroup',
    'admin.groups.members.remove': 'groupUser',
  };
  /** A valid JSON body of each operation that takes one; ids from the fixtures of the objects' owner. */
  const BODIES: Record<string, (f: Fx) => Record<string, unknown>> = {
    'projects.create': () => ({ name: fresh('fuzzed'), description: 'd', metadata: { team: 'ops' } }),
    'projects.update': () => ({ description: 'fuzzed', metadata: { team: 'ops' }, language: null }),
    'projects.members.add': () => ({ email: admin.email, role: 'viewer' }),
    'projects.transfer': () => ({ email: admin.email }),
    'labels.create': () => ({ name: fresh('label'), color: 'red' }),
    'labels.update': () => ({ color: 'blue' }),
    'saved_searches.create': (f) => ({ name: fresh('saved'), search: { query: 'harbour', filters: { labels: ['fuzz'], metadata: { team: 'ops' } } }, project_id: f.project }),
    'saved_searches.rename': () => ({ name: fresh('renamed') }),
    'sources.create': (f) => ({ url: `file://${f.folder}`, every: '1d', options: {}, labels: ['fuzz'] }),
    'sources.update': () => ({ every: '2d', labels: ['fuzz'] }),
    'sources.sync': () => ({ confirm: false }),
    'keys.create': (f) => ({ name: fresh('key'), scopes: ['read:documents'], project_ids: [f.project], expires_in_days: 1 }),
    'documents.update': () => ({ filename: 'harbour.pdf', labels: { add: ['fuzz'] }, metadata: { team: 'ops' } }),
    search: (f) => ({ query: 'harbour', limit: 3, project_ids: [f.project], filters: { labels: ['fuzz'], metadata: { team: 'ops' } }, facets: ['label'] }),
    'admin.users.update': () => ({ quota_bytes: null }),
    'admin.users.reset_link': () => ({ send: false }),
    'admin.projects.update': () => ({ quota_bytes: null }),
    'admin.invitations.create': () => ({ emails: [`${fresh('invited').replace(' ', '-')}@example.com`], send: false }),
    'admin.groups.create': () => ({ name: fresh('group'), description: 'g' }),
    'admin.groups.members.add': (f) => ({ user: f.victim }),
    'admin.mail.test': () => ({ to: admin.email }),
  };
  /** Baselines the daemon refuses by design here, with the status: nothing else of theirs is reached. */
  const REFUSED_BASELINES: Record<string, number> = {
    'admin.mail.test': 409, // no --smtp-url: still validated first
    'documents.retry': 409, // only a failed document is retried: none fails on purpose here
  };
  /** Query parameters of a valid request. */
  const QUERIES: Record<string, (f: Fx) => Record<string, string>> = {
    'projects.list': () => ({ limit: '5' }),
    'labels.list': () => ({ q: 'fu', limit: '5' }),
    'documents.list': (f) => ({ project_id: f.project!, labels: 'fuzz', sort: '-uploaded', limit: '5' }),
    'documents.text': () => ({ limit: '5' }),
    'trash.list': (f) => ({ project_id: f.project! }),
    'audit.list': () => ({ limit: '5', type: 'project.create' }),
    'admin.mail.list': () => ({ status: 'queued', limit: '5' }),
  };

  const isAdminOp = (op: Op) => op.template.startsWith('/api/v1/admin/') || op.id === 'audit.list';
  const fixturesFor = (op: Op) => (isAdminOp(op) ? fx.admin : fx.owner);
  const mainCaller = (op: Op): [string, TestUser] => (isAdminOp(op) ? ['admin', admin] : ['owner', owner]);
  /** An id of the same shape that names nothing: a 404 for it is the answer another user's object must get. */
  const missing = (v: string) => (/^[a-z]{2,5}_[A-Za-z0-9]{12,}$/.test(v) ? `${v.slice(0, -6)}zzzzzz` : v);
  const missingAll = (f: Fx) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, missing(v)]));

  const pathOf = (op: Op, params: Record<string, string>, raw = false) =>
    op.template.replace(/\{(\w+)\}/g, (_, name: string) => (raw ? params[name]! : encodeURIComponent(params[name]!)));
  const queryOf = (q: Record<string, string>) => {
    const s = new URLSearchParams(q).toString();
    return s ? `?${s}` : '';
  };
  const baseline = (op: Op, f: Fx) => ({
    path: pathOf(op, TARGETS[op.id]?.(f) ?? {}) + queryOf(QUERIES[op.id]?.(f) ?? {}),
    body: BODIES[op.id]?.(f),
  });
  const json = (value: unknown) => JSON.stringify(value);

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  /** One request through node:http, exactly as given (no normalising of the path); status 0 for no answer in HANG_MS. */
  function send(p: Probe): Promise<Answer> {
    return new Promise((resolve) => {
      const headers: Record<string, string> = { ...(p.token ? { authorization: `Bearer ${p.token}` } : {}), ...p.headers };
      if (p.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        headers['content-length'] ??= String(Buffer.byteLength(p.body));
      }
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      // host and path apart: a URL would have its dot segments resolved (`/members/..` sent as the project's own path).
      const { hostname, port } = new URL(d.url);
      const req = httpRequest({ hostname, port, path: p.path, method: p.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', () => resolve({ status: -1, headers: {}, text: 'response cut' }));
      });
      const timer = setTimeout(() => {
        req.destroy();
        resolve({ status: 0, headers: {}, text: '' });
      }, HANG_MS);
      req.on('error', (err) => {
        clearTimeout(timer);
        resolve({ status: -1, headers: {}, text: `connection error: ${err.message}` });
      });
      req.end(p.body);
    });
  }

  /** Bytes over a connection of their own; every status line that comes back, until the server closes or HANG_MS pass. */
  function sendRaw(head: string, body: Buffer | string, opts: { halfClose?: boolean; afterContinue?: Buffer | string } = {}): Promise<{ statuses: number[]; text: string; closed: boolean }> {
    const url = new URL(d.url);
    return new Promise((resolve) => {
      let text = '';
      let continued = false;
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(head);
        if (body.length) sock.write(body);
        if (opts.halfClose) sock.end();
      });
      const done = (closed: boolean) => {
        clearTimeout(timer);
        sock.destroy();
        resolve({ statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), text, closed });
      };
      sock.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        if (opts.afterContinue !== undefined && !continued && /^HTTP\/1\.1 100 /.test(text)) {
          continued = true;
          sock.end(opts.afterContinue);
        }
      });
      sock.on('close', () => done(true));
      sock.on('error', () => undefined);
      const timer = setTimeout(() => done(false), HANG_MS);
    });
  }

  const failures: string[] = [];
  /** Requests sent (through node:http, and over raw sockets): the probe ran, not a list of nothing. */
  const stats = { requests: 0, raw: 0 };
  const fail = (p: Pick<Probe, 'caller' | 'method' | 'path' | 'what'>, why: string): void => void failures.push(`${p.caller} ${p.method} ${p.path.length > 160 ? `${p.path.slice(0, 160)}…` : p.path} [${p.what}]: ${why}`);

  const CODES: Record<number, string[]> = {
    400: ['invalid_request'],
    401: ['unauthorized'],
    403: ['insufficient_scope', 'forbidden'],
    404: ['not_found'],
    405: ['method_not_allowed'],
    409: ['conflict'],
    413: ['payload_too_large'],
    415: ['unsupported_media_type'],
    416: ['range_not_satisfiable'],
  };
  /** Raw answers (files, thumbnails) and 204s are not JSON; everything else is, errors in the documented shape. */
  const RAW_ROUTES = /\/(file|thumbnail)$/;

  /** The documented answer: a status below 500 within HANG_MS, errors as {error: {code, message, details?, request_id}}. */
  function judge(p: Probe, a: Answer): void {
    stats.requests++;
    if (a.status === 0) return fail(p, `no answer within ${HANG_MS} ms`);
    if (a.status === -1) return fail(p, a.text);
    if (a.status >= 500) return fail(p, `${a.status} ${a.text.slice(0, 300)}`);
    if (p.method === 'HEAD' || a.status < 400) {
      const type = String(a.headers['content-type'] ?? '');
      if (p.method !== 'HEAD' && a.status >= 200 && a.status < 300 && a.status !== 204 && !RAW_ROUTES.test(p.path.split('?')[0]!) && !type.startsWith('application/json')) {
        fail(p, `${a.status} answered as ${type || 'no content type'}`);
      }
      return;
    }
    let body: { error?: { code?: unknown; message?: unknown; request_id?: unknown; details?: unknown } };
    try {
      body = JSON.parse(a.text);
    } catch {
      return fail(p, `${a.status} with a body that is not JSON (${String(a.headers['content-type'])}): ${a.text.slice(0, 200)}`);
    }
    const e = body.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || typeof e.request_id !== 'string') return fail(p, `${a.status} not in the error shape: ${a.text.slice(0, 300)}`);
    if (CODES[a.status] && !CODES[a.status]!.includes(e.code)) fail(p, `${a.status} with code ${e.code}`);
    if (a.status === 405 && !a.headers.allow) fail(p, '405 without Allow');
    for (const h of ['etag', 'accept-ranges', 'last-modified']) if (a.headers[h]) fail(p, `${a.status} error carries ${h}`);
    // docs/api.md: field errors name the path, and details lists every issue as {path, message}.
    const named = /^((?:body|query|params)(?:\.[^:\s]+)?): /.exec(e.message)?.[1] ?? / in ((?:body|query|params)\S*)$/.exec(e.message)?.[1];
    if (named) {
      const details = e.details as { path?: unknown; message?: unknown }[] | undefined;
      if (!Array.isArray(details) || !details.every((x) => typeof x.path === 'string' && typeof x.message === 'string')) fail(p, `${a.status} "${e.message}" without details [{path, message}]`);
      else if (!details.some((x) => x.path === named)) fail(p, `${a.status} "${e.message}": details do not name ${named}: ${json(details)}`);
    }
  }

  async function probe(p: Probe, op?: Op, spends?: { user: TestUser; f: Fx }): Promise<Answer> {
    const a = await send(p);
    judge(p, a);
    // A success used up its object: make another, so that the next probe meets a valid request again.
    if (op && spends && a.status >= 200 && a.status < 300 && SPENDS[op.id]) {
      const kind = SPENDS[op.id]!;
      spends.f[kind] = await makers[kind]!(spends.user, spends.f);
    }
    return a;
  }

  /** The requests that change one thing of a valid request of `op`, as `caller` with the fixtures `f`. */
  function* attacks(op: Op, f: Fx, random: () => number): Generator<{ path: string; method?: string; body?: string | Buffer; headers?: Record<string, string>; what: string }> {
    const base = baseline(op, f);
    const body = base.body === undefined ? undefined : json(base.body);
    const [rawPath, rawQuery = ''] = base.path.split('?');
    const q = rawQuery ? `?${rawQuery}` : '';
    const destructive = SPENDS[op.id] !== undefined;
    // A sample of the variants a route is likely to answer alike (fewer where a success uses an object up): the run stays short.
    const sample = <T,>(xs: T[], n: number) => [...xs].sort(() => random() - 0.5).slice(0, destructive ? Math.min(n, 2) : n);

    yield { path: base.path, body, what: 'baseline' };
    // Path parameters that are not ids, one at a time.
    const params = TARGETS[op.id]?.(f) ?? {};
    for (const name of op.pathParams) {
      for (const attack of PATH_ATTACKS) yield { path: pathOf(op, { ...params, [name]: attack }, true) + q, body, what: `params.${name}=${attack.slice(0, 20)}` };
      yield { path: pathOf(op, { ...params, [name]: params[name]!.toUpperCase() }) + q, body, what: `params.${name} upper case` };
    }
    // Query parameters: each declared one odd, and names from Object.prototype.
    const query = QUERIES[op.id]?.(f) ?? {};
    for (const name of op.queryParams) {
      const rest = new URLSearchParams(Object.entries(query).filter(([k]) => k !== name)).toString();
      const and = rest ? `${rest}&` : '';
      const values = name === 'metadata' ? METADATA_QUERIES.map((m) => `metadata=${encodeURIComponent(m)}`) : [];
      for (const raw of [...values, `${name}=`, `${name}=1&${name}=2`, `${name}=%00`, `${name}=%ED%A0%80`, `${name}=%ZZ`, `${name}[]=1`, `${name}[constructor]=1`, `${name}=${'x'.repeat(10_000)}`, ...sample(PROTO_NAMES, 3).map((v) => `${name}=${v}`)]) {
        yield { path: `${rawPath}?${and}${raw}`, body, what: `query ${raw.slice(0, 30)}` };
      }
    }
    const extras = [...PROTO_NAMES.map((n) => `${n}=1`), '__proto__[admin]=1', 'constructor[prototype][x]=1', 'a=%00', '=1', '&&', '%ZZ=1'];
    // Filters by metadata key (a list's): keys and operators named like Object's members.
    const filters = !op.queryParams.includes('metadata') ? [] : ['metadata.__proto__=1', 'metadata.constructor=1', 'metadata.constructor.$in=a,b', 'metadata.toString.$gt=1', 'metadata.a.$constructor=1', 'metadata.a.$__proto__=1', 'metadata.__proto__.$exists=true', 'metadata.hasOwnProperty.$exists=constructor'];
    for (const raw of [...sample(extras, 4), ...filters]) yield { path: `${base.path}${q ? '&' : '?'}${raw}`, body, what: `query extra ${raw}` };
    // JSON bodies: each field of the wrong type or a hostile string, nested fields of the baseline too, extra fields.
    if (op.json) {
      const b = base.body ?? {};
      for (const field of op.bodyFields) {
        for (const v of [...WRONG_TYPES, ...HOSTILE_STRINGS.filter(() => random() < 0.4)]) yield { path: base.path, body: json({ ...b, [field]: v }), what: `body.${field}=${json(v).slice(0, 24)}` };
        // A list of one odd item (a search's facets, a key's scopes, an invitation's e-mails): what a list's items are looked up by.
        for (const v of ELEMENTS.filter(() => random() < 0.5)) yield { path: base.path, body: json({ ...b, [field]: [v] }), what: `body.${field}=[${json(v).slice(0, 20)}]` };
      }
      // Inside the baseline's objects (a search's filters, their metadata, a project's metadata), at every depth.
      for (const [path, inner] of objectsIn(b)) {
        for (const key of [...Object.keys(inner), ...PROTO_NAMES]) {
          for (const v of NESTED_VALUES.filter(() => random() < 0.5)) yield { path: base.path, body: json(setAt(b, [...path, key], v)), what: `body.${[...path, key].join('.')}=${json(v).slice(0, 24)}` };
        }
        const text = json(setAt(b, [...path, 'MARK'], 1)).replace('"MARK":1', '"__proto__":{"admin":true}');
        yield { path: base.path, body: text, what: `body.${path.join('.')}.__proto__ as JSON text` };
      }
      for (const name of PROTO_NAMES) {
        yield { path: base.path, body: json({ ...b, [name]: 1 }), what: `body extra ${name}` };
        yield { path: base.path, body: json({ [name]: { admin: true }, ...b }), what: `body extra ${name} object` };
      }
      for (const text of ['[]', '"x"', 'null', '1', '{', '{"a":1,"a":2}', '  ', '\ufeff{}', '{"__proto__":{"admin":true}}', '[[[[[[[[[[]]]]]]]]]]', '{"a":' + '['.repeat(100) + ']'.repeat(100) + '}']) {
        yield { path: base.path, body: text, what: `body ${text.slice(0, 20)}` };
      }
      for (const type of sample(CONTENT_TYPES, 4)) yield { path: base.path, body, headers: { 'content-type': type }, what: `Content-Type: ${type}` };
      for (const coding of sample([...PROTO_NAMES, 'gzip', 'gzip, br', 'identity'], 3)) yield { path: base.path, body, headers: { 'content-encoding': coding }, what: `Content-Encoding: ${coding}` };
      // A body on a JSON route that is larger than the limit.
      yield { path: base.path, body: json({ ...b, pad: 'x'.repeat(1_100_000) }), what: 'body over 1 MiB' };
    } else if (op.method !== 'GET' && op.id !== 'upload') {
      // A route that takes no body: a body anyway.
      for (const text of ['{"constructor":1}', '[]', '{']) yield { path: base.path, body: text, what: `unexpected body ${text}` };
    }
    for (const accept of sample(ACCEPTS, 2)) yield { path: base.path, body, headers: { accept }, what: `Accept: ${accept}` };
    for (const headers of sample(ODD_HEADERS, 4)) yield { path: base.path, body, headers, what: `headers ${json(headers).slice(0, 40)}` };
    if (op.method === 'GET') for (const range of RAW_ROUTES.test(op.template) ? RANGES : RANGES.slice(0, 3)) yield { path: base.path, headers: { range, 'if-range': 'constructor' }, what: `Range: ${range.slice(0, 24)}` };
  }

  const credentialVariants = (key: string) => [`Bearer ${key}x`, 'Bearer constructor', `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer  ${key}`, `bearer ${key}`, `Bearer ${key} extra`, `Bearer ${'x'.repeat(5000)}`, 'Bearer'];

  it('lists every operation, each with a baseline this probe can send', () => {
    expect(ops.length).toBeGreaterThan(50);
    const gaps: string[] = [];
    for (const op of ops) {
      if (op.pathParams.length && !TARGETS[op.id]) gaps.push(`${op.id}: no TARGETS entry for ${op.pathParams.join(', ')}`);
      if (op.json && !BODIES[op.id]) gaps.push(`${op.id}: no BODIES entry`);
      // Optional parameters a valid request may leave out (a thumbnail's page, keep_documents, transfer_to; the upload's are its own test).
      if (op.queryParams.length && !QUERIES[op.id] && !['sources.delete', 'documents.thumbnail', 'upload', 'admin.users.delete'].includes(op.id)) gaps.push(`${op.id}: no QUERIES entry`);
    }
    expect(gaps).toEqual([]);
  });

  it('answers every changed request with a 2xx/3xx/4xx in the documented shape, without a hang', async () => {
    failures.length = 0;
    const random = rng(156);
    for (const op of ops) {
      if (op.id === 'upload') continue; // multipart: its own test below
      const [name, user] = mainCaller(op);
      const f = fixturesFor(op);
      for (const a of attacks(op, f, random)) {
        const answer = await probe({ caller: name, token: user.apiKey, method: a.method ?? op.method, path: a.path, body: a.body, headers: a.headers, what: a.what }, op, { user, f });
        // The baseline must be taken, or every change of it would only meet the refusal the baseline already gets.
        if (a.what === 'baseline' && answer.status >= 300 && REFUSED_BASELINES[op.id] !== answer.status) fail({ caller: name, method: op.method, path: a.path, what: 'baseline' }, `${answer.status} ${answer.text.slice(0, 200)}`);
      }
      // The same changes from a user who owns none of it: a sample (they stop at the same checks).
      for (const a of attacks(op, f, random)) {
        if (random() > 0.1 && a.what !== 'baseline') continue;
        const answer = await probe({ caller: 'other', token: other.apiKey, method: op.method, path: a.path, body: a.body, headers: a.headers, what: a.what });
        if (op.pathParams.length && answer.status >= 200 && answer.status < 300) fail({ caller: 'other', method: op.method, path: a.path, what: a.what }, `${answer.status}: another user's object was served`);
      }
      for (const authorization of credentialVariants(user.apiKey).filter(() => random() < 0.3)) {
        const base = baseline(op, f);
        await probe({ caller: name, method: op.method, path: base.path, body: base.body === undefined ? undefined : json(base.body), headers: { authorization }, what: `Authorization: ${authorization.slice(0, 20)}` }, op, { user, f });
      }
    }
    expect(failures, `${failures.length} of ${stats.requests} answers`).toEqual([]);
  }, 240_000);

  it('answers a method a path does not take with 405 and Allow, HEAD as GET, OPTIONS with 204', async () => {
    failures.length = 0;
    const byPath = new Map<string, Op[]>();
    for (const op of ops) byPath.set(op.template, [...(byPath.get(op.template) ?? []), op]);
    for (const [, sameOps] of byPath) {
      const op = sameOps[0]!;
      const path = baseline(op, fixturesFor(op)).path;
      const taken = sameOps.map((o) => o.method);
      for (const method of ['HEAD', 'OPTIONS', 'PUT', 'TRACE', 'PATCH', 'DELETE', 'POST', 'GET', 'PROPFIND', 'CONNECT']) {
        if (taken.includes(method) && method !== 'HEAD') continue;
        if (method === 'CONNECT') continue; // not a request on a path (RFC 9110 §9.3.6): Node's parser takes it as a tunnel
        const a = await probe({ caller: 'owner', token: owner.apiKey, method, path, what: `method ${method}` });
        if (method === 'OPTIONS' && (a.status !== 204 || !a.headers.allow)) fail({ caller: 'owner', method, path, what: 'OPTIONS' }, `${a.status}, Allow ${String(a.headers.allow)}`);
        if (method === 'HEAD' && !taken.includes('GET') && a.status !== 405) fail({ caller: 'owner', method, path, what: 'HEAD' }, `${a.status} where GET is not taken`);
        // docs/api.md: HEAD answers every GET route with the GET's status.
        if (method === 'HEAD' && taken.includes('GET')) {
          const got = await probe({ caller: 'owner', token: owner.apiKey, method: 'GET', path, what: 'GET beside HEAD' });
          if (got.status !== a.status) fail({ caller: 'owner', method, path, what: 'HEAD' }, `${a.status} where GET answers ${got.status}`);
        }
        if (!taken.includes(method) && !['HEAD', 'OPTIONS'].includes(method) && a.status !== 405) fail({ caller: 'owner', method, path, what: 'not taken' }, `${a.status}, not 405`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it("answers another user's object exactly as a missing one, by each of its ids", async () => {
    failures.length = 0;
    const ID = /\b[a-z]{2,5}_[A-Za-z0-9]{12,}\b/;
    for (const op of ops) {
      // Whose ids are in its path, or in its body or query (a search's project_ids, a list's project_id).
      const refers = op.pathParams.length > 0 || ID.test(json(BODIES[op.id]?.(fx.owner) ?? {})) || ID.test(json(QUERIES[op.id]?.(fx.owner) ?? {}));
      if (!refers || isAdminOp(op)) continue;
      // [caller, whose objects]: other → owner's, owner → other's; and the caller's own project with the other's child.
      const pairs: [string, TestUser, Fx, Fx][] = [
        ['other', other, fx.owner, fx.other],
        ['owner', owner, fx.other, fx.owner],
      ];
      for (const [name, user, theirs, mine] of pairs) {
        const variants: [string, Fx][] = [['all theirs', theirs]];
        // A member is named by its user's id: no one's object but the account's, which may be a member of both projects.
        if (op.pathParams.length > 1 && op.id !== 'projects.members.remove') variants.push(['own parent, their child', { ...theirs, project: mine.project!, shared: mine.shared! }]);
        for (const [label, f] of variants) {
          const real = baseline(op, f);
          const fake = baseline(op, missingAll(f));
          // For a mixed pair only the child is missing: the parent stays the caller's own.
          if (label !== 'all theirs') fake.path = pathOf(op, { ...TARGETS[op.id]!(f), [op.pathParams.at(-1)!]: missing(TARGETS[op.id]!(f)[op.pathParams.at(-1)!]!) });
          const p = { caller: name, token: user.apiKey, method: op.method, what: `${label}'s ids` };
          const a = await probe({ ...p, path: real.path, body: real.body === undefined ? undefined : json(real.body) });
          const b = await probe({ ...p, path: fake.path, body: fake.body === undefined ? undefined : json(fake.body), what: 'missing ids' });
          const seen = (x: Answer) => `${x.status} ${x.text.replace(/"request_id":"[^"]*"/, '').replace(/\b[a-z]{2,5}_[A-Za-z0-9]{12,}\b/g, '<id>')}`;
          if (a.status < 300) fail({ ...p, path: real.path }, `${a.status}: served to a user who may not read it`);
          else if (seen(a) !== seen(b)) fail({ ...p, path: real.path }, `answers ${seen(a).slice(0, 200)} where a missing id answers ${seen(b).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('answers an upload with hostile fields, part names and headers with a 4xx, never a 5xx', async () => {
    failures.length = 0;
    const op = ops.find((o) => o.id === 'upload')!;
    const boundary = 'FuzzBoundary';
    const form = (parts: [string, string, string?][]) =>
      Buffer.from(
        parts.map(([name, value, filename]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename !== undefined ? `; filename="${filename}"\r\nContent-Type: text/plain` : ''}\r\n\r\n${value}\r\n`).join('') + `--${boundary}--\r\n`,
      );
    const file = (): [string, string, string] => ['file', `harbour notes ${++counter}`, 'notes.txt'];
    const type = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    const bodies: [string, Buffer][] = [];
    const project: [string, string] = ['project_id', fx.owner.project!];
    for (const field of ['project_id', 'metadata', 'paths', 'labels', 'language', 'ocr_languages']) {
      for (const v of [...HOSTILE_STRINGS, '{"constructor":{"prototype":1}}', '["constructor"]', '{"__proto__":1}', 'null', '[]']) {
        bodies.push([`${field}=${v.slice(0, 20)}`, form([...(field === 'project_id' ? [] : [project]), [field, v], file()])]);
      }
    }
    for (const name of [...PROTO_NAMES, 'file[]', '']) bodies.push([`part ${name}`, form([project, [name, 'x'], file()])]);
    for (const filename of [...PROTO_NAMES, '..', '../../etc/passwd', '%00', 'a\u0000b.txt', '\ud800.txt']) bodies.push([`filename ${filename}`, form([project, ['file', `notes ${++counter}`, filename]])]);
    for (const [what, body] of bodies) await probe({ caller: 'owner', token: owner.apiKey, method: 'POST', path: '/api/v1/upload', body, headers: type, what }, op);
    for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=constructor', 'multipart/form-data; boundary=FuzzBoundary; charset=constructor', 'application/json', 'constructor']) {
      await probe({ caller: 'owner', token: owner.apiKey, method: 'POST', path: '/api/v1/upload', body: form([file()]), headers: { 'content-type': contentType }, what: `Content-Type: ${contentType}` }, op);
    }
    for (const raw of ['wait=constructor', 'wait=true&wait=false', 'wait_timeout=1e308', 'wait_timeout=%00', 'constructor=1', '__proto__=1']) {
      await probe({ caller: 'owner', token: owner.apiKey, method: 'POST', path: `/api/v1/upload?${raw}`, body: form([file()]), headers: type, what: `query ${raw}` }, op);
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('answers broken HTTP framing without a 5xx or a hang', async () => {
    failures.length = 0;
    const url = new URL(d.url);
    const head = (method: string, path: string, headers: Record<string, string>) =>
      `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${owner.apiKey}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
    for (const op of ops) {
      if (!op.json && op.method !== 'GET') continue;
      const base = baseline(op, fixturesFor(op));
      const token = isAdminOp(op) ? admin.apiKey : owner.apiKey;
      const body = base.body === undefined ? '{}' : json(base.body);
      const h = (headers: Record<string, string>) => head(op.method, base.path, headers).replace(owner.apiKey, token);
      const cases: [string, string, string | Buffer, Parameters<typeof sendRaw>[2]?][] = [
        ['Content-Length above the body, then the client stops sending', h({ 'Content-Type': 'application/json', 'Content-Length': String(body.length + 50) }), body, { halfClose: true }],
        ['Content-Length below the body', h({ 'Content-Type': 'application/json', 'Content-Length': '5', Connection: 'close' }), body],
        ['a chunk whose size is no number', h({ 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), `zz\r\n${body}\r\n0\r\n\r\n`],
        ['a chunk longer than its size', h({ 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), `2\r\n${body}\r\n0\r\n\r\n`],
        ['a chunked body cut short', h({ 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), `ff\r\n${body}`, { halfClose: true }],
        ['Content-Length and Transfer-Encoding both', h({ 'Content-Type': 'application/json', 'Content-Length': String(body.length), 'Transfer-Encoding': 'chunked' }), body],
        ['two Content-Lengths', h({ 'Content-Type': 'application/json', 'Content-Length': `${body.length}, ${body.length + 1}` }), body],
        ['Expect: 100-continue', h({ 'Content-Type': 'application/json', 'Content-Length': String(body.length), Expect: '100-continue', Connection: 'close' }), '', { afterContinue: body }],
        ['Expect: constructor', h({ 'Content-Type': 'application/json', 'Content-Length': String(body.length), Expect: 'constructor', Connection: 'close' }), body],
      ];
      for (const [what, text, bytes, opts] of cases) {
        if (op.method === 'GET' && !/Transfer-Encoding|Length below/.test(what)) continue;
        const r = await sendRaw(text, bytes, opts);
        stats.raw++;
        const p = { caller: 'owner', method: op.method, path: base.path, what };
        if (r.statuses.some((s) => s >= 500)) fail(p, `answered ${r.statuses.join(', ')}: ${r.text.slice(0, 300)}`);
        // docs/api.md: an expectation other than 100-continue is a 417 in the error shape, its body unread.
        if (what === 'Expect: constructor' && (r.statuses[0] !== 417 || !r.text.includes('"code":"expectation_failed"'))) fail(p, `not a 417 expectation_failed: ${r.text.slice(0, 300)}`);
        else if (!r.closed && r.statuses.filter((s) => s !== 100).length === 0) fail(p, `no answer and the connection still open after ${HANG_MS} ms`);
        for (const m of r.text.matchAll(/HTTP\/1\.1 (4\d\d) [^\r]*\r\n([\s\S]*?)\r\n\r\n/g)) {
          if (!/content-type: application\/json/i.test(m[2]!)) fail(p, `${m[1]} without a JSON error body: ${m[2]!.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('still answers /health, and logged no failed request', async () => {
    expect(stats.requests).toBeGreaterThan(4000);
    expect(stats.raw).toBeGreaterThan(150);
    expect(d.proc.exitCode).toBeNull();
    expect((await api(d, '/api/v1/health')).status).toBe(200);
    // Log lines come through a pipe, later than the answers: one logged last says every earlier one is in.
    await api(d, '/api/v1/no-such-route', { headers: { 'x-request-id': 'fuzz-last' } });
    await d.logLine('"req_id":"fuzz-last"');
    const failed = d.stdout().split('\n').filter((l) => l.includes('"request failed"'));
    expect(failed.map((l) => l.slice(0, 400))).toEqual([]);
    agent.destroy();
  });
});
