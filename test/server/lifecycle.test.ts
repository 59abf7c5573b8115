import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionHelp } from '../../src/server/config.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, TEST_MODEL_CACHE } from '../helpers/daemon.js';

async function allProjectNames(d: Daemon, token: string): Promise<Set<string>> {
  const names = new Set<string>();
  let cursor: string | null = null;
  do {
    const res = await api(d, `/api/v1/projects?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token });
    expect(res.status).toBe(200);
    for (const p of res.body.projects as { name: string }[]) names.add(p.name);
    cursor = res.body.next_cursor;
  } while (cursor);
  return names;
}

describe('daemon lifecycle', () => {
  it('SIGTERM during a burst of writes exits 0 and loses no acknowledged write', async () => {
    const d = await startDaemon();
    try {
      const u = await addUser(d);
      const N = 150;
      let acknowledged = 0;
      let signalled = false;
      let inFlightAtSignal = 0;
      const outcomes = await Promise.all(
        Array.from({ length: N }, async (_, i) => {
          const name = `burst-${i}`;
          try {
            const res = await api(d, '/api/v1/projects', { token: u.apiKey, body: { name } });
            if (res.status === 201) acknowledged++;
            // Signal as soon as the first writes land, while the rest are still on the wire.
            if (!signalled && acknowledged >= 5) {
              signalled = true;
              inFlightAtSignal = N - acknowledged;
              d.proc.kill('SIGTERM');
            }
            return { name, status: res.status };
          } catch {
            return { name, status: 0 }; // connection refused or reset after shutdown began
          }
        }),
      );
      if (!signalled) d.proc.kill('SIGTERM');
      // Wait for the exit without signalling again: a second SIGTERM would skip the graceful path.
      const code = d.proc.exitCode ?? d.proc.signalCode ?? (await new Promise((r) => d.proc.once('close', (c, sig) => r(c ?? sig))));
      expect(code).toBe(0);
      expect(d.stderr()).toContain('received SIGTERM, finishing in-flight requests');
      expect(inFlightAtSignal).toBeGreaterThan(0);

      const ok = outcomes.filter((o) => o.status === 201).map((o) => o.name);
      expect(ok.length).toBeGreaterThanOrEqual(5);
      // Anything that was answered got a real answer: 201, or no response at all (never a 5xx).
      for (const o of outcomes) expect([0, 201], o.name).toContain(o.status);

      const again = await startDaemon({ dataDir: d.dataDir });
      try {
        const names = await allProjectNames(again, u.apiKey);
        const lost = ok.filter((n) => !names.has(n));
        expect(lost).toEqual([]);
      } finally {
        expect(await again.stop()).toBe(0);
      }
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  });

  it('SIGINT also exits 0', async () => {
    const d = await startDaemon();
    try {
      expect(await d.stop('SIGINT')).toBe(0);
      expect(d.stderr()).toContain('received SIGINT');
    } finally {
      removeDir(d.dataDir);
    }
  });

  it('a second daemon on the same data dir refuses to start with a clear message', async () => {
    const d = await startDaemon();
    try {
      const res = await runCli(['serve', '--port', '0', '--data-dir', d.dataDir, '--model-cache-dir', TEST_MODEL_CACHE], {
        env: { XDG_CONFIG_HOME: join(d.dataDir, 'config-home') },
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`error: could not start: another docsearch daemon (pid ${d.proc.pid}) is using ${d.dataDir}; stop it or pick another --data-dir`);
      // The first one is unaffected.
      expect((await api(d, '/api/v1/health')).status).toBe(200);
    } finally {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
  });

  it('a bad configuration value exits 2 naming the option and where it came from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-test-'));
    try {
      const env = { XDG_CONFIG_HOME: join(dir, 'config-home') };
      const flag = await runCli(['serve', '--port', 'eighty', '--data-dir', dir], { env });
      expect(flag.code).toBe(2);
      expect(flag.stderr).toContain('error: option "port" (from --port) must be an integer, got "eighty"');
      expect(flag.stderr).toContain('hint: see `docsearch serve --help`');

      const fromEnv = await runCli(['serve', '--data-dir', dir], { env: { ...env, DOCSEARCH_LOG_LEVEL: 'loud' } });
      expect(fromEnv.code).toBe(2);
      expect(fromEnv.stderr).toContain('option "log-level" (from DOCSEARCH_LOG_LEVEL) must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');

      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ port: 70000 }));
      const fromFile = await runCli(['serve', '--data-dir', dir, '--config', file], { env });
      expect(fromFile.code).toBe(2);
      expect(fromFile.stderr).toContain('option "port" (from config file) must be between 0 and 65535, got 70000');
    } finally {
      removeDir(dir);
    }
  });

  it('serve --help documents every option with its environment variable', async () => {
    const res = await runCli(['serve', '--help']);
    expect(res.code).toBe(0);
    const help = res.stdout.replace(/\s+/g, ' '); // commander wraps long descriptions
    for (const o of optionHelp()) {
      expect(help).toContain(o.flag);
      expect(help).toContain(`[env ${o.env}]`);
    }
  });
});
