/**
 * No secret reaches a log, a metric, an audit event, a page or answer another person reads, or a file in the data
 * dir. One daemon at debug level, configured with secrets through the environment (the `listening` line logs its
 * configuration), sources against real servers (Apache WebDAV and Git, Dovecot IMAP, Ceph RGW for S3) with right and
 * wrong passwords and keys, invitations (their links carry the token), keys presented in every wrong way (unknown,
 * revoked, expired, malformed, in the query, in a path or a field their refusal quotes), a passkey registered and
 * signing in, MCP, metrics and health. Each secret is recorded as it is made, and looked for as itself, URL- and
 * base64-encoded, and by any 16 characters of it. The refusals' log lines still say what was refused and why.
 * The OAuth tokens and codes, password resets, the second factor and SSO: secrets.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Dovecot, dovecotUnavailable, startDovecot } from '../helpers/dovecot.js';
import { expireAt } from '../helpers/key-expiry.js';
import { freePort } from '../helpers/ports.js';
import { unmet } from '../helpers/requirement.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { SigningPasskey } from '../helpers/soft-passkey.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { startAuthSmtpServer, type AuthSmtpServer } from './smtp-auth-server.js';
import { WebClient } from './web-client.js';

const SKIP = unmet(apacheUnavailable() ?? dovecotUnavailable() ?? rgwUnavailable());
const SMTP_USER = 'mailer';
const rand = (what: string) => `${what}-${randomBytes(12).toString('hex')}`;

/** Every file under `dir`, with its bytes. */
function filesUnder(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.set(name, readFileSync(path));
  }
  return out;
}

/** The forms a secret could be written in: itself, URL- and base64-encoded, and each run of 16 of its characters. */
function forms(secret: string): string[] {
  const all = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')]);
  for (let i = 0; i + 16 <= secret.length; i++) all.add(secret.slice(i, i + 16));
  return [...all];
}

describe.skipIf(SKIP !== null)(`no secret in logs, metrics, audit events, others' pages or the data dir${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const secrets = new Map<string, string>();
  /** What people other than a secret's sender read (other accounts, admins, Prometheus), by where it was read. */
  const readByOthers = new Map<string, string>();
  let d: Daemon;
  let smtp: AuthSmtpServer;
  let apache: Apache;
  let dovecot: Dovecot;
  let rgw: Rgw;
  let admin: TestUser;
  const record = (what: string, value: string) => {
    expect(value.length, what).toBeGreaterThanOrEqual(8);
    secrets.set(what, value);
    return value;
  };

  beforeAll(async () => {
    const smtpPassword = record('SMTP password', rand('smtp-pw'));
    [smtp, apache, dovecot, rgw] = await Promise.all([startAuthSmtpServer(SMTP_USER, smtpPassword), startApache(), startDovecot(), startRgw()]);
    // Configuration secrets through the environment, as the docs advise.
    const env = {
      DOCSEARCH_SECRETS_KEY: record('secrets key', randomBytes(32).toString('hex')),
      DOCSEARCH_METRICS_TOKEN: record('metrics token', rand('metrics')),
      DOCSEARCH_OPENAI_API_KEY: record('OpenAI API key', rand('sk-openai')),
      DOCSEARCH_RERANKER_API_KEY: record('reranker API key', rand('rr-key')),
    };
    // A public URL on localhost: the origin and relying party a passkey is made for.
    const port = await freePort();
    const publicUrl = `http://localhost:${port}`;
    d = await startDaemon({ env, args: ['--log-level', 'debug', '--smtp-url', smtp.url, '--sources-allow-private', '--metrics', 'on', '--port', String(port), '--public-url', publicUrl] });
    admin = await addUser(d);
    record('admin password', admin.password);
    record('admin API key', admin.apiKey);

    // Passwords at the sign-in form, a wrong one first.
    const web = new WebClient(d);
    expect((await web.login(admin.email, record('wrong password', rand('wrong-pw')))).status).toBe(401);
    // The classic slip: the password typed into the e-mail field (the audit log keeps what was tried as the address).
    expect((await new WebClient(d).login(admin.password, admin.password)).status).toBe(401);
    expect((await web.login(admin.email, admin.password)).status).toBe(302);
    record('session cookie', web.sessionCookie!);

    // Keys presented wrongly: unknown, revoked, in a malformed header, as Basic, in the query string, in another header.
    const k = await api(d, '/api/v1/keys', { token: admin.apiKey, body: { name: 'revoked soon' } });
    expect(k.status).toBe(201);
    const revoked = record('revoked API key', k.body.key);
    expect((await api(d, '/api/v1/projects', { token: revoked })).status).toBe(200);
    expect((await api(d, `/api/v1/keys/${k.body.id}`, { method: 'DELETE', token: admin.apiKey })).status).toBe(204);
    const unknown = record('unknown API key', `dsk_${randomBytes(24).toString('base64url')}`);
    const key = admin.apiKey;
    const refusedBy: [string, Record<string, string>][] = [
      ['/api/v1/projects', { authorization: `Bearer ${revoked}` }],
      ['/api/v1/projects', { authorization: `Bearer ${unknown}` }],
      ['/api/v1/projects', { authorization: `Bearer ${key} ${key}` }],
      ['/api/v1/projects', { authorization: `Token ${key}` }],
      ['/api/v1/projects', { authorization: `Basic ${Buffer.from(`${admin.email}:${admin.password}`).toString('base64')}` }],
      [`/api/v1/projects?access_token=${key}&api_key=${key}`, {}],
      ['/api/v1/projects', { 'x-api-key': key }],
      ['/metrics', { authorization: `Bearer ${record('wrong metrics token', rand('wrong-metrics'))}` }],
    ];
    for (const [path, headers] of refusedBy) expect((await api(d, path, { headers })).status, `${path} ${JSON.stringify(headers)}`).toBe(401);
    // A key that expired, presented to the API and to MCP.
    const e = await api(d, '/api/v1/keys', { token: admin.apiKey, body: { name: 'expires soon', expires_in_days: 1 } });
    expect(e.status).toBe(201);
    const expired = record('expired API key', e.body.key);
    expect((await api(d, '/api/v1/projects', { token: expired })).status).toBe(200);
    await expireAt(d, e.body.id, Date.now() - 60_000);
    expect((await api(d, '/api/v1/projects', { token: expired })).status).toBe(401);
    // Secrets in a wrong place that their refusal quotes back: a key as a project id in the path (the access line
    // logs the path), a session id as a project to search.
    expect((await api(d, `/api/v1/projects/${revoked}`, { token: key })).status).toBe(404);
    expect((await api(d, '/api/v1/search', { token: key, body: { query: 'x', project_ids: [web.sessionCookie] } })).status).toBe(404);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'secrets', version: '1' } } };
    const mcpHeaders = { accept: 'application/json, text/event-stream' };
    expect((await api(d, '/mcp', { token: unknown, headers: mcpHeaders, body: initialize })).status).toBe(401);
    expect((await api(d, '/mcp', { token: expired, headers: mcpHeaders, body: initialize })).status).toBe(401);
    // A key in a body where none belongs, refused as invalid.
    expect((await api(d, '/api/v1/projects', { token: key, body: { name: 'p', key, password: admin.password } })).status).toBe(400);
    // MCP with a good bearer.
    expect((await api(d, '/mcp', { token: key, headers: mcpHeaders, body: initialize })).status).toBe(200);

    // Invitations: one answered as a link, one mailed; the tokens in their links are secrets, the accepted password too.
    const linked = await api(d, '/api/v1/admin/invitations', { token: key, body: { emails: ['linked@example.com'], send: false } });
    expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    const inviteToken = record('invitation token', new URL(linked.body.invitations[0].link).searchParams.get('token')!);
    const mailed = await api(d, '/api/v1/admin/invitations', { token: key, body: { emails: ['mailed@example.com'] } });
    expect(mailed.status, JSON.stringify(mailed.body)).toBe(201);
    const mail = await smtp.waitFor('mailed@example.com');
    const mailedToken = /\/invite\?token=([A-Za-z0-9_-]+)/.exec(mail)?.[1];
    expect(mailedToken, mail).toBeDefined();
    record('mailed invitation token', mailedToken!);
    // A token as the grant type at the token endpoint, and the password grant docsearch does not offer.
    expect((await api(d, '/api/oauth/token', { body: { grant_type: inviteToken } })).status).toBe(400);
    expect((await api(d, '/api/oauth/token', { body: { grant_type: 'password', username: admin.email, password: admin.password } })).status).toBe(400);
    const invited = new WebClient(d);
    expect((await invited.get(`/invite?token=${record('wrong invitation token', rand('no-such-invite'))}`)).status).toBeGreaterThanOrEqual(400);
    expect((await invited.get(`/invite?token=${inviteToken}`)).status).toBe(200);
    const invitedPassword = record('invited password', rand('invited-pw'));
    expect((await invited.post('/invite', { _csrf: invited.csrf, token: inviteToken, password: invitedPassword, password2: invitedPassword })).status).toBeLessThan(400);
    expect((await new WebClient(d).login('linked@example.com', invitedPassword)).status).toBe(302);

    // Sources: credentials in the URL and in the options, right and wrong, each kind refused by its real server.
    const sources = new SourceClient(d, key);
    const project = await sources.project('sourced');
    const dav = apache.davUser;
    record('WebDAV password', dav.password);
    record('IMAP password', dovecot.user.password);
    const wrongDav = record('wrong WebDAV password', rand('wrong-dav'));
    const wrongImap = record('wrong IMAP password', rand('wrong-imap'));
    const wrongGit = record('wrong Git token', rand('wrong-git'));
    record('S3 secret access key', rgw.secretAccessKey);
    const wrongS3 = record('wrong S3 secret access key', rand('wrong-s3'));
    const s3 = { endpoint: rgw.endpoint, region: rgw.region, access_key_id: rgw.accessKeyId };
    await rgw.client().send(new PutObjectCommand({ Bucket: rgw.bucket, Key: 'docs/note.txt', Body: 'A note in a bucket behind a key.\n' }));
    for (const [who, pw] of [['WebDAV', dav.password], ['wrong WebDAV', wrongDav], ['wrong Git', wrongGit]]) {
      record(`${who} basic credentials`, `${dav.name}:${pw}`);
    }
    const folder = join(apache.davDir, 'docs');
    mkdirSync(folder);
    writeFileSync(join(folder, 'note.txt'), 'A note behind a password.\n');
    apache.own(folder);
    apache.own(join(folder, 'note.txt'));
    const dav0 = new URL(`${apache.davUrl}/docs/`);
    const bad = [
      { kind: 'webdav', url: `${dav0.protocol}//${dav.name}:${encodeURIComponent(wrongDav)}@${dav0.host}${dav0.pathname}` },
      { url: `imap://${dovecot.host}:${dovecot.port}/INBOX`, options: { username: dovecot.user.name, password: wrongImap } },
      { url: `${apache.gitUrl}/private/docs.git`, options: { username: dav.name, password: wrongGit } },
      { url: `s3://${rgw.bucket}/docs/`, options: { ...s3, secret_access_key: wrongS3 } },
    ];
    for (const body of bad) {
      const source = await sources.add(project, { ...body, every: '1h' });
      const failed = await sources.passAfter(project, source.id, 0);
      expect(failed.status, JSON.stringify(failed)).toBe('error');
      expect(failed.error).toMatch(/credentials/);
    }
    const good = await sources.add(project, { kind: 'webdav', url: `${apache.davUrl}/docs/`, options: { username: dav.name, password: dav.password }, every: '1h' });
    const imap = await sources.add(project, { url: `imap://${dovecot.host}:${dovecot.port}/INBOX`, options: { username: dovecot.user.name, password: dovecot.user.password }, every: '1h' });
    const bucket = await sources.add(project, { url: `s3://${rgw.bucket}/docs/`, options: { ...s3, secret_access_key: rgw.secretAccessKey }, every: '1h' });
    for (const s of [good, imap, bucket]) {
      const passed = await sources.passAfter(project, s.id, 0);
      expect(passed.status, JSON.stringify(passed)).not.toBe('error');
    }
    // The password changed through the API, then refused by a source URL whose address is not allowed.
    expect((await api(d, `/api/v1/projects/${project}/sources/${good.id}`, { method: 'PATCH', token: key, body: { options: { password: record('changed WebDAV password', rand('new-dav')) } } })).status).toBe(200);
    const unreachable = await api(d, `/api/v1/projects/${project}/sources`, { token: key, body: { kind: 'webdav', url: `http://${dav.name}:${encodeURIComponent(wrongDav)}@169.254.169.254/dav/` } });
    expect(unreachable.status).toBe(400);
    readByOthers.set('the sources, as their project reads them', JSON.stringify((await api(d, `/api/v1/projects/${project}/sources`, { token: key })).body));

    // A passkey (the software authenticator of the HTTP-level suites) added on Settings → Security, then signing in
    // alone; its assertion replayed from another browser is refused.
    const passkey = new SigningPasskey(publicUrl);
    await web.get('/settings/security');
    const creation = await web.postJson('/settings/security/passkeys/options', {});
    expect(creation.status, creation.text).toBe(200);
    const added = await web.postJson('/settings/security/passkeys', { response: passkey.register(JSON.parse(creation.text)), name: 'sweep key' });
    expect(added.status, added.text).toBe(200);
    const byPasskey = new WebClient(d);
    await byPasskey.get('/login');
    const request = await byPasskey.postJson('/login/passkey/options', {});
    expect(request.status, request.text).toBe(200);
    const assertion = passkey.assert(JSON.parse(request.text)) as { response: { signature: string } };
    record('passkey assertion signature', assertion.response.signature);
    expect((await byPasskey.postJson('/login/passkey', { response: assertion, return_to: '' })).status).toBe(200);
    record('session cookie after a passkey sign-in', byPasskey.sessionCookie!);
    const replay = new WebClient(d);
    await replay.get('/login');
    expect((await replay.postJson('/login/passkey', { response: assertion, return_to: '' })).status).toBeGreaterThanOrEqual(400);

    // What others read: the audit log (API and page), the admin's notices and mail outbox, metrics, health.
    // Pages break long words with <wbr>: read as text.
    const page = async (path: string) => (await web.get(path)).text.replaceAll('<wbr>', '');
    readByOthers.set('the audit page', await page('/admin/audit'));
    readByOthers.set('the notices page', await page('/notices'));
    const audit = await api(d, '/api/v1/audit-events?limit=200', { token: key });
    expect(audit.status).toBe(200);
    expect(audit.body.events.length).toBeGreaterThan(5);
    readByOthers.set('the audit events', JSON.stringify(audit.body));
    readByOthers.set('the mail outbox', JSON.stringify((await api(d, '/api/v1/admin/mail', { token: key })).body));
    const metrics = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${env.DOCSEARCH_METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    readByOthers.set('/metrics', await metrics.text());
    readByOthers.set('/api/v1/health', JSON.stringify((await api(d, '/api/v1/health', { token: key })).body));
    // The last request's access line: every line before it has been written.
    await d.logLine((l) => l.includes('"path":"/api/v1/health"'));
  }, 180_000);

  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await Promise.all([smtp?.stop(), apache?.stop(), dovecot?.stop(), rgw?.stop()]);
  });

  /** "<secret> in <where>" for each secret (in any of its forms) `text` holds. */
  const found = (where: string, text: string | Buffer) =>
    [...secrets].filter(([, value]) => forms(value).some((f) => text.includes(f))).map(([what]) => `${what} in ${where}`);

  it('the debug log on stdout and stderr holds none, and logged what it was given', () => {
    expect([...found('stdout', d.stdout()), ...found('stderr', d.stderr())]).toEqual([]);
    // Positive controls: the scenario's refusals were logged with their code and reason, the configuration too.
    const rejected = d.stdout().split('\n').filter((l) => l.includes('"msg":"request rejected"')).map((l) => JSON.parse(l));
    expect(rejected).toContainEqual(expect.objectContaining({ code: 'unauthorized', error: 'the credential is not valid, has expired or was revoked' }));
    expect(rejected).toContainEqual(expect.objectContaining({ code: 'unauthorized', error: expect.stringMatching(/^the API key expired on \d{4}-\d\d-\d\d \d\d:\d\d UTC$/) }));
    expect(rejected).toContainEqual(expect.objectContaining({ code: 'invalid_request', error: expect.stringContaining('unknown fields "key", "password"') }));
    expect(rejected).toContainEqual(expect.objectContaining({ code: 'not_found', error: 'project "[redacted]" not found' }));
    expect(d.stdout()).toContain('"path":"/api/v1/projects/dsk_[redacted]"');
    const oauth = d.stdout().split('\n').filter((l) => l.includes('"msg":"oauth request rejected"')).map((l) => JSON.parse(l));
    expect(oauth).toContainEqual(expect.objectContaining({ code: 'unsupported_grant_type', error: expect.stringMatching(/^grant_type \[redacted\] is not supported/) }));
    expect(oauth).toContainEqual(expect.objectContaining({ code: 'unsupported_grant_type', error: expect.stringMatching(/^grant_type password is not supported/) }));
    const config = JSON.parse(d.stdout().split('\n').find((l) => l.includes('"msg":"listening"'))!).config;
    expect(config).toMatchObject({ openaiApiKey: '[redacted]', rerankerApiKey: '[redacted]', metricsToken: '[redacted]', secretsKey: '[redacted]' });
  });

  it('what others read (audit events and page, notices, outbox, source errors, metrics, health) holds none', () => {
    expect(readByOthers.get('the audit events')).toContain('source.created');
    expect([...readByOthers].flatMap(([where, text]) => found(where, text))).toEqual([]);
  });

  it('no file in the data dir holds one', async () => {
    expect(await d.stop()).toBe(0);
    const files = filesUnder(d.dataDir);
    expect([...files.keys()]).toContain('docsearch.db');
    expect([...files].flatMap(([name, bytes]) => found(name, bytes))).toEqual([]);
  });
});

describe('a refused start quotes no credential given in a URL', () => {
  const dirs = tempDirs('docsearch-refused-start');
  afterAll(() => dirs.removeAll());

  it('masks the user:password@ of every URL option it refuses, in flags and in the environment', async () => {
    const secret = () => rand('url-secret');
    const refusals: { args?: string[]; env?: Record<string, string>; secret: string }[] = [];
    const add = (make: (s: string) => { args?: string[]; env?: Record<string, string> }) => {
      const s = secret();
      refusals.push({ ...make(s), secret: s });
    };
    add((s) => ({ args: ['--ollama-host', `ftp://u:${s}@models.example`] }));
    add((s) => ({ env: { DOCSEARCH_OLLAMA_HOST: `http://u:${s}@[unparsable` } }));
    add((s) => ({ args: ['--reranker', `http:ftp://u:${s}@rerank.example`] }));
    add((s) => ({ args: ['--reranker', `rerank:https://u:${s}@rerank.example`] }));
    add((s) => ({ args: ['--embedder', `tei:https://u:${s}@embed.example`] }));
    add((s) => ({ args: ['--openai-base-url', `https://u:${s}@api.example:0`] }));
    add((s) => ({ args: ['--public-url', `ftp://u:${s}@docs.example`] }));
    add((s) => ({ args: ['--mcp-allowed-origins', `https://u:${s}@app.example`] }));
    add((s) => ({ args: ['--oidc-issuer', `https://u:${s}@idp.example`, '--oidc-client-id', 'docsearch'] }));
    add((s) => ({ args: ['--oidc-issuer', `http://u:${s}@[unparsable`, '--oidc-client-id', 'docsearch'] }));
    add((s) => ({ env: { DOCSEARCH_DATABASE_URL: `postgres://u:${s}@[unparsable/docs` } }));
    add((s) => ({ args: ['--smtp-url', `smtp://u:${s}@[unparsable`] }));
    add((s) => ({ args: ['--storage', `s3://AKIA:${s}@bucket/prefix`] }));
    const outcomes = await Promise.all(
      refusals.map(async ({ args = [], env = {}, secret }) => {
        const r = await runCli(['serve', '--port', '0', '--data-dir', dirs.make('data'), ...args], { env, timeoutMs: 30_000 });
        return { given: JSON.stringify({ args, env }), code: r.code, said: r.stdout + r.stderr, secret };
      }),
    );
    for (const o of outcomes) {
      expect(o.code, o.given).not.toBe(0);
      expect(o.said, o.given).toMatch(/^error: /m);
      expect(forms(o.secret).filter((f) => o.said.includes(f)), `${o.given}\n${o.said}`).toEqual([]);
    }
  }, 60_000);
});

describe('a model service that quotes the key it refuses', () => {
  it('has its answer told (log, the document, health) without the key', async () => {
    // As some OpenAI-compatible servers do: the refusal repeats the credential it was sent.
    const stand = createServer((req, res) => {
      res.statusCode = 401;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${(req.headers.authorization ?? '').replace(/^Bearer /, '')}` } }));
    });
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
    const key = rand('sk-quoted');
    const d = await startDaemon({
      env: { DOCSEARCH_OPENAI_API_KEY: key },
      args: ['--log-level', 'debug', '--embedder', 'openai:stand-in', '--openai-base-url', `http://127.0.0.1:${(stand.address() as AddressInfo).port}`],
    });
    try {
      const user = await addUser(d);
      const up = await uploadFiles(d, user.apiKey, [{ name: 'note.txt', bytes: Buffer.from('A note the model never reads.\n') }], { query: '?wait=true' });
      const doc = JSON.stringify(up.body);
      expect(doc, 'the refusal is told on the document').toMatch(/rejected the credentials \(HTTP 401\): Incorrect API key provided: \[redacted\]/);
      const health = JSON.stringify((await api(d, '/api/v1/health', { token: user.apiKey })).body);
      await d.logLine((l) => l.includes('rejected the credentials'));
      const told = { document: doc, health, stdout: d.stdout(), stderr: d.stderr() };
      expect(Object.entries(told).filter(([, text]) => forms(key).some((f) => text.includes(f))).map(([where]) => where)).toEqual([]);
    } finally {
      await d.stop();
      removeDir(d.dataDir);
      await new Promise((r) => stand.close(r));
    }
  }, 60_000);
});
