import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { bigText, prose } from './fixtures.js';
import { uploadFiles, waitFor } from './helpers.js';

/**
 * #12 item 6: one user's huge file must not hold everyone's ingestion. A 20 MB text (about 20k chunks, many
 * minutes of model time) is being ingested for Alice when Bob uploads a page: Bob's is ready while Alice's is
 * still far from done, and Alice's progress keeps moving.
 */
describe('fair ingestion', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
    bob = await addUser(d);
  }, { cleanExit: false });

  it("gets another user's one-page upload ready while a 20 MB text is being ingested", async () => {
    const big = await uploadFiles(d, alice.apiKey, [{ name: 'big.txt', bytes: bigText(20) }]);
    expect(big.status).toBe(202);
    const bigId = big.body.documents[0].id as string;
    // Wait until the big document is well into embedding (past parsing), the worst time to arrive.
    const first = await waitFor(
      async () => {
        const doc = (await api(d, `/api/v1/documents/${bigId}`, { token: alice.apiKey })).body;
        return doc.status === 'processing' && doc.progress > 0.1 ? (doc.progress as number) : undefined;
      },
      120_000,
      'the big document to be embedding',
    );

    // Bob's page is ready while Alice's minutes of model time are still under way: it did not wait behind them.
    // (Not a wall-clock bound: on the shared 2-core CI seconds measure the other jobs too.)
    const small = await uploadFiles(d, bob.apiKey, [{ name: 'page.txt', bytes: Buffer.from(prose('one page from bob', 25)) }], {
      query: '?wait=true',
    });
    expect(small.body.documents[0].status).toBe('ready');
    const meanwhile = (await api(d, `/api/v1/documents/${bigId}`, { token: alice.apiKey })).body;
    expect(meanwhile.status, "Alice's 20 MB text when Bob's page is ready").toBe('processing');

    const later = await waitFor(
      async () => {
        const doc = (await api(d, `/api/v1/documents/${bigId}`, { token: alice.apiKey })).body;
        return doc.progress > first ? doc : undefined;
      },
      60_000,
      'the big document to make progress',
    );
    expect(later.status).toBe('processing');
    expect((await api(d, `/api/v1/documents/${bigId}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
  }, 300_000);
});
