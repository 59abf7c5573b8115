/**
 * An idle keep-alive connection outlives the ones proxies and clients keep (docs/operations.md, Behind a reverse
 * proxy): a request sent on a connection the daemon is closing at that instant is lost unanswered, and a POST is never
 * retried. With Node's 5 s default, a search sent on a connection idle for 5 s got no answer ("fetch failed").
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type Daemon, REPO } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

/** The next whole answer on a kept connection (its body has a Content-Length). */
function nextAnswer(socket: Socket): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString();
      const split = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, split))?.[1]);
      if (split < 0 || Buffer.byteLength(text.slice(split + 4)) < length) return;
      done();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), head: text.slice(0, split) });
    };
    const onClose = () => {
      done();
      reject(new Error(`the daemon closed the connection without answering${text ? `: ${text.slice(0, 80)}` : ''}`));
    };
    const done = () => socket.off('data', onData).off('close', onClose);
    socket.on('data', onData).on('close', onClose);
  });
}

describe('an idle keep-alive connection', () => {
  let d: Daemon;
  daemonForSuite((started) => void (d = started));

  it('is kept for the 65 s docs/operations.md gives, so a POST sent after 6 idle seconds is answered on it', async () => {
    expect(readFileSync(`${REPO}/docs/operations.md`, 'utf8').replace(/\s+/g, ' ')).toContain('keeps an idle keep-alive connection open for 65 seconds');
    const { hostname, port } = new URL(d.url);
    const socket = connect(Number(port), hostname);
    try {
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const first = nextAnswer(socket);
      socket.write(`GET /api/v1/health HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      const health = await first;
      expect(health.status).toBe(200);
      expect(health.head).toMatch(/\r\nkeep-alive: timeout=65(\r\n|$)/i);
      await sleep(6000);
      const second = nextAnswer(socket);
      const body = JSON.stringify({ query: 'roman aqueducts' });
      socket.write(`POST /api/v1/search HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      expect((await second).status).toBe(401); // answered on the same connection: no credential sent
    } finally {
      socket.destroy();
    }
  }, 20_000);
});
