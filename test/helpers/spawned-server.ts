/**
 * A server process a test starts (Apache, Dovecot): spawned in a process group of its own (Apache's prefork signals
 * its whole group when it stops, which would otherwise be the test run's), waited for until its ports accept
 * connections, stopped with SIGTERM, its temp dir removed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { sleep } from './eventually.js';

export interface SpawnedServer {
  proc: ChildProcess;
  /** SIGTERM, wait for the exit, remove `dir`. */
  stop(): Promise<void>;
  /** SIGTERM and wait for the exit, keeping `dir`: the server is gone (connections refused) until `resume()`. */
  halt(): Promise<void>;
  /** Starts it again as it was started, on the same ports, and waits until they accept. */
  resume(): Promise<void>;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** Starts `bin` and waits (up to 20 s) until every port of `ports` on 127.0.0.1 accepts; `log` is shown if it does not. */
export async function spawnServer(name: string, bin: string, args: string[], opts: { dir: string; ports: number[]; log: string }): Promise<SpawnedServer> {
  let proc: ChildProcess;
  let stderr = '';
  const halt = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
  };
  const stop = async () => {
    await halt();
    rmSync(opts.dir, { recursive: true, force: true });
  };
  const launch = async () => {
    proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if ((await Promise.all(opts.ports.map(portOpen))).every(Boolean)) return;
      if (proc.exitCode !== null || Date.now() > deadline) {
        const log = existsSync(opts.log) ? readFileSync(opts.log, 'utf8') : '';
        await stop();
        throw new Error(`${name} did not start: ${stderr}\n${log}`);
      }
      await sleep(50);
    }
  };
  await launch();
  return {
    get proc() {
      return proc;
    },
    stop,
    halt,
    async resume() {
      if (proc.exitCode === null && proc.signalCode === null) throw new Error(`${name} is running`);
      await launch();
    },
  };
}
