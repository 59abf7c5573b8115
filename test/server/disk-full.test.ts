/**
 * A full disk (issue #12 item 2) on a real, small tmpfs data directory: uploads answer 507
 * `insufficient_storage`, the ingest worker waits (health degraded) and resumes by itself once space
 * returns, jobs are not charged an attempt, and the daemon starts on a disk that is still full.
 * Mounting needs root: the suite is skipped otherwise, with the reason.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, startDaemon, type TestUser } from '../helpers/daemon.js';
import { fillDisk, mountTmpfs, unmount } from '../helpers/fill-disk.js';
import { waitFor } from '../helpers/eventually.js';

const MOUNT_MB = 64;
/** Uploads queued before the disk fills: enough that some are still waiting when it does. */
const DOCS = 24;

const mnt = mkdtempSync(join(tmpdir(), 'docsearch-diskfull-'));
const skipReason = mountTmpfs(mnt, MOUNT_MB);
if (skipReason) {
  rmSync(mnt, { recursive: true, force: true });
  console.warn(`disk-full tests skipped: ${skipReason}`);
}

const filler = join(mnt, 'filler');

const freeDisk = () => rmSync(filler, { force: true });

const ABSTRACTS = (() => {
  const path = join(import.meta.dirname, '../../../shared/eval/scifact/corpus.jsonl');
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(0, 60)
      .map((l) => JSON.parse(l) as { title: string; text: string })
      .map((d) => `${d.title}\n\n${d.text}\n`);
  } catch {
    // Without the eval set, generated prose of similar length will do.
    return Array.from({ length: 60 }, (_, i) => `Document ${i}\n\n${'The quick brown fox jumps over the lazy dog. '.repeat(40 + i)}\n`);
  }
})();

async function upload(d: Daemon, key: string, name: string, text: string, wait = false): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/plain' }), name);
  const res = await fetch(`${d.url}/api/v1/upload${wait ? '?wait=true' : ''}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json() };
}

async function statuses(d: Daemon, key: string): Promise<string[]> {
  const res = await api(d, '/api/v1/documents?limit=100', { token: key });
  return (res.body.documents as { status: string }[]).map((x) => x.status);
}

/** Passages the daemon has embedded since it started (/metrics). */
async function embeddedTexts(d: Daemon): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  return Number(/^docsearch_embedded_texts_total\{kind="passage"\} (\d+)$/m.exec(text)?.[1] ?? 'NaN');
}

describe.skipIf(skipReason !== null)('a full disk', () => {
  const dataDir = join(mnt, 'data');
  let daemon: Daemon;
  let user: TestUser;

  beforeAll(async () => {
    daemon = await startDaemon({ dataDir });
    user = await addUser(daemon);
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    try {
      unmount(mnt);
    } finally {
      rmSync(mnt, { recursive: true, force: true });
    }
  });

  it('answers an upload with 507 insufficient_storage, small or cut off mid-file, and stays up', async () => {
    fillDisk(filler);
    try {
      const small = await upload(daemon, user.apiKey, 'small.txt', ABSTRACTS[0]!);
      expect(small.status).toBe(507);
      expect(small.body.error.code).toBe('insufficient_storage');
      expect(small.body.error.message).toMatch(/out of disk space/);
      freeDisk();
      fillDisk(filler, 512 * 1024);
      const big = await upload(daemon, user.apiKey, 'big.txt', 'lorem ipsum dolor sit amet '.repeat(150_000));
      expect(big.status).toBe(507);
      expect(big.body.error.code).toBe('insufficient_storage');
      const health = await api(daemon, '/api/v1/health');
      expect(health.status).toBe(503);
      expect(health.body.components.storage.status).toBe('down');
      expect(daemon.proc.exitCode).toBeNull();
      // Both uploads' temp files are gone with them (docs/RELIABILITY.md).
      await waitFor(() => (readdirSync(join(dataDir, 'files', 'tmp')).length === 0 ? true : undefined), 5_000, 'the temp files removed', { intervalMs: 100 });
    } finally {
      freeDisk();
    }
    const ok = await upload(daemon, user.apiKey, 'after.txt', ABSTRACTS[1]!, true);
    expect(ok.status).toBe(200);
    expect(ok.body.documents[0].status).toBe('ready');
    expect((await api(daemon, '/api/v1/health')).status).toBe(200);
  }, 120_000);

  it('pauses ingestion while the disk is full and resumes by itself within 30 s of space returning, charging no attempt', async () => {
    const before = (await statuses(daemon, user.apiKey)).length;
    for (let i = 2; i < 2 + DOCS; i++) expect((await upload(daemon, user.apiKey, `doc-${i}.txt`, ABSTRACTS[i % ABSTRACTS.length]!)).status).toBe(202);
    fillDisk(filler);
    let waiting: number;
    try {
      const health = await waitFor(async () => {
        const h = await api(daemon, '/api/v1/health');
        return h.status === 503 ? h : undefined;
      }, 10_000, 'health to report the full disk', { intervalMs: 250 });
      expect(health.body.components.storage.status).toBe('down');
      await new Promise((r) => setTimeout(r, 4000)); // the worker meets the full disk and backs off
      // While the disk stays as full, nothing is taken up again only to fail at the disk: no text is embedded again.
      const embedded0 = await embeddedTexts(daemon);
      await new Promise((r) => setTimeout(r, 10_000));
      expect(await embeddedTexts(daemon), 'texts embedded again while the disk stayed full').toBe(embedded0);
      expect(daemon.proc.exitCode).toBeNull();
      const st = await statuses(daemon, user.apiKey);
      expect(st.filter((s) => s === 'failed')).toEqual([]);
      waiting = st.filter((s) => s !== 'ready').length;
      expect(waiting, 'every upload was ingested before the disk filled: nothing was tested').toBeGreaterThan(0);
    } finally {
      freeDisk();
    }
    // Resumed: the next document is ready within 30 s; the rest follow at the machine's ingest speed.
    const readyAtFree = (await statuses(daemon, user.apiKey)).filter((s) => s === 'ready').length;
    await waitFor(async () => (await statuses(daemon, user.apiKey)).filter((s) => s === 'ready').length > readyAtFree, 30_000, 'ingestion to resume', { intervalMs: 250 });
    await waitFor(async () => {
      const st = await statuses(daemon, user.apiKey);
      return st.length === before + DOCS && st.every((s) => s === 'ready') ? true : undefined;
    }, 120_000, 'every document to be ready', { intervalMs: 250 });
    await waitFor(async () => ((await api(daemon, '/api/v1/health')).status === 200 ? true : undefined), 10_000, 'health to recover', { intervalMs: 250 });
    const db = new BetterSqlite3(join(dataDir, 'docsearch.db'), { readonly: true });
    try {
      const charged = db.prepare('SELECT attempts, COUNT(*) AS n FROM jobs GROUP BY attempts').all();
      expect(charged).toEqual([{ attempts: 1, n: before + DOCS }]);
    } finally {
      db.close();
    }
    await daemon.logLine('"event":"ingest.disk_full"');
    // The episode ends with the first job through, and says so (docs/RELIABILITY.md).
    await daemon.logLine('"event":"ingest.disk_space_back"');
  }, 180_000);

  it('starts on a disk that is still full, reports degraded, and recovers once space returns', async () => {
    expect(await daemon.stop()).toBe(0);
    fillDisk(filler);
    try {
      daemon = await startDaemon({ dataDir });
      const health = await api(daemon, '/api/v1/health');
      expect(health.status).toBe(503);
      expect(health.body.components.storage.status).toBe('down');
      expect(health.body.components.database.status).toBe('up');
    } finally {
      freeDisk();
    }
    await waitFor(async () => ((await api(daemon, '/api/v1/health')).status === 200 ? true : undefined), 30_000, 'health to recover', { intervalMs: 250 });
    const ok = await upload(daemon, user.apiKey, 'after-restart.txt', ABSTRACTS[50]!, true);
    expect(ok.status).toBe(200);
    expect(ok.body.documents[0].status).toBe('ready');
  }, 120_000);
});
