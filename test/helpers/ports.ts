/**
 * Ports for servers a test starts on a port it names (PostgreSQL, radosgw, haproxy, replicas). Such a port is
 * chosen seconds before the server binds it, so it is taken below the kernel's ephemeral range: there, no
 * `listen(0)` of another test running beside it (every daemon on port 0) and no outgoing connection can take it in
 * between. CI once lost radosgw's port to one, seconds after the OS had handed the port out as free.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { isFetchBlockedPort } from '../../src/core/fetch-blocked-ports.js';

const FLOOR = 10_000;

/** The lowest ephemeral port (Linux's `ip_local_port_range`; 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > FLOOR + 1000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const handedOut = new Set<number>();

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A port free on 127.0.0.1 now, outside the ephemeral range, not handed out (or tried) before by this process, and
 * not one Node's fetch refuses (CI once handed 10080 to radosgw, and its readiness check failed for a whole minute).
 */
export async function freePort(): Promise<number> {
  const span = ephemeralLow() - FLOOR;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FLOOR + Math.floor(Math.random() * span);
    if (handedOut.has(port) || isFetchBlockedPort(port)) continue;
    // Taken before the try, so calls at once (servers started together) cannot both try it and both get it.
    handedOut.add(port);
    if (await listenable(port)) return port;
  }
  throw new Error(`no free port found between ${FLOOR} and ${FLOOR + span}`);
}
