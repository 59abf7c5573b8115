/**
 * The library lock on both engines: every daemon holds it shared while it runs, `docsearch migrate` takes it
 * exclusively, so neither starts while the other holds it, and any number of daemons run side by side.
 */
import { expect, it } from 'vitest';
import { holdLibrary, LIBRARY_LOCK, LibraryBusyError } from '../../src/store/library-lock.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

describeEachEngine('library lock', ({ handle, another }) => {
  it('lets daemons hold it together, keeps a migration out while one does, and keeps daemons out while a migration holds it', async () => {
    const [a, b] = [handle(), await another()];
    const first = await holdLibrary(a.locks);
    const second = await holdLibrary(b.locks);
    expect(await a.locks.tryAcquire(LIBRARY_LOCK)).toBeNull();
    await first.release();
    expect(await b.locks.tryAcquire(LIBRARY_LOCK)).toBeNull();
    await second.release();

    const migration = (await a.locks.tryAcquire(LIBRARY_LOCK))!;
    expect(migration.held()).toBe(true);
    await expect(holdLibrary(b.locks)).rejects.toThrow(LibraryBusyError);
    await expect(holdLibrary(b.locks)).rejects.toThrow(/`docsearch migrate` is copying this library/);
    await migration.release();
    const after = await holdLibrary(b.locks);
    await after.release();
  });
});
