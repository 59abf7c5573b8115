/**
 * Loads for shared mode, used by the e2e test and bench/scale.ts: real small texts, a client that sends each one
 * the way a careful script does (again after a failure in flight), uploads while a replica is killed, and the time
 * for a ready document to be found on the other replicas. No vitest import.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { prose } from '../ingest/pipeline/fixtures.js';
import { waitFor } from '../ingest/pipeline/helpers.js';
import { SHARED } from './daemon.js';
import { sleep } from './eventually.js';
import type { Replica, Topology } from './topology.js';

/** Waits without a bound of their own: the test's timeout or the bench's run applies. */
const HOUR = 3600_000;

export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export interface TextFile {
  name: string;
  bytes: Buffer;
}

/**
 * 1,000 small real texts: SciFact abstracts from ../shared (distinct contents only), or generated prose where
 * ../shared is missing. Each is what `bench:ingest` uploads: `# title`, a blank line, the abstract.
 */
export function corpus(n: number): { files: TextFile[]; source: string } {
  const path = join(SHARED, 'eval/scifact/corpus.jsonl');
  if (!existsSync(path)) {
    return { files: Array.from({ length: n }, (_, i) => ({ name: `prose-${i}.txt`, bytes: Buffer.from(`# Note ${i}\n\n${prose(`note-${i}`, 6)}\n`) })), source: 'generated prose' };
  }
  const seen = new Set<string>();
  const files: TextFile[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line || files.length === n) continue;
    const d = JSON.parse(line) as { _id: string; title: string; text: string };
    const text = `# ${d.title}\n\n${d.text}\n`;
    if (seen.has(text) || d.text.trim() === '') continue;
    seen.add(text);
    files.push({ name: `${d._id}.txt`, bytes: Buffer.from(text) });
  }
  return { files, source: 'SciFact abstracts' };
}

export interface Uploaded {
  id: string;
  sha256: string;
  duplicate: boolean;
  /** Requests it took (a failure in flight is retried, as a CI script would). */
  attempts: number;
}

/**
 * One upload as a careful client sends it: a request that fails in flight (the replica died: haproxy answers
 * 502, or the connection drops) or answers 503 is sent again; anything else that is not 202 is an error.
 */
export async function uploadOne(base: string, token: string, file: TextFile, projectId: string): Promise<Uploaded> {
  for (let attempts = 1; ; attempts++) {
    const form = new FormData();
    form.append('project_id', projectId);
    form.append('file', new Blob([file.bytes]), file.name);
    let status = 0;
    let text = '';
    try {
      const res = await fetch(`${base}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      status = res.status;
      text = await res.text();
    } catch {
      // the connection went with the replica
    }
    if (status === 202) {
      const doc = JSON.parse(text).documents[0] as { id: string; sha256: string; duplicate?: boolean };
      return { id: doc.id, sha256: doc.sha256, duplicate: doc.duplicate === true, attempts };
    }
    if (status !== 0 && status !== 502 && status !== 503 && status !== 504) throw new Error(`upload of ${file.name} answered ${status}: ${text.slice(0, 300)}`);
    if (attempts >= 60) throw new Error(`upload of ${file.name} still failing after ${attempts} attempts (last: ${status})`);
    await sleep(250);
  }
}

/** What a replica's worker writes as lease_owner (its `listening` log line says). */
export function ingestOwner(replica: Replica): string {
  const line = replica.daemon
    .stdout()
    .split('\n')
    .find((l) => l.includes('"msg":"listening"'));
  const leaseOwner = line ? (JSON.parse(line) as { ingest_owner?: string }).ingest_owner : undefined;
  if (!leaseOwner) throw new Error(`replica ${replica.index} did not log its ingest owner`);
  return leaseOwner;
}

/**
 * `clients` uploaders send `files` (one per request) through haproxy while `victim` is killed with SIGKILL once
 * past each fraction of `killAt`, each time while it holds ingest jobs (leases in PostgreSQL), and started again.
 * Returns every upload's answer (by file name) and the ids of the jobs the victim held when it died.
 *
 * Uploads go only as far ahead of the next kill as the killer lets them: on a fast machine all 60 were in and
 * ingested ~6 s after the first kill, so the victim, started again, never held a job for the next kill to catch and
 * the killer waited for one until the test's time ran out. While the killer waits for the victim to hold jobs and
 * none is pending, it lets one more upload through.
 */
export async function uploadWhileKilling(opts: {
  topo: Topology;
  db: pg.Pool;
  token: string;
  projectId: string;
  files: TextFile[];
  victim: Replica;
  killAt: number[];
  clients?: number;
  onKill?: (n: number) => void;
}): Promise<{ results: Map<string, Uploaded>; heldAtKill: number[] }> {
  const { files } = opts;
  const clientCount = opts.clients ?? 4;
  const thresholds = opts.killAt.map((f) => Math.round(f * files.length));
  const results = new Map<string, Uploaded>();
  let next = 0;
  // Up to which upload the clients may go before kill k has happened: a few past its threshold.
  const reach = (k: number) => Math.min(files.length, (thresholds[k] ?? files.length) + clientCount);
  let allowed = reach(0);
  const clients = Array.from({ length: clientCount }, async () => {
    for (let i = next++; i < files.length; i = next++) {
      await waitFor(async () => i < allowed, HOUR, `upload ${i} to be let through`);
      results.set(files[i]!.name, await uploadOne(opts.topo.lb.url, opts.token, files[i]!, opts.projectId));
    }
  });
  const heldAtKill: number[] = [];
  const killer = (async () => {
    for (const [k, threshold] of thresholds.entries()) {
      await waitFor(async () => results.size >= threshold || next >= files.length, HOUR, `${threshold} uploads`);
      const leaseOwner = ingestOwner(opts.victim);
      const held = await waitFor(async () => {
        const { rows } = await opts.db.query<{ id: string }>("SELECT id FROM jobs WHERE state = 'running' AND lease_owner = $1", [leaseOwner]);
        if (rows.length > 0) return rows.map((x) => Number(x.id));
        // Only a pending job can still come to the victim (a running one is another replica's, or a dead one's until its lease expires).
        const { rows: pending } = await opts.db.query<{ n: string }>("SELECT count(*) AS n FROM jobs WHERE state = 'pending'");
        if (Number(pending[0]!.n) === 0) {
          if (allowed < files.length) allowed++;
          else if (results.size >= files.length) return []; // nothing left to hold: killed with empty hands
        }
        return undefined;
      }, HOUR, `replica ${opts.victim.index} to hold ingest jobs`);
      await opts.victim.kill9();
      // Only what was still in its hands when it died: a job it finished between the look and the kill is not.
      const { rows } = await opts.db.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1) AND state = 'running' AND lease_owner = $2", [held, leaseOwner]);
      for (const { id } of rows) if (!heldAtKill.includes(Number(id))) heldAtKill.push(Number(id));
      opts.onKill?.(heldAtKill.length);
      await opts.victim.start();
      allowed = Math.max(allowed, reach(k + 1));
    }
  })();
  await Promise.all([...clients, killer]);
  return { results, heldAtKill };
}

/** Documents of a project by status, once none is queued or processing any more. */
export function settled(db: pg.Pool, projectId: string, total: number, timeoutMs = HOUR): Promise<Record<string, number>> {
  return waitFor(async () => {
    const { rows } = await db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM documents WHERE project_id = $1 GROUP BY status', [projectId]);
    const by = Object.fromEntries(rows.map((x) => [x.status, Number(x.n)]));
    return (by.ready ?? 0) + (by.failed ?? 0) === total ? by : undefined;
  }, timeoutMs, 'every document to settle');
}

/**
 * Uploads a note with a unique word through `writer` (waiting until it is ready), then searches for it on every
 * `reader` until found; returns each reader's delay from the document's `ready_at` (PostgreSQL's clock is this
 * machine's) to the first search that returned it. `limitMs` bounds the wait.
 */
export async function timeToVisible(opts: { db: pg.Pool; token: string; projectId: string; writer: Replica; readers: Replica[]; tag: string; limitMs: number }): Promise<number[]> {
  const word = `zqx${opts.tag}visible${Date.now().toString(36)}`;
  const form = new FormData();
  form.append('project_id', opts.projectId);
  form.append('file', new Blob([`The marker ${word} appears in this note about lighthouse keepers and their lamps.\n`]), `visible-${opts.tag}.txt`);
  const res = await fetch(`${opts.writer.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${opts.token}` }, body: form });
  if (res.status !== 200) throw new Error(`upload with wait answered ${res.status}: ${await res.text()}`);
  const id = ((await res.json()) as { documents: { id: string }[] }).documents[0]!.id;
  const { rows } = await opts.db.query<{ ready_at: string }>('SELECT ready_at FROM documents WHERE id = $1', [id]);
  const readyAt = Number(rows[0]!.ready_at);
  return Promise.all(
    opts.readers.map(async (reader) => {
      for (;;) {
        const found = await fetch(`${reader.url}/api/v1/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: word, limit: 3, project_ids: [opts.projectId] }),
        });
        if (found.status !== 200) throw new Error(`search on replica ${reader.index} answered ${found.status}`);
        if (((await found.json()) as { results: { document: { id: string } }[] }).results.some((x) => x.document.id === id)) return Date.now() - readyAt;
        if (Date.now() - readyAt > opts.limitMs) throw new Error(`replica ${reader.index} did not find a document ${opts.limitMs} ms after it was ready`);
        await sleep(25);
      }
    }),
  );
}
