/**
 * Races in a document's life as a busy team causes them, through the real daemon on SQLite and PostgreSQL (one ingest
 * worker, so what is uploaded after a document is indexed only once that one's job is over). What is checked is the
 * LanceDB rows and the originals on disk, not only the API:
 * - a restore and a purge of one trashed document sent together: one wins, whole (a purge that had found it in the
 *   trash removed it, chunks, row and original, after the restore had answered 200); so did an upload of its bytes,
 *   which removes the trashed copy first, and then made a new document;
 * - an e-mail deleted into the trash while it is indexed: the attachments its job makes go into the trash with it
 *   (they were live, listed and found, with their message in the trash) and come back with it;
 * - a project deleted while a document of it is indexed, or while an e-mail's job makes its attachments (that stopped
 *   the worker: nothing more was indexed until a restart);
 * - an API key revoked, or an account disabled, while its upload's body is still arriving: 401, nothing stored (it
 *   was stored and queued on their behalf); a share removed meanwhile: 404, nothing stored;
 * - the same file uploaded six times at once with a label each: one document, every label on every chunk.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, REPO, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { heldUpload } from '../helpers/held-upload.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { newPostgresDatabase } from '../helpers/store-dialects.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { storedChunks, storedFiles, uploadFiles } from '../ingest/pipeline/helpers.js';

/** A document's chunk rows as stored (read only, as storedChunks reads them): their ids, project and label ids. */
async function chunkPlaces(dataDir: string, documentId: string): Promise<{ id: string; project_id: string; labels: string[] }[]> {
  const { readStoredIndex } = (await import(join(REPO, 'dist/store/lancedb/table-reader.js'))) as typeof import('../../src/store/lancedb/table-reader.js');
  const { VectorStore } = (await import(join(REPO, 'dist/store/lancedb/connection.js'))) as typeof import('../../src/store/lancedb/connection.js');
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  try {
    const rows: { id: string; project_id: string; labels: string[] }[] = [];
    const { chunks } = await readStoredIndex(store);
    for await (const batch of chunks!.scan(['id', 'document_id', 'project_id', 'labels'])) {
      for (const proxy of batch.toArray()) {
        const row = proxy.toJSON() as { id: string; document_id: string; project_id: string; labels: Iterable<string> | null };
        if (row.document_id === documentId) rows.push({ id: row.id, project_id: row.project_id, labels: [...(row.labels ?? [])].sort() });
      }
    }
    return rows;
  } finally {
    await store.close();
  }
}

const ENGINES = [
  { engine: 'sqlite', skip: null },
  { engine: 'postgresql', skip: postgresUnavailable() },
] as const;

/** A message whose long body keeps the worker busy for a while, with a text attachment its job makes a document of. */
function slowMessage(tag: string): Buffer {
  const body = prose(`${tag}-body`, 2500);
  const attachment = Buffer.from(`The ${tag} attachment lists the tide tables for the harbour entrance.\n`).toString('base64');
  return Buffer.from(
    [
      'From: Harbour Master <master@port.example>',
      'To: Pilot Office <pilots@port.example>',
      `Subject: ${tag} survey`,
      'Date: Wed, 05 Mar 2025 10:30:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="BOUNDARY"',
      '',
      '--BOUNDARY',
      'Content-Type: text/plain; charset="utf-8"',
      '',
      body,
      '--BOUNDARY',
      'Content-Type: text/plain; charset="utf-8"',
      `Content-Disposition: attachment; filename="${tag}-tides.txt"`,
      'Content-Transfer-Encoding: base64',
      '',
      attachment,
      '--BOUNDARY--',
      '',
    ].join('\r\n'),
  );
}

/** A short message with many text attachments: its job spends a while making their documents once its own text is in. */
function manyAttachments(tag: string): Buffer {
  const parts = Array.from({ length: 100 }, (_, i) => [
    '--BOUNDARY',
    'Content-Type: text/plain; charset="utf-8"',
    `Content-Disposition: attachment; filename="${tag}-${i}.txt"`,
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(`${prose(`${tag}-attachment-${i}`, 800)}\n`).toString('base64').replace(/.{76}/g, '$&\r\n'),
  ].join('\r\n'));
  return Buffer.from(
    ['From: a@port.example', 'To: b@port.example', `Subject: ${tag}`, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="BOUNDARY"', '', '--BOUNDARY', 'Content-Type: text/plain', '', `The ${tag} papers.`, ...parts, '--BOUNDARY--', ''].join('\r\n'),
  );
}

for (const { engine, skip } of ENGINES) {
  describe.skipIf(skip !== null)(`races in a document's life (${engine})`, () => {
    let d: Daemon;
    let alice: TestUser;

    beforeAll(async () => {
      d = await startDaemon({ args: ['--ingest-workers', '1'], ...(engine === 'postgresql' ? { databaseUrl: await newPostgresDatabase() } : {}) });
      alice = await addUser(d);
    }, 60_000);
    afterAll(async () => {
      if (!d) return;
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    });

    const project = async (name: string): Promise<string> => {
      const res = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    };
    const documentsOf = async (projectId: string): Promise<any[]> => {
      const res = await api(d, `/api/v1/documents?project_id=${projectId}&limit=100`, { token: alice.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.documents;
    };
    const trashOf = async (projectId: string): Promise<any[]> => {
      const res = await api(d, `/api/v1/trash?project_id=${projectId}&limit=100`, { token: alice.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.documents;
    };

    it('a restore and a purge of one trashed document sent together: one of them wins, and what it says holds', { timeout: 240_000 }, async () => {
      const p = await project('restore-or-purge');
      const files = Array.from({ length: 8 }, (_, i) => ({ name: `note-${i}.txt`, bytes: Buffer.from(`${prose(`race-${engine}-${i}`, 30)}\n`) }));
      const up = await uploadFiles(d, alice.apiKey, files, { projectId: p, query: '?wait=true&wait_timeout=200' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const docs = up.body.documents as { id: string; sha256: string; status: string }[];
      expect(docs.map((x) => x.status)).toEqual(files.map(() => 'ready'));
      for (const doc of docs) expect((await api(d, `/api/v1/documents/${doc.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);

      // The purge first: it has looked at the trash when the restore arrives, and removes the chunks meanwhile.
      const outcomes = await Promise.all(
        docs.map(async (doc) => {
          const purge = api(d, `/api/v1/trash/${doc.id}`, { method: 'DELETE', token: alice.apiKey });
          const restore = api(d, `/api/v1/trash/${doc.id}/restore`, { method: 'POST', token: alice.apiKey });
          return { doc, purge: (await purge).status, restore: (await restore).status };
        }),
      );
      for (const { doc, purge, restore } of outcomes) {
        const what = `${doc.id}: purge ${purge}, restore ${restore}`;
        const kept = restore === 200;
        // Exactly one of them did it; the other found nothing in the trash.
        expect(kept ? [restore, purge] : [purge, restore], what).toEqual(kept ? [200, 404] : [204, 404]);
        expect((await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey })).status, what).toBe(kept ? 200 : 404);
        expect((await storedChunks(d.dataDir, doc.id)).count > 0, what).toBe(kept);
        expect(storedFiles(d.dataDir).originals.some((name) => name.startsWith(doc.sha256)), what).toBe(kept);
      }
      expect(await trashOf(p)).toEqual([]);
    });

    it('the same bytes uploaded again while their trashed document is restored: the restored one stays, the upload is it', { timeout: 240_000 }, async () => {
      const p = await project('restore-or-upload');
      const files = Array.from({ length: 16 }, (_, i) => ({ name: `again-${i}.txt`, bytes: Buffer.from(`${prose(`again-${engine}-${i}`, 30)}\n`) }));
      const up = await uploadFiles(d, alice.apiKey, files, { projectId: p, query: '?wait=true&wait_timeout=200' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const docs = up.body.documents as { id: string }[];
      for (const doc of docs) expect((await api(d, `/api/v1/documents/${doc.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      // Each restore a little later than the last, so that some arrive while the upload removes the trashed copy.
      const outcomes = await Promise.all(
        docs.map(async (doc, i) => {
          const upload = uploadFiles(d, alice.apiKey, [files[i]!], { projectId: p });
          await new Promise((r) => setTimeout(r, i * 4));
          const restore = await api(d, `/api/v1/trash/${doc.id}/restore`, { method: 'POST', token: alice.apiKey });
          return { doc, restore: restore.status, upload: await upload };
        }),
      );
      for (const { doc, restore, upload } of outcomes) {
        expect(upload.status).toBe(202);
        const what = `${doc.id}: restore ${restore}, upload ${JSON.stringify(upload.body.documents[0])}`;
        if (restore === 200) {
          // Restored first: the upload is that document again.
          expect(upload.body.documents[0], what).toMatchObject({ id: doc.id, duplicate: true });
          expect((await api(d, `/api/v1/documents/${doc.id}`, { token: alice.apiKey })).status, what).toBe(200);
        } else {
          expect(restore, what).toBe(404);
          expect(upload.body.documents[0].id, what).not.toBe(doc.id);
        }
      }
    });

    it("an e-mail deleted while it is being indexed: the attachments its job makes go into the trash with it, and come back with it", { timeout: 300_000 }, async () => {
      const p = await project('mail-trashed-while-indexed');
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'survey.eml', bytes: slowMessage(`trashed-${engine}`) }], { projectId: p });
      expect(up.status, JSON.stringify(up.body)).toBe(202);
      const message = up.body.documents[0].id as string;
      await waitFor(async () => (await documentsOf(p)).find((x) => x.id === message)?.status === 'processing', 120_000, 'the message being indexed', { intervalMs: 20 });
      expect((await api(d, `/api/v1/documents/${message}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      // Deleted while indexed, not after (its attachments are not made yet): what this test is about.
      expect((await trashOf(p)).map((x) => [x.id, x.status])).toEqual([[message, 'processing']]);
      // Its job goes on to the end (the trash keeps what it makes): then nothing of the message is live in the project.
      await waitFor(async () => (await trashOf(p)).find((x) => x.id === message)?.status === 'ready', 240_000, 'the trashed message indexed');
      // What its job made meanwhile has had its turn at the worker (one worker: anything queued after it is done too).
      const probe = await uploadFiles(d, alice.apiKey, [{ name: 'after.txt', bytes: Buffer.from(`${prose(`after-${engine}`, 5)}\n`) }], { query: '?wait=true&wait_timeout=200' });
      expect(probe.status, JSON.stringify(probe.body)).toBe(200);
      expect((await documentsOf(p)).map((x) => `${x.filename} (${x.status})`)).toEqual([]);
      expect((await trashOf(p)).map((x) => x.id)).toEqual([message]);
      const found = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'tide tables for the harbour entrance', mode: 'keyword', project_ids: [p] } });
      expect(found.status).toBe(200);
      expect(found.body.results).toEqual([]);

      // Restored, the message comes back with its attachment, which is found again.
      expect((await api(d, `/api/v1/trash/${message}/restore`, { method: 'POST', token: alice.apiKey })).status).toBe(200);
      const back = await waitFor(async () => {
        const listed = await documentsOf(p);
        return listed.length === 2 && listed.every((x) => x.status === 'ready') && listed;
      }, 120_000, 'the message and its attachment ready');
      const made = back.find((x) => x.id !== message)!;
      expect(made).toMatchObject({ attached_to: message, filename: `trashed-${engine}-tides.txt` });
      expect((await storedChunks(d.dataDir, made.id)).count).toBeGreaterThan(0);
      const again = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'tide tables for the harbour entrance', mode: 'keyword', project_ids: [p] } });
      expect(again.body.results.map((r: any) => r.document.id)).toContain(made.id);
    });

    it("a project deleted while an e-mail of it is being indexed: no rows or originals of it stay, and the worker goes on", { timeout: 300_000 }, async () => {
      const p = await project('deleted-while-indexed');
      const eml = slowMessage(`deleted-${engine}`);
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'survey.eml', bytes: eml }], { projectId: p });
      expect(up.status, JSON.stringify(up.body)).toBe(202);
      const message = up.body.documents[0] as { id: string; sha256: string };
      await waitFor(async () => (await documentsOf(p)).find((x) => x.id === message.id)?.status === 'processing', 120_000, 'the message being indexed', { intervalMs: 20 });
      expect((await api(d, `/api/v1/projects/${p}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      // One worker: a document uploaded after it is indexed only once the message's job is over.
      const probe = await uploadFiles(d, alice.apiKey, [{ name: 'later.txt', bytes: Buffer.from(`${prose(`later-${engine}`, 5)}\n`) }], { query: '?wait=true&wait_timeout=200' });
      expect(probe.status, JSON.stringify(probe.body)).toBe(200);
      expect(probe.body.documents[0].status).toBe('ready');
      expect((await storedChunks(d.dataDir, message.id)).count).toBe(0);
      expect(storedFiles(d.dataDir).originals.filter((name) => name.startsWith(message.sha256))).toEqual([]);
      // Neither the worker's loop (it backs off and logs this) nor the message's job (it would be retried) met an error.
      expect(d.stdout()).not.toMatch(/"event":"ingest\.worker_failing"/);
      expect(d.stdout().split('\n').filter((line) => line.includes('"event":"ingest.failed"') && line.includes(message.id))).toEqual([]);
    });

    /**
     * An upload whose body is still arriving when what lets it in ends (`end`): answered `refused` once it has
     * arrived, and nothing of it stored — no document, no original, no temp file.
     */
    const uploadOutlivingCredential = async (token: string, tag: string, end: () => Promise<void>, refused = 401, projectId?: string) => {
      const text = `${prose(`outlived-${engine}-${tag}`, 40)}\n`;
      const { status, body } = await heldUpload(d, '/api/v1/upload', { authorization: `Bearer ${token}` }, projectId ? { project_id: projectId } : {}, { name: `${tag}.txt`, text }, end);
      expect(status, body).toBe(refused);
      const listed = await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey });
      expect(listed.body.documents.map((x: any) => x.filename)).not.toContain(`${tag}.txt`);
      expect(storedFiles(d.dataDir).temp).toEqual([]);
    };

    it('an API key revoked while its upload is still arriving: nothing of the upload is stored', { timeout: 120_000 }, async () => {
      const key = await api(d, '/api/v1/keys', { token: alice.apiKey, body: { name: 'short-lived' } });
      expect(key.status, JSON.stringify(key.body)).toBe(201);
      const originals = storedFiles(d.dataDir).originals.length;
      await uploadOutlivingCredential(key.body.key, 'revoked', async () => {
        expect((await api(d, `/api/v1/keys/${key.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      });
      expect(storedFiles(d.dataDir).originals.length).toBe(originals);
    });

    it("an account disabled while its upload into a shared project is still arriving: nothing of the upload is stored", { timeout: 120_000 }, async () => {
      const p = await project('shared-with-bob');
      const bob = await addUser(d);
      expect((await api(d, `/api/v1/projects/${p}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'editor' } })).status).toBe(201);
      const originals = storedFiles(d.dataDir).originals.length;
      await uploadOutlivingCredential(bob.apiKey, 'disabled', async () => {
        const disabled = await runCli(['users', 'disable', bob.email, '--yes', '--data-dir', d.dataDir], { env: d.env });
        expect(disabled.code, disabled.stderr).toBe(0);
      });
      expect(await documentsOf(p)).toEqual([]);
      expect(storedFiles(d.dataDir).originals.length).toBe(originals);
    });

    it("a share removed while that member's upload into the project is still arriving: nothing of the upload is stored", { timeout: 120_000 }, async () => {
      const p = await project('shared-then-not');
      const carol = await addUser(d);
      const shared = await api(d, `/api/v1/projects/${p}/members`, { token: alice.apiKey, body: { email: carol.email, role: 'editor' } });
      expect(shared.status).toBe(201);
      const originals = storedFiles(d.dataDir).originals.length;
      await uploadOutlivingCredential(carol.apiKey, 'unshared', async () => {
        expect((await api(d, `/api/v1/projects/${p}/members/${shared.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      }, 404, p);
      expect(await documentsOf(p)).toEqual([]);
      expect(storedFiles(d.dataDir).originals.length).toBe(originals);
    });

    it('the same file uploaded six times at once, each with a label of its own: one document, with every label, on every chunk', { timeout: 240_000 }, async () => {
      const p = await project('same-file-at-once');
      const bytes = Buffer.from(`${prose(`same-${engine}`, 60)}\n`);
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => uploadFiles(d, alice.apiKey, [{ name: 'same.txt', bytes }], { projectId: p, fields: { labels: `crew-${i}` } })));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
      const docs = answers.map((a) => a.body.documents[0] as { id: string; sha256: string; duplicate?: boolean });
      expect(new Set(docs.map((x) => x.id)).size).toBe(1);
      expect(docs.filter((x) => x.duplicate !== true)).toHaveLength(1);
      const id = docs[0]!.id;
      const doc = await waitFor(async () => {
        const got = (await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey })).body;
        return got.status === 'ready' && got;
      }, 120_000, 'the document ready');
      const labels = Array.from({ length: 6 }, (_, i) => `crew-${i}`);
      expect([...doc.labels].sort()).toEqual(labels);
      expect((await documentsOf(p)).map((x) => x.id)).toEqual([id]);
      expect(storedFiles(d.dataDir).originals.filter((name) => name.startsWith(docs[0]!.sha256))).toHaveLength(1);
      const labelIds = new Map(((await api(d, `/api/v1/projects/${p}/labels`, { token: alice.apiKey })).body.labels as { id: string; name: string }[]).map((l) => [l.name, l.id]));
      const rows = await chunkPlaces(d.dataDir, id);
      expect(rows.length).toBe(doc.chunk_count);
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      for (const row of rows) expect(row).toMatchObject({ project_id: p, labels: labels.map((n) => labelIds.get(n)).sort() });
    });

    it("a project deleted while an e-mail's job makes its attachments: the worker goes on, and nothing of the message stays", { timeout: 300_000 }, async () => {
      const p = await project('deleted-while-attaching');
      const up = await uploadFiles(d, alice.apiKey, [{ name: 'papers.eml', bytes: manyAttachments(`attaching-${engine}`) }], { projectId: p });
      expect(up.status, JSON.stringify(up.body)).toBe(202);
      const message = up.body.documents[0] as { id: string; sha256: string };
      // Its first attachments are documents: the rest are being made.
      await waitFor(async () => (await documentsOf(p)).some((x) => x.attached_to === message.id), 120_000, 'attachments being made', { intervalMs: 10 });
      expect((await api(d, `/api/v1/projects/${p}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      const probe = await uploadFiles(d, alice.apiKey, [{ name: 'then.txt', bytes: Buffer.from(`${prose(`then-${engine}`, 5)}\n`) }], { query: '?wait=true&wait_timeout=120' });
      expect(probe.status, JSON.stringify(probe.body)).toBe(200);
      // Neither the worker's loop (it backs off and logs this) nor the message's job (it would be retried) met an error.
      expect(d.stdout()).not.toMatch(/"event":"ingest\.worker_failing"/);
      expect(d.stdout().split('\n').filter((line) => line.includes('"event":"ingest.failed"') && line.includes(message.id))).toEqual([]);
      expect((await chunkPlaces(d.dataDir, message.id)).length).toBe(0);
      expect(storedFiles(d.dataDir).originals.filter((name) => name.startsWith(message.sha256))).toEqual([]);
    });
  });
}
