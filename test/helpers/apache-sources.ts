/**
 * Apache (WebDAV and git http-backend) and a daemon allowed to reach it, with a signed-in user's source client, for
 * one describe block of source tests: started before its tests, stopped after them.
 */
import { afterAll, beforeAll } from 'vitest';
import { type Apache, startApache } from './apache.js';
import { addUser, type Daemon, removeDir, startDaemon } from './daemon.js';
import { SourceClient } from './sources.js';

export interface ApacheSources {
  apache: Apache;
  d: Daemon;
  client: SourceClient;
}

/** Read its fields inside the block's tests (they are set once `beforeAll` has run); `args` are the daemon's extra flags. */
export function apacheSources(args: string[] = [], timeoutMs = 120_000): ApacheSources {
  const world = {} as ApacheSources;
  beforeAll(async () => {
    world.apache = await startApache();
    world.d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1', ...args] });
    world.client = new SourceClient(world.d, (await addUser(world.d)).apiKey);
  }, timeoutMs);
  afterAll(async () => {
    await world.d?.stop();
    if (world.d) removeDir(world.d.dataDir);
    await world.apache?.stop();
  });
  return world;
}
