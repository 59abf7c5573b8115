/**
 * The built daemon (dist/server/daemon.js) started in the test's own process, on an ephemeral port with a temp data
 * dir, as `serve` starts it: for a test that counts what a request asks of a service the routes reach through
 * `services` (the store, access), which the spawned daemon of test/helpers/daemon.ts keeps out of reach. Everything
 * else is that daemon's: real HTTP, the real stores and model; users come from the same operator command (addUser).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { RunningDaemon } from '../../src/server/daemon.js';
import type { Services } from '../../src/server/services.js';
import { type Daemon, newTestDatabase, removeDir, TEST_MODEL_CACHE } from '../helpers/daemon.js';

const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;

export interface InProcessDaemon {
  /** What addUser, api and loggedIn read of a daemon: its address, data dir and database. */
  d: Daemon;
  services: Services;
  stop(): Promise<void>;
}

export async function daemonInProcess(): Promise<InProcessDaemon> {
  const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-test-'));
  const databaseUrl = process.env.DOCSEARCH_TEST_ENGINE === 'postgresql' ? await newTestDatabase() : undefined;
  const env: Record<string, string> = databaseUrl ? { DOCSEARCH_DATABASE_URL: databaseUrl } : {};
  const { resolveConfig } = (await import(dist('server/config.js'))) as typeof import('../../src/server/config.js');
  const { startDaemon } = (await import(dist('server/daemon.js'))) as typeof import('../../src/server/daemon.js');
  const { createLogger } = (await import(dist('core/logger.js'))) as typeof import('../../src/core/logger.js');
  const config = resolveConfig({ port: 0, 'data-dir': dataDir, 'model-cache-dir': TEST_MODEL_CACHE }, { ...env, XDG_CONFIG_HOME: join(dataDir, 'config-home') });
  const running: RunningDaemon = await startDaemon({ config, notices: new PassThrough().resume(), logger: createLogger('warn') });
  const d = { url: running.url, dataDir, databaseUrl, env } as Daemon;
  return {
    d,
    services: running.services,
    async stop() {
      await running.close();
      removeDir(dataDir);
    },
  };
}

/**
 * Replaces `services[name]` with a wrapper that tells `seen` of each call the routes make to it (method and answer),
 * until the returned function puts the service back. Calls the service makes to itself are not seen.
 */
export function watchCalls<K extends keyof Services>(services: Services, name: K, seen: (method: string, answer: unknown) => void): () => void {
  const real = services[name];
  services[name] = new Proxy(real as object, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const answer = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (answer instanceof Promise) return answer.then((a) => (seen(String(prop), a), a));
        seen(String(prop), answer);
        return answer;
      };
    },
  }) as Services[K];
  return () => {
    services[name] = real;
  };
}
