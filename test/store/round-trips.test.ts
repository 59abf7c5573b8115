import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { openFresh } from '../helpers/store-dialects.js';

/**
 * In shared mode every statement is a round trip to PostgreSQL, and a replica's CPU per document grew with them
 * (bench:scale: ~0.6 CPU-ms each on a crowded 2-core machine). A document's path through the queue (queued,
 * claimed, processing, ready) is one statement a step, BEGIN and COMMIT included: counted here as the `pg`
 * driver sends them.
 */
const skip = postgresUnavailable();
describe.skipIf(skip !== null)(`a document's round trips to PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let h: DatabaseHandle;
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  beforeAll(async () => {
    h = await openFresh('postgresql');
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0];
      sent.push(typeof q === 'string' ? q : String((q as { text?: string })?.text));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await h?.close();
  });

  /** The statements `step` sent. */
  async function statements<T>(step: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
    sent.length = 0;
    const result = await step();
    return { result, sent: [...sent] };
  }

  it('queues, claims, starts and finishes a document in one statement each; an empty claim is one too', async () => {
    let t = Date.UTC(2030, 0, 1);
    const now = () => ++t;
    const userId = (await new UserStore(h.db, now).create('trips@example.com', 'h'))!.id;
    const project = await new ProjectStore(h.db, now).ensureDefault(userId);
    const jobs = new JobStore(h.db, now);
    const documents = new DocumentStore(h.db, jobs, now);
    const input = { userId, projectId: project.id, filename: 'a.txt', contentType: 'text/plain', sizeBytes: 1, sha256: 'c'.repeat(64), metadata: {}, path: 'a.txt' };

    const queued = await statements(() => documents.createQueued(input));
    expect(queued.sent).toHaveLength(1);
    expect(queued.result.duplicate).toBe(false);
    const claimed = await statements(() => jobs.claim('w', 60_000));
    expect(claimed.sent).toHaveLength(1);
    expect(claimed.result).toMatchObject({ documentId: queued.result.document.id, owner: 'w', attempts: 1 });
    const started = await statements(() => documents.markProcessing(claimed.result!.documentId));
    expect(started.sent).toHaveLength(1);
    expect(started.result).toMatchObject({ id: queued.result.document.id, status: 'processing' });
    const ready = await statements(() => documents.markReady(claimed.result!.documentId, claimed.result!, { chunkCount: 1, pages: null, warnings: [], embedderId: 'e' }));
    expect(ready.sent).toHaveLength(1);
    expect(ready.result).toBe(true);
    expect((await statements(() => jobs.claim('w', 60_000))).sent).toHaveLength(1);

    // The same bytes again: the insert finds them and a second statement reads the document they made.
    const duplicate = await statements(() => documents.createQueued(input));
    expect(duplicate.result).toMatchObject({ duplicate: true, document: { id: queued.result.document.id } });
    expect(duplicate.sent).toHaveLength(2);
    expect(await jobs.countOpen()).toBe(0);
  });
});
