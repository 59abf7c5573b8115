/**
 * A TCP relay on loopback in front of a real server, for the source fault tests: it passes bytes both ways
 * unchanged (HTTP, IMAP, S3 alike: a signed request's Host names the relay, which it is), and can hold a pass midway
 * so that the server can be stopped under it. `holdAfter(bytes)` lets that many more bytes through from the server,
 * then holds the rest: the client waits on an answer cut short, at a point the test chose, however fast the pass.
 * `release()` then ends every connection, as a stopped server's end, and relays freely again. `refuse()` stops
 * listening and ends every connection, so that the client meets what a stopped server leaves: connections cut, new
 * ones refused (not accepted and closed), until `accept()`.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import { freePort } from './ports.js';

export interface FaultProxy {
  /** The relay's port on 127.0.0.1. */
  port: number;
  holdAfter(bytes: number): void;
  /** Whether the relay holds bytes back now. */
  holding(): boolean;
  release(): void;
  refuse(): Promise<void>;
  accept(): Promise<void>;
  close(): Promise<void>;
}

export async function faultProxy(targetPort: number): Promise<FaultProxy> {
  const open = new Set<Socket>();
  let budget = Number.POSITIVE_INFINITY;
  let held = false;
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (held) return;
      if (chunk.length <= budget) {
        budget -= chunk.length;
        client.write(chunk);
        return;
      }
      client.write(chunk.subarray(0, budget));
      budget = 0;
      held = true;
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => (held ? undefined : client.end()));
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', () => (held ? undefined : drop()));
  });
  // Below the ephemeral range (ports.ts): nothing else takes it while the relay does not listen.
  const port = await freePort();
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen();
  return {
    port,
    holdAfter(bytes) {
      budget = bytes;
      held = false;
    },
    holding: () => held,
    release() {
      for (const s of open) s.destroy();
      open.clear();
      budget = Number.POSITIVE_INFINITY;
      held = false;
    },
    refuse: async () => {
      // Not waiting for close's callback: that waits for every connection, and a held one never ends by itself.
      server.close();
      for (const c of open) c.destroy();
      open.clear();
      budget = Number.POSITIVE_INFINITY;
      held = false;
    },
    accept: listen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        if (server.listening) server.close(() => resolve());
        else resolve();
      }),
  };
}
