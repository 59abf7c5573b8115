import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { EventChannel, Events } from '../../src/store/coordination.js';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { describeEachEngine } from '../helpers/store-dialects.js';
import { sleep, waitFor } from '../helpers/eventually.js';

/** Records what a subscriber hears. */
function listen(events: Events, channel: EventChannel): string[] {
  const heard: string[] = [];
  events.subscribe(channel, (payload) => heard.push(payload));
  return heard;
}

/** Ends the server sessions of this database that match `where` (as a PostgreSQL restart or a network cut would). */
async function terminate(h: DatabaseHandle, where: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and ${where}`.execute(h.db);
  return rows[0]!.n;
}

describeEachEngine('locks', ({ engine, handle, another }) => {
  it('runs one holder of a key at a time across handles, and other keys meanwhile', async () => {
    const handles = [handle(), await another()];
    let inside = 0;
    let most = 0;
    const order: string[] = [];
    const critical = (i: number) =>
      handles[i % 2]!.locks.withLock('original:abc', async () => {
        most = Math.max(most, ++inside);
        await sleep(20);
        order.push(`a${i}`);
        inside--;
        return i;
      });
    const other = handles[1]!.locks.withLock('original:def', async () => {
      order.push('other');
      return -1;
    });
    const results = await Promise.all([...Array.from({ length: 6 }, (_, i) => critical(i)), other]);
    expect(results).toEqual([0, 1, 2, 3, 4, 5, -1]);
    expect(most).toBe(1);
    expect(order.indexOf('other')).toBeLessThan(order.length - 1); // it did not wait for the six
    // A holder that throws releases the lock.
    await expect(handles[0]!.locks.withLock('original:abc', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await handles[1]!.locks.withLock('original:abc', async () => 'free')).toBe('free');
  });

  it('gives a lease to one taker at a time; release frees it', async () => {
    const [a, b] = [handle(), await another()];
    const lease = await a.locks.tryAcquire('upkeep');
    expect(lease?.held()).toBe(true);
    expect(await b.locks.tryAcquire('upkeep')).toBeNull();
    expect(await a.locks.tryAcquire('upkeep')).toBeNull();
    await lease!.release();
    expect(lease!.held()).toBe(false);
    const next = await b.locks.tryAcquire('upkeep');
    expect(next?.held()).toBe(true);
    await next!.release();
  });

  it('shares a lease among shared takers, and keeps an exclusive taker out until the last lets go (and the other way round)', async () => {
    const [a, b] = [handle(), await another()];
    const first = (await a.locks.tryAcquire('library', 'shared'))!;
    const second = (await b.locks.tryAcquire('library', 'shared'))!;
    expect([first.held(), second.held()]).toEqual([true, true]);
    expect(await a.locks.tryAcquire('library')).toBeNull();
    expect(await b.locks.tryAcquire('library')).toBeNull();
    await first.release();
    expect(await a.locks.tryAcquire('library')).toBeNull();
    await second.release();
    const alone = (await b.locks.tryAcquire('library'))!;
    expect(alone.held()).toBe(true);
    expect(await a.locks.tryAcquire('library', 'shared')).toBeNull();
    expect(await b.locks.tryAcquire('library', 'shared')).toBeNull();
    await alone.release();
    const again = (await a.locks.tryAcquire('library', 'shared'))!;
    expect(again.held()).toBe(true);
    await again.release();
  });

  if (engine === 'postgresql') {
    it('a lease whose connection is cut reports held() false, and another process can take it', async () => {
      const [a, b] = [handle(), await another()];
      const lease = (await a.locks.tryAcquire('leader'))!;
      expect(await b.locks.tryAcquire('leader')).toBeNull();
      expect(await terminate(b, sql`pid in (select pid from pg_locks where locktype = 'advisory')`)).toBe(1);
      await waitFor(() => !lease.held(), 15_000, 'the lease to notice', { intervalMs: 25 });
      const taken = await waitFor(() => b.locks.tryAcquire('leader'), 15_000, 'the lock to be free', { intervalMs: 25 });
      expect(taken.held()).toBe(true);
      await taken.release();
      await lease.release(); // releasing a lost lease is harmless
    });

    it('a closed handle gives its locks back', async () => {
      const a = await another();
      expect(await a.locks.tryAcquire('closing')).not.toBeNull();
      await a.close();
      const again = await handle().locks.tryAcquire('closing');
      expect(again).not.toBeNull();
      await again!.release();
    });
  }
});

describeEachEngine('events', ({ engine, handle, another }) => {
  it('reaches subscribers in this process once and in every other process', async () => {
    const [a, b] = [handle(), await another()];
    const hereA = listen(a.events, 'document_settled');
    const hereB = listen(b.events, 'document_settled');
    const jobsB = listen(b.events, 'jobs');
    // On PostgreSQL, subscribing starts listening; an empty payload says "look again" once it is in place.
    if (engine === 'postgresql') await waitFor(() => hereB.includes(''), 15_000, 'B to listen', { intervalMs: 25 });
    await a.events.publish('document_settled', 'doc_1');
    expect(hereA.filter(Boolean)).toEqual(['doc_1']); // at once, no round trip
    await waitFor(() => hereB.includes('doc_1'), 15_000, 'B to hear it', { intervalMs: 25 });
    await b.events.publish('jobs', 'doc_2');
    await sleep(300); // time for a second delivery, were there one
    expect(hereA.filter(Boolean)).toEqual(['doc_1']);
    expect(hereB.filter(Boolean)).toEqual(['doc_1']);
    expect(jobsB.filter(Boolean)).toEqual(['doc_2']);
    const off = a.events.subscribe('index_changed', () => {
      throw new Error('a listener that throws');
    });
    const still = listen(a.events, 'index_changed');
    await a.events.publish('index_changed', 'x');
    expect(still).toContain('x');
    off();
  });

  if (engine === 'postgresql') {
    it('listens again after its connection is cut, and tells subscribers to look again', async () => {
      const [a, b] = [handle(), await another()];
      const heard = listen(b.events, 'jobs');
      await waitFor(() => heard.includes(''), 15_000, 'B to listen', { intervalMs: 25 });
      heard.length = 0;
      expect(await terminate(a, sql`query like 'LISTEN%'`)).toBeGreaterThan(0);
      await waitFor(() => heard.includes(''), 15_000, 'the gap signal after reconnecting', { intervalMs: 25 });
      await a.events.publish('jobs', 'after-reconnect');
      await waitFor(() => heard.includes('after-reconnect'), 15_000, 'B to hear events again', { intervalMs: 25 });
    });
  }
});
