/**
 * `docsearch migrate` through the built binary on real stores: a library built by a real embedded daemon (a PDF
 * and text files ingested, an API key, an OAuth client with a grant and live tokens) is moved into shared mode
 * (PostgreSQL 15 + Ceph RGW), interrupted with SIGKILL midway and resumed, served there by a daemon that gives the
 * same search results to the same credentials (labels, their colours and the label filter too: issue 60), then moved
 * back into a new data directory and checked again. A
 * copy damaged behind the migration's back (a chunk's text, an original's bytes) fails verification, naming
 * what differs, and the next run repairs it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient, getCode, loggedIn, post, type RegisteredClient } from '../auth/oauth-flow.js';
import { addUser, api, BIN, type Daemon, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { expectSameResults, type Hit, searchHits } from '../helpers/same-results.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const SKIP = postgresUnavailable() ?? rgwUnavailable();
const PDF = readFileSync(join(REPO, 'test/fixtures/extract/latex-1col.pdf'));
const TEXTS = [
  { name: 'marmots.txt', bytes: Buffer.from('Marmots hibernate in burrows through the alpine winter.\n\nThey wake in spring, thin and hungry.\n') },
  { name: 'tides.md', bytes: Buffer.from('# Tides\n\nThe moon pulls the oceans, and the tides rise and fall twice a day along most coasts.\n') },
];
const QUERIES = ['which laws cover semiconductor masks', 'where do marmots hibernate', 'why do tides rise'];
const REDIRECT = 'http://127.0.0.1:9/callback';

const searchAll = (d: Daemon, token: string) => searchHits(d, token, QUERIES, { limit: 5 });

describe.skipIf(SKIP !== null)(`docsearch migrate between a data directory and PostgreSQL + RGW${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let pg: PgCluster;
  let rgw: Rgw;
  let source: string;
  let databaseUrl: string;
  let user: TestUser;
  let client: RegisteredClient;
  let tokens: { access_token: string; refresh_token: string };
  let before: Hit[][];
  let documentIds: string[];
  let sourceRoot: string;
  let projectId: string;
  let sourceId: string;
  const dirs: string[] = [];
  const storage = () => `s3://${rgw.bucket}/moved`;
  const migrate = (args: string[], timeoutMs = 240_000) => runCli(['migrate', ...args], { env: rgw.env(), timeoutMs });
  const toShared = () => ['--from', source, '--to-database', databaseUrl, '--to-storage', storage()];

  beforeAll(async () => {
    [pg, rgw] = await Promise.all([startPostgres(), startRgw()]);
    databaseUrl = await pg.createDatabase();
    // A folder source, whose rows (the source, its item, its document's source) move with the library.
    sourceRoot = mkdtempSync(join(tmpdir(), 'docsearch-migrate-source-'));
    dirs.push(sourceRoot);
    writeFileSync(join(sourceRoot, 'lichens.txt'), 'Lichens are a fungus and an alga living as one.\n');
    const d = await startDaemon({ args: ['--source-roots', sourceRoot] });
    source = d.dataDir;
    dirs.push(source);
    try {
      user = await addUser(d);
      client = await addClient(d, { redirectUris: [REDIRECT] });
      const code = await getCode(await loggedIn(d, user), { client_id: client.clientId, redirect_uri: REDIRECT, scope: 'read:documents', state: 's' });
      const res = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.clientSecret!, redirect_uri: REDIRECT });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      tokens = res.body;
      const up = await uploadFiles(d, user.apiKey, [{ name: 'licence.pdf', bytes: PDF }, ...TEXTS], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const docs = up.body.documents as { id: string; status: string }[];
      expect(docs.map((x) => x.status)).toEqual(['ready', 'ready', 'ready']);
      documentIds = docs.map((x) => x.id);
      projectId = (await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects[0].id;
      const added = await api(d, `/api/v1/projects/${projectId}/sources`, { token: user.apiKey, body: { url: `file://${sourceRoot}` } });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      sourceId = added.body.id;
      await waitFor(async () => {
        const listed = await api(d, `/api/v1/documents?project_id=${projectId}`, { token: user.apiKey });
        return listed.body.documents.some((x: { source_id: string | null; status: string }) => x.source_id === sourceId && x.status === 'ready');
      }, 60_000, 'the source\'s document');
      // Labels (and a recoloured one) move with the library and still filter in the index copied along.
      const labelled = await api(d, `/api/v1/documents/${documentIds[1]}`, { method: 'PATCH', token: user.apiKey, body: { labels: ['Alpine', 'fauna'] } });
      expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);
      const alpine = ((await api(d, `/api/v1/projects/${projectId}/labels`, { token: user.apiKey })).body.labels as { id: string; name: string }[]).find((l) => l.name === 'Alpine')!;
      expect((await api(d, `/api/v1/projects/${projectId}/labels/${alpine.id}`, { method: 'PATCH', token: user.apiKey, body: { color: 'teal' } })).status).toBe(200);
      before = await searchAll(d, user.apiKey);
      expect(before.every((hits) => hits.length > 0 && hits.every((h) => typeof h.id === 'string' && h.id.length > 0))).toBe(true);
    } finally {
      await d.stop();
    }
  }, 300_000);
  afterAll(async () => {
    for (const dir of dirs) removeDir(dir);
    await rgw?.stop();
    await pg?.destroy();
  });

  it('--dry-run reports what would move and writes nothing', async () => {
    const res = await migrate([...toShared(), '--dry-run', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s).toMatchObject({ dry_run: true, target_state: 'fresh', verification: null });
    const rows = Object.fromEntries((s.tables as { name: string; rows: number }[]).map((t) => [t.name, t.rows]));
    expect(rows).toMatchObject({ users: 1, documents: 4, api_keys: 1, oauth_grants: 1, sources: 1, source_items: 1 });
    expect(rows.oauth_clients).toBeGreaterThanOrEqual(2); // the CLI's built-in client and the registered one
    expect(s.originals).toMatchObject({ files: 4, copied: 0 });
    expect(s.index.chunks.documents).toBe(4);
    const listed = await rgw.client().send(new ListObjectsV2Command({ Bucket: rgw.bucket, Prefix: 'moved/' }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it('refuses, saying why, a source that holds no library and a target that is the source', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'docsearch-migrate-empty-'));
    dirs.push(empty);
    const none = await migrate(['--from', empty, '--to-database', databaseUrl, '--to-storage', storage()]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no docsearch library/);
    const self = await migrate(['--from', source, '--to', source]);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/the same database/);
  });

  it('moves the library into shared mode: killed midway, a second run resumes it and verifies', async () => {
    // One chunk row per commit, so that the copy is still writing the index when it is killed.
    const proc = spawn(process.execPath, [BIN, 'migrate', ...toShared(), '--batch-rows', '1'], { env: { ...process.env, ...rgw.env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const killed = await new Promise<boolean>((resolve) => {
      proc.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (/^chunks: [1-9][\d,]*\/[\d,]+ rows/m.test(stderr)) proc.kill('SIGKILL');
      });
      proc.once('exit', (code, signal) => resolve(signal === 'SIGKILL' || code !== 0));
    });
    expect(killed, stderr).toBe(true);

    // A daemon refuses the half-copied library.
    const half = await startDaemon({ databaseUrl, args: ['--storage', storage()], env: rgw.env(), timeoutMs: 60_000 }).catch((err: Error) => err);
    expect(half).toBeInstanceOf(Error);
    expect(String(half)).toMatch(/still being copied in from/);

    const res = await migrate([...toShared(), '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s).toMatchObject({ target_state: 'resumed', verification: { ok: true, differences: [] } });
    // It was killed copying the index: the tables and originals were there, and are not copied again.
    expect(s.originals).toMatchObject({ files: 4, copied: 0 });
    expect(res.stderr).toMatch(/resuming the copy/);
    expect(res.stderr).toMatch(/verified: the target holds the same rows, originals and chunks/);

    const again = await migrate(toShared());
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/already holds this library, copied and verified/);
  }, 600_000);

  /** The labels put on before the move: on the document, in the vocabulary with their colour, and in search's prefilter. */
  async function expectLabelsCarried(d: Daemon): Promise<void> {
    expect((await api(d, `/api/v1/documents/${documentIds[1]}`, { token: user.apiKey })).body.labels).toEqual(['Alpine', 'fauna']);
    const vocabulary = (await api(d, `/api/v1/projects/${projectId}/labels`, { token: user.apiKey })).body.labels as { name: string; color: string; document_count: number }[];
    expect(vocabulary.map((l) => [l.name, l.document_count])).toEqual([['Alpine', 1], ['fauna', 1]]);
    expect(vocabulary[0]!.color).toBe('teal');
    const found = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: QUERIES[1], filters: { labels: 'alpine' }, facets: ['label'] } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(new Set((found.body.results as { document: { id: string } }[]).map((r) => r.document.id))).toEqual(new Set([documentIds[1]]));
    expect(found.body.facets.label.map((v: { value: string }) => v.value).sort()).toEqual(['Alpine', 'fauna']);
    const listed = await api(d, '/api/v1/documents?labels=fauna', { token: user.apiKey });
    expect(listed.body.documents.map((x: { id: string }) => x.id)).toEqual([documentIds[1]]);
  }

  it('a daemon on the shared stores serves the same results to the same key, OAuth tokens and password', async () => {
    const d = await startDaemon({ databaseUrl, args: ['--storage', storage()], env: rgw.env(), timeoutMs: 60_000 });
    dirs.push(d.dataDir);
    try {
      expectSameResults(await searchAll(d, user.apiKey), before);
      expectSameResults(await searchAll(d, tokens.access_token), before);
      // The source moved with its state, and its document still says it came from it.
      const source = await api(d, `/api/v1/projects/${projectId}/sources/${sourceId}`, { token: user.apiKey });
      expect(source.status).toBe(200);
      expect(source.body).toMatchObject({ kind: 'folder', last_result: { added: 1 } });
      await expectLabelsCarried(d);
      const moved = await api(d, `/api/v1/documents?project_id=${projectId}`, { token: user.apiKey });
      expect(moved.body.documents.filter((x: { source_id: string | null }) => x.source_id === sourceId).map((x: { source_path: string }) => x.source_path)).toEqual(['lichens.txt']);
      const refreshed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.clientId, client_secret: client.clientSecret! });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      expectSameResults(await searchAll(d, refreshed.body.access_token), before);
      await loggedIn(d, user);
      // While a replica runs on the library, a migration out of it is refused, naming who holds it.
      const busy = await migrate(['--from-database', databaseUrl, '--from-storage', storage(), '--to', join(d.dataDir, 'elsewhere')]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/1 docsearch process is using the source database .*\(pid \d+.*\): stop every replica first/);
      for (const [i, id] of documentIds.entries()) {
        const got = await fetch(`${d.url}/api/v1/documents/${id}/file`, { headers: { authorization: `Bearer ${user.apiKey}` } });
        expect(got.status).toBe(200);
        expect(Buffer.from(await got.arrayBuffer()).equals(i === 0 ? PDF : TEXTS[i - 1]!.bytes)).toBe(true);
      }
      // A new upload takes the next job id (the identity counter moved past the copied rows).
      const up = await uploadFiles(d, user.apiKey, [{ name: 'new.txt', bytes: Buffer.from('Owls hunt at night over the meadows.\n') }], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      expect(up.body.documents[0].status).toBe('ready');
      // Gone for good (the trash's chunks would still count in the keyword statistics the next test compares).
      await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { method: 'DELETE', token: user.apiKey });
      expect((await api(d, `/api/v1/trash/${up.body.documents[0].id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    } finally {
      await d.stop();
    }
  }, 300_000);

  it('moves it back into a new data directory; damage to that copy fails verification and the next run repairs it', async () => {
    const back = mkdtempSync(join(tmpdir(), 'docsearch-migrate-back-'));
    dirs.push(back);
    const fromShared = ['--from-database', databaseUrl, '--from-storage', storage(), '--to', back];
    const res = await migrate([...fromShared, '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ target_state: 'fresh', verification: { ok: true } });

    const d = await startDaemon({ dataDir: back });
    try {
      expectSameResults(await searchAll(d, user.apiKey), before);
      await expectLabelsCarried(d);
    } finally {
      await d.stop();
    }

    // Damage the copy as an interrupted run could have left it unnoticed: a chunk's text and an original's bytes.
    const db = new Database(join(back, 'docsearch.db'));
    const record = JSON.parse((db.prepare("select value from settings where key = 'migration'").get() as { value: string }).value);
    db.prepare("update settings set value = ? where key = 'migration'").run(JSON.stringify({ ...record, state: 'copying' }));
    const sha = (db.prepare('select sha256 from documents where id = ?').get(documentIds[1]) as { sha256: string }).sha256;
    db.close();
    writeFileSync(join(back, 'files', sha.slice(0, 2), sha), 'not the original');
    const info = JSON.parse(readFileSync(join(back, 'lancedb', 'chunks-index.json'), 'utf8')) as { table: string };
    const conn = await lancedb.connect(join(back, 'lancedb'));
    const table = await conn.openTable(info.table);
    await table.update({ where: `document_id = '${documentIds[0]}' AND chunk_index = 0`, values: { text: 'tampered' } });
    table.close();
    conn.close();
    expect(readdirSync(join(back, 'files', sha.slice(0, 2)))).toContain(sha);

    const caught = await migrate([...fromShared, '--json']);
    expect(caught.code).toBe(1);
    const s = JSON.parse(caught.stdout);
    expect(s.verification.ok).toBe(false);
    expect(s.verification.differences).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^original ${sha}: the target's copy hashes to [0-9a-f]{64}$`)),
        expect.stringMatching(new RegExp(`^chunks of document ${documentIds[0]}: the same \\d+ row\\(s\\) in number, but their contents differ$`)),
      ]),
    );
    expect(caught.stderr).toMatch(/verification failed/);

    const repaired = await migrate([...fromShared, '--json']);
    expect(repaired.code, repaired.stderr).toBe(0);
    const r = JSON.parse(repaired.stdout);
    expect(r).toMatchObject({ target_state: 'resumed', verification: { ok: true } });
    expect(r.originals.copied).toBe(1);
    const d2 = await startDaemon({ dataDir: back });
    try {
      expectSameResults(await searchAll(d2, user.apiKey), before);
    } finally {
      await d2.stop();
    }
  }, 600_000);
});
