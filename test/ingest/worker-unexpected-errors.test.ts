/**
 * An error the worker did not expect never stops ingestion (src/ingest/worker.ts, docs/ingest.md "Queue and worker"),
 * each of which once ended a claim loop for good:
 *
 * - outside the pipeline while a job is held (an e-mail's attachment that cannot be stored: a stray file in the
 *   originals' folder where a folder of them belongs): that job's attempt, retried, and ready once the fault is gone;
 * - where even recording the failure is refused (the database refusing the worker's writes while a document is being
 *   indexed): the loop backs off and goes on, health's `queue` says so meanwhile and is up again once a claim is
 *   written, before the document handed back is indexed again. On SQLite,
 *   another process holds the library's write lock for longer than SQLite waits (`database is locked`), as an
 *   operator's `sqlite3` session or a script writing to docsearch.db does; on PostgreSQL an operator cancels the
 *   worker's statements (`pg_cancel_backend`, as a `statement_timeout` or `lock_timeout` set on the database would)
 *   while another session holds a lock on the documents table.
 *
 * And a candidate that proved no trigger, held here on both engines: NULs (which PostgreSQL cannot store) in what an
 * e-mail says of itself and in its attachments' names are left out before anything is stored.
 */
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { sleep, waitFor } from '../helpers/eventually.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { unmet } from '../helpers/requirement.js';
import { newPostgresDatabase } from '../helpers/store-dialects.js';
import { bigText, prose } from './pipeline/fixtures.js';
import { uploadFiles } from './pipeline/helpers.js';

/** A multipart e-mail from `from` whose body is `body`, with each attachment (its Content-Disposition's parameters and text). */
function message(from: string, body: string, ...attachments: { disposition: string; text: string; base64?: boolean }[]): string {
  return [
    `From: ${from}`,
    'To: Bob <bob@example.org>',
    'Subject: The survey notes',
    'Date: Mon, 2 Mar 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    ...attachments.flatMap((a) => [
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      `Content-Disposition: attachment; ${a.disposition}`,
      ...(a.base64 ? ['Content-Transfer-Encoding: base64'] : []),
      '',
      a.text,
    ]),
    '--b1--',
    '',
  ].join('\r\n');
}

/** Something held on the database underneath the daemon, and its release. */
interface Hold {
  release(): Promise<void>;
}

/** The library's write lock, taken by another connection (BEGIN IMMEDIATE) and held until released. */
function holdSqliteWriteLock(d: Daemon): Hold {
  const db = new BetterSqlite3(join(d.dataDir, 'docsearch.db'));
  db.pragma('busy_timeout = 10000');
  db.exec('BEGIN IMMEDIATE');
  return {
    release: async () => {
      db.exec('COMMIT');
      db.close();
    },
  };
}

/** A lock on the documents table that lets reads through, and every statement of the daemon waiting on it cancelled. */
async function holdPostgresAndCancel(url: string): Promise<Hold> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE documents IN EXCLUSIVE MODE');
  let stopped = false;
  const canceller = (async () => {
    while (!stopped) {
      await client.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
      await sleep(50);
    }
  })();
  return {
    release: async () => {
      stopped = true;
      await canceller;
      await client.query('COMMIT');
      await client.end();
    },
  };
}

const ENGINES = [
  { engine: 'sqlite', skip: null },
  { engine: 'postgresql', skip: unmet(postgresUnavailable()) },
] as const;

describe.each(ENGINES)('what the database refuses or cannot store, while documents are indexed ($engine)', ({ engine, skip }) => {
  if (skip) {
    it.skip(`needs PostgreSQL: ${skip}`, () => undefined);
    return;
  }
  let d: Daemon | undefined;
  let databaseUrl: string | undefined;
  let user: TestUser;
  beforeAll(async () => {
    databaseUrl = engine === 'postgresql' ? await newPostgresDatabase() : undefined;
    d = await startDaemon({ databaseUrl, args: ['--ingest-workers', '2'] });
    user = await addUser(d);
  }, 120_000);
  afterAll(async () => {
    if (!d) return;
    await d.stop();
    removeDir(d.dataDir);
  });

  it('writes refused while a document is indexed: the document retried, the loops going on, health saying so meanwhile', async () => {
    if (!d) throw new Error('no daemon');
    const doc = async (id: string) => (await api(d!, `/api/v1/documents/${id}`, { token: user.apiKey })).body;
    const queueHealth = async () => (await api(d!, '/api/v1/health')).body.components.queue;

    // Big enough to be still indexing (writing its progress every second) when the database starts refusing; small
    // enough that indexing it again after is quick.
    const up = await uploadFiles(d, user.apiKey, [{ name: 'long.txt', bytes: bigText(0.15) }]);
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    await waitFor(async () => (await doc(id)).status === 'processing', 60_000, 'the document being indexed', { intervalMs: 20 });

    const hold = databaseUrl ? await holdPostgresAndCancel(databaseUrl) : holdSqliteWriteLock(d);
    let failing: unknown;
    try {
      // A progress write is refused (the pipeline's failure), then so is the retry's write that records it.
      failing = await waitFor(async () => {
        const queue = await queueHealth();
        return queue.status === 'down' ? queue : undefined;
      }, 90_000, "health's queue down while the writes are refused", { intervalMs: 200 });
    } finally {
      await hold.release();
    }

    // Handed back seconds after the database takes writes again, and indexed anew (which takes as long as the first
    // run did: minutes on a loaded machine), not left until its lease (120 s from its last renewal) runs out and a
    // reclaim (ingest.reclaimed) hands it to another loop.
    const settled = await waitFor(async () => {
      const now = await doc(id);
      return now.status === 'ready' || now.status === 'failed' ? now : undefined;
    }, 180_000, 'the document settled');
    expect(settled).toMatchObject({ status: 'ready', error: null });
    expect(d.stdout()).not.toMatch(/"event":"ingest\.reclaimed"/);
    await d.logLine(/"event":"ingest\.worker_recovered"/, 30_000);
    expect(await queueHealth()).toEqual({ status: 'up' });
    // Up again once the loops' claims are written, not only after the document handed back was indexed again.
    const log = d.stdout();
    const ingested = log.indexOf('"event":"document.ingested"');
    expect(ingested).toBeGreaterThan(-1);
    expect(log.indexOf('"event":"ingest.worker_recovered"')).toBeLessThan(ingested);
    expect(failing).toEqual({ status: 'down', error: expect.stringMatching(/^ingestion fails and retries since .+ \(see the log: ingest\.worker_failing\)$/) });
    expect(d.stdout()).toMatch(/"event":"ingest\.worker_failing"/);

    const next = await uploadFiles(d, user.apiKey, [{ name: 'next.txt', bytes: Buffer.from(prose('after the refused writes', 6)) }], { query: '?wait=true&wait_timeout=60' });
    expect(next.body.documents[0]).toMatchObject({ status: 'ready' });
    expect(await queueHealth()).toEqual({ status: 'up' });
  }, 400_000);

  // A candidate trigger that PostgreSQL refuses and SQLite keeps: NULs in what an e-mail says of itself and its
  // attachments' names. Each is cleaned before it is stored (storableValue, readableName), so nothing reaches the loop.
  it('an e-mail whose sender and attachment names decode to NULs: ready, the NULs left out', async () => {
    if (!d) throw new Error('no daemon');
    const eml = message(
      '=?utf-8?q?Ada=00Lovelace?= <ada@example.org>',
      prose(`nul names ${engine}`, 3),
      { disposition: "filename*=utf-8''first%00part.txt", text: prose(`first attachment ${engine}`, 3) },
      { disposition: 'filename="=?utf-8?q?second=00part.txt?="', text: prose(`second attachment ${engine}`, 3) },
    );
    const up = await uploadFiles(d, user.apiKey, [{ name: 'nul-names.eml', bytes: Buffer.from(eml) }], { query: '?wait=true&wait_timeout=60' });
    expect(up.body.documents[0], JSON.stringify(up.body)).toMatchObject({ status: 'ready' });
    const carrier = (await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { token: user.apiKey })).body;
    expect(carrier.metadata.email.from).toBe('AdaLovelace <ada@example.org>');
    const attachments = await waitFor(async () => {
      const list = (await api(d!, '/api/v1/documents?limit=50', { token: user.apiKey })).body.documents as { filename: string; status: string; attached_to: string | null }[];
      const mine = list.filter((x) => x.attached_to === carrier.id);
      return mine.length === 2 && mine.every((x) => x.status === 'ready') ? mine : undefined;
    }, 60_000, 'the attachments ready');
    expect(attachments.map((x) => x.filename).sort()).toEqual(['firstpart.txt', 'secondpart.txt']);
    expect((await api(d, '/api/v1/health')).body.components.queue).toEqual({ status: 'up' });
  }, 120_000);
});

describe("an e-mail's attachment that cannot be stored", () => {
  let d: Daemon | undefined;
  afterAll(async () => {
    if (!d) return;
    await d.stop();
    removeDir(d.dataDir);
  });

  it("is the message's attempt, retried, and the message and its attachment are ready once it can be", async () => {
    d = await startDaemon({ args: ['--ingest-workers', '2'] });
    const user = await addUser(d);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    // The attachment's originals' folder (files/<first two hex digits>/) is taken by a file; the message's is not.
    let mail: Buffer;
    let attachment: Buffer;
    for (let n = 0; ; n++) {
      attachment = Buffer.from(prose(`attached notes ${n}`, 4));
      mail = Buffer.from(message('Ada <ada@example.com>', prose('the message body', 3), { disposition: 'filename="notes.txt"', text: attachment.toString('base64'), base64: true }));
      if (sha(mail).slice(0, 2) !== sha(attachment).slice(0, 2)) break;
    }
    const stray = join(d.dataDir, 'files', sha(attachment).slice(0, 2));
    writeFileSync(stray, 'not a folder');

    const up = await uploadFiles(d, user.apiKey, [{ name: 'survey.eml', bytes: mail }]);
    expect(up.status).toBe(202);
    const id = up.body.documents[0].id as string;
    const failed = JSON.parse(await d.logLine((line) => line.includes('"event":"ingest.failed"') && line.includes(id), 60_000));
    expect(failed).toMatchObject({ document_id: id, attempts: 1, error: expect.stringMatching(/^indexing failed: ENOTDIR: not a directory/), retry_at: expect.any(String) });
    expect((await api(d, '/api/v1/health')).body.components.queue).toEqual({ status: 'up' });

    rmSync(stray);
    const doc = async (docId: string) => (await api(d!, `/api/v1/documents/${docId}`, { token: user.apiKey })).body;
    const ready = await waitFor(async () => {
      const now = await doc(id);
      return now.status === 'ready' || now.status === 'failed' ? now : undefined;
    }, 60_000, 'the message settled');
    expect(ready).toMatchObject({ status: 'ready', error: null });
    const list = (await api(d, '/api/v1/documents?limit=10', { token: user.apiKey })).body;
    const notes = list.documents.find((x: { filename: string }) => x.filename === 'notes.txt');
    expect(notes).toBeDefined();
    await waitFor(async () => (await doc(notes.id)).status === 'ready', 60_000, 'the attachment ready');
    expect((await api(d, '/api/v1/health')).body.components.queue).toEqual({ status: 'up' });
  }, 300_000);
});
