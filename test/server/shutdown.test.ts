import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { makeNestedFormsPdf } from '../ingest/build-fixtures.js';

/**
 * Graceful shutdown and the data-directory lock (issue #12 items 4, 5 and the shutdown half of 9; issue #15
 * item 11): SIGTERM stops taking requests, finishes what is in flight, hands a document being processed back
 * to the queue without counting an attempt, and exits 0 without a native crash and without a pid file.
 */

const exitOf = (proc: ChildProcess): Promise<number | null> =>
  proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve(proc.exitCode) : new Promise((r) => proc.once('close', (code) => r(code)));

/** What the daemon logs when in-flight requests outlast the shutdown grace (10 s) and are cut (src/server/http-server.ts). */
const GRACE_RAN_OUT = /shutdown grace ran out|after the shutdown grace/;

/** Varied prose, so that every chunk is a different text for the model. */
function prose(bytes: number): string {
  const words = 'index vector search ranking document query model token chunk embedding lexical semantic corpus recall precision score fusion layer shard'.split(' ');
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const out: string[] = [];
  let size = 0;
  while (size < bytes) {
    const sentence = Array.from({ length: 12 }, () => words[next() % words.length]).join(' ') + ` ${next()}.`;
    out.push(sentence);
    size += sentence.length + 1;
  }
  return out.join(' ');
}

async function uploadText(d: Daemon, apiKey: string, name: string, text: string, query = ''): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/plain' }), name);
  const res = await fetch(`${d.url}/api/v1/upload${query}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
  return { status: res.status, body: await res.json() };
}

function jobOf(dataDir: string, documentId: string): { attempts: number; state: string } {
  const db = new BetterSqlite3(join(dataDir, 'docsearch.db'), { readonly: true });
  try {
    return db.prepare('SELECT attempts, state FROM jobs WHERE document_id = ?').get(documentId) as { attempts: number; state: string };
  } finally {
    db.close();
  }
}

describe('graceful shutdown', () => {
  it('keep-alive clients hammering: SIGTERM serves no new request, exits 0 within 5 s and removes the pid file', async () => {
    const d = await startDaemon();
    try {
      const u = await addUser(d);
      let signalSeen = false;
      d.proc.stderr!.on('data', (c: Buffer) => {
        if (c.toString().includes('received SIGTERM')) signalSeen = true;
      });
      const servedAfterSignal: number[] = [];
      let served = 0;
      let stop = false;
      const client = async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        while (!stop) {
          const startedAfterSignal = signalSeen;
          const status = await new Promise<number>((resolve) => {
            const req = httpRequest(`${d.url}/api/v1/projects`, { agent, headers: { authorization: `Bearer ${u.apiKey}` } }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            });
            req.on('error', () => resolve(0));
            req.end();
          });
          if (status !== 0) served++;
          if (startedAfterSignal && status !== 0) servedAfterSignal.push(status);
          if (status === 0) await new Promise((r) => setTimeout(r, 20));
        }
        agent.destroy();
      };
      const clients = Array.from({ length: 8 }, client);
      await expect.poll(() => served, { timeout: 10_000 }).toBeGreaterThan(50);
      d.proc.kill('SIGTERM');
      const code = await exitOf(d.proc);
      stop = true;
      await Promise.all(clients);
      expect(code).toBe(0);
      // The keep-alive connections were closed, not waited out: the grace never ran out.
      expect(d.stdout() + d.stderr()).not.toMatch(GRACE_RAN_OUT);
      expect(servedAfterSignal).toEqual([]);
      expect(existsSync(join(d.dataDir, 'daemon.pid'))).toBe(false);
      expect(d.stderr()).not.toMatch(/Napi::Error|terminate called/);
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  });

  it('a request pipelined behind a waiting upload is not served after the signal; the upload answers 202 at once', async () => {
    const d = await startDaemon();
    try {
      const u = await addUser(d);
      const url = new URL(d.url);
      const text = prose(60_000);
      const body = `--B\r\nContent-Disposition: form-data; name="file"; filename="w.txt"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--B--\r\n`;
      const sock = connect(Number(url.port), url.hostname);
      let received = '';
      sock.on('data', (c: Buffer) => (received += c.toString()));
      const closed = new Promise<void>((r) => sock.on('close', () => r()));
      sock.write(
        `POST /api/v1/upload?wait=true HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${u.apiKey}\r\n` +
          `Content-Type: multipart/form-data; boundary=B\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
          `GET /api/v1/projects HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${u.apiKey}\r\n\r\n`,
      );
      await expect
        .poll(async () => (await api(d, '/api/v1/documents', { token: u.apiKey })).body.documents?.[0]?.status, { timeout: 30_000, interval: 100 })
        .toBe('processing');
      d.proc.kill('SIGTERM');
      await closed;
      expect(await exitOf(d.proc)).toBe(0);
      // The waiting upload was answered at once, not held until the grace ran out.
      expect(d.stdout() + d.stderr()).not.toMatch(GRACE_RAN_OUT);
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      expect(statuses).toEqual([202]);
      expect(received).toMatch(/\r\nconnection: close\r\n/i);
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  }, 120_000);

  it(
    'SIGTERM while a large document is embedded: a waiting upload gets 202, exit 0, the document resumes after restart without a counted attempt',
    async () => {
      const d = await startDaemon();
      let again: Daemon | undefined;
      try {
        const u = await addUser(d);
        const waiting = uploadText(d, u.apiKey, 'large.txt', prose(500_000), '?wait=true&wait_timeout=600');
        let id = '';
        await expect
          .poll(
            async () => {
              const list = await api(d, '/api/v1/documents', { token: u.apiKey });
              const doc = list.body.documents?.[0];
              id = doc?.id ?? '';
              return doc?.status === 'processing' && doc.progress > 0.3;
            },
            { timeout: 60_000, interval: 100 },
          )
          .toBe(true);
        d.proc.kill('SIGTERM');
        const answer = await waiting;
        expect(answer.status).toBe(202);
        expect(answer.body.documents[0].id).toBe(id);
        expect(['queued', 'processing']).toContain(answer.body.documents[0].status);
        expect(await exitOf(d.proc)).toBe(0);
        expect(d.stderr()).not.toMatch(/Napi::Error|terminate called/);
        // Nothing ran into a closed store while stopping (pino level 50 = error).
        expect(d.stdout().split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
        expect(existsSync(join(d.dataDir, 'daemon.pid'))).toBe(false);
        // Handed back, not failed: the claim is not counted.
        expect(jobOf(d.dataDir, id)).toEqual({ attempts: 0, state: 'pending' });

        again = await startDaemon({ dataDir: d.dataDir });
        await expect
          .poll(async () => (await api(again!, `/api/v1/documents/${id}`, { token: u.apiKey })).body.status, { timeout: 240_000, interval: 500 })
          .toBe('ready');
        const ingested = await again.logLine((l) => l.includes('"event":"document.ingested"') && l.includes(`"document_id":"${id}"`));
        expect((JSON.parse(ingested) as { attempts: number }).attempts).toBe(1);
        expect(await again.stop()).toBe(0);
      } finally {
        await again?.stop();
        await d.stop();
        removeDir(d.dataDir);
      }
    },
    400_000,
  );
  it('SIGTERM while OCR draws a page that takes long: the page is cut, exit 0 within 15 s, the document handed back', async () => {
    // A page drawing 2^24 nested squares: OCR draws it for its image until its drawing budget (6.2 s of the thread's
    // processor time) gives it up; before that budget, until the page's limit (120 s). A stop waited for the worker's
    // grace (60 s) before it closed OCR, so a service manager's stop timed out behind one scan.
    const d = await startDaemon();
    try {
      const u = await addUser(d);
      const form = new FormData();
      form.append('file', new Blob([makeNestedFormsPdf(24)], { type: 'application/pdf' }), 'nested-forms.pdf');
      const res = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${u.apiKey}` }, body: form });
      const id = ((await res.json()) as { documents: { id: string }[] }).documents[0]!.id;
      // OCR loads at its first page: the page is being drawn from then on.
      await d.logLine((l) => l.includes('"event":"ocr.loaded"'), 60_000);
      await new Promise((r) => setTimeout(r, 1000));
      const signalled = performance.now();
      d.proc.kill('SIGTERM');
      expect(await exitOf(d.proc)).toBe(0);
      expect(performance.now() - signalled, 'ms from SIGTERM to exit').toBeLessThan(15_000);
      expect(d.stdout().split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
      // Handed back, not failed: read again at the next start.
      expect(jobOf(d.dataDir, id)).toEqual({ attempts: 0, state: 'pending' });
    } finally {
      await d.stop();
      removeDir(d.dataDir);
    }
  }, 120_000);
});

describe('data directory lock', () => {
  it('a stale daemon.pid naming a live process does not block the start; a second daemon is still refused', async () => {
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    const first = await startDaemon();
    const dataDir = first.dataDir;
    try {
      expect(await first.stop()).toBe(0);
      writeFileSync(join(dataDir, 'daemon.pid'), String(sleeper.pid));
      const d = await startDaemon({ dataDir });
      try {
        expect((await api(d, '/api/v1/health')).status).toBe(200);
        await expect(startDaemon({ dataDir })).rejects.toThrow(`another docsearch daemon (pid ${d.proc.pid}) is using ${dataDir}`);
      } finally {
        expect(await d.stop()).toBe(0);
      }
      // kill -9 leaves the pid file, and the lock goes with the process.
      const killed = await startDaemon({ dataDir });
      killed.proc.kill('SIGKILL');
      await exitOf(killed.proc);
      expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(true);
      const next = await startDaemon({ dataDir });
      expect(await next.stop()).toBe(0);
    } finally {
      sleeper.kill();
      removeDir(dataDir);
    }
  }, 120_000);
});
