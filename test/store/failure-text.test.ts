/**
 * A failure is recorded whatever its message quotes. A parser's error can carry bytes of the file, a source's server
 * its own words, a NUL among them; PostgreSQL refuses a NUL in text where SQLite keeps it, so recording the failure
 * failed there, and the document or the source stayed where it was. Stored without the NUL on both engines, through
 * the stores as the worker and the source scheduler call them.
 */
import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { Db } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { SourceStore } from '../../src/store/sql/sources.js';
import { UserStore } from '../../src/store/sql/users.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const now = () => Date.UTC(2031, 0, 1);

/** A queued document of a new account, and its job claimed as a worker claims it. */
async function claimed(db: Db, tag: string) {
  const jobs = new JobStore(db, now);
  const documents = new DocumentStore(db, jobs, now);
  const userId = (await new UserStore(db, now).create(`${tag}@example.com`, 'h'))!.id;
  const projectId = (await new ProjectStore(db, now).create(userId, { name: tag }))!.id;
  const sha256 = createHash('sha256').update(tag).digest('hex');
  const { document } = await documents.createQueued({ userId, projectId, filename: `${tag}.pdf`, contentType: 'application/pdf', sizeBytes: 1, sha256, metadata: {} });
  const job = (await jobs.claim('worker', 60_000))!;
  expect(job.documentId).toBe(document.id);
  return { documents, id: document.id, job };
}

describeEachEngine('a failure whose message quotes a NUL', ({ handle }) => {
  it('is recorded: the document failed, its error without the NUL', async () => {
    const { documents, id, job } = await claimed(handle().db, 'nul-failed');
    await documents.markFailed(id, job, 'unreadable object at "ab\u0000cd"');
    expect(await documents.get(id)).toMatchObject({ status: 'failed', error: 'unreadable object at "abcd"' });
  });

  it('is recorded when the document waits to be tried again', async () => {
    const { documents, id, job } = await claimed(handle().db, 'nul-requeued');
    await documents.requeue(id, job, 'the model server said "\u0000"', now() + 60_000);
    expect(await documents.get(id)).toMatchObject({ status: 'queued' });
  });

  it("is recorded for a source's pass and for one of its items", async () => {
    const db = handle().db;
    const userId = (await new UserStore(db, now).create('nul-source@example.com', 'h'))!.id;
    const projectId = (await new ProjectStore(db, now).create(userId, { name: 'nul-source' }))!.id;
    const sources = new SourceStore(db, now);
    await sources.create({ id: 'src_nul', projectId, userId, kind: 'web', url: 'https://example.com/', everyMs: 3_600_000, options: {}, sealedSecrets: null });
    const started = (await sources.beginPass('src_nul', 'scheduler', false))!;
    await sources.putItem('src_nul', { path: 'a.pdf', version: 'v1', sha256: null, documentId: null, error: 'the server sent "\u0000"', seenIn: 1 });
    await sources.endPass('src_nul', started.syncingSince!, { cursor: null, result: null, error: 'HTTP 500: "\u0000"', failures: 1, nextSyncAt: now() + 60_000 });
    expect((await sources.itemErrors('src_nul', 10)).items.map((i) => i.error)).toEqual(['the server sent ""']);
    expect(await sources.get(projectId, 'src_nul')).toMatchObject({ error: 'HTTP 500: ""' });
  });
});
