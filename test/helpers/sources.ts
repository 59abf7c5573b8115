/**
 * Sources through the REST API, for the tests of every kind: add one, wait for its passes, read its documents, and
 * the acceptance every kind must pass (issue 54): added → searchable; one item changed → exactly that document
 * replaced (same id); one deleted → removed; all deleted → paused, nothing removed, the reason shown; bad credentials
 * → a clear error on the source, the project untouched.
 */
import { expect } from 'vitest';
import { api, type Daemon } from './daemon.js';
import { waitFor } from './eventually.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

export interface SourceWire {
  id: string;
  status: 'active' | 'syncing' | 'paused' | 'error';
  paused_reason: string | null;
  last_sync: string | null;
  last_result: { listed: number; added: number; changed: number; deleted: number; unchanged: number; failed: number; deferred: number } | null;
  error?: string;
  item_errors?: { count: number; items: { path: string; error: string }[] };
  [k: string]: unknown;
}

export interface DocWire {
  id: string;
  filename: string;
  status: string;
  sha256: string;
  source_id: string | null;
  source_path: string | null;
  updated_at: string;
}

export class SourceClient {
  constructor(
    readonly daemon: Pick<Daemon, 'url'>,
    readonly token: string,
  ) {}

  async project(name: string): Promise<string> {
    const res = await api(this.daemon as Daemon, '/api/v1/projects', { token: this.token, body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  }

  async add(projectId: string, body: Record<string, unknown>): Promise<SourceWire> {
    const res = await api(this.daemon as Daemon, `/api/v1/projects/${projectId}/sources`, { token: this.token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as SourceWire;
  }

  async get(projectId: string, id: string): Promise<SourceWire> {
    const res = await api(this.daemon as Daemon, `/api/v1/projects/${projectId}/sources/${id}`, { token: this.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as SourceWire;
  }

  /** Asks for a pass now (confirming deletions with `confirm`) and waits until one has finished after the request. */
  async sync(projectId: string, id: string, opts: { confirm?: boolean; timeoutMs?: number } = {}): Promise<SourceWire> {
    const before = Date.now();
    const res = await api(this.daemon as Daemon, `/api/v1/projects/${projectId}/sources/${id}/sync`, { token: this.token, body: opts.confirm ? { confirm: true } : {} });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // The request itself moves `updated_at`: a source in error would look like a pass that failed after it. Only a
    // write after the request's own counts.
    const requested = Date.parse(String(res.body.updated_at));
    expect(requested, 'the sync answer carries updated_at').not.toBeNaN();
    return this.passAfter(projectId, id, Math.max(before, requested + 1), opts.timeoutMs);
  }

  /** Waits until a pass has ended (finished, paused or failed) after `since` (epoch ms) and the source is idle. */
  async passAfter(projectId: string, id: string, since: number, timeoutMs = 60_000): Promise<SourceWire> {
    let seen: SourceWire | undefined;
    try {
      return await waitFor(
        async () => {
          const s = (seen = await this.get(projectId, id));
          // A source the guard holds deletions of still runs passes (their end is last_sync); one paused by its owner does not.
          const stopped = s.status === 'error' || (s.status === 'paused' && !s.held_deletions);
          const ended = Math.max(Date.parse(s.last_sync ?? '') || 0, stopped ? Date.parse(String(s.updated_at)) : 0);
          return s.status !== 'syncing' && ended > 0 && ended >= since ? s : undefined;
        },
        timeoutMs,
        `a pass of source ${id} after ${new Date(since).toISOString()}`,
      );
    } catch (err) {
      // The source as last seen says which way it was stuck (a CI log keeps only its tail).
      throw new Error(`${(err as Error).message}; the source was last ${JSON.stringify(seen)}`);
    }
  }

  /** The project's documents that came from the source, by source path. */
  async documents(projectId: string, sourceId: string): Promise<Map<string, DocWire>> {
    const docs = (await this.allDocuments(projectId)).filter((d) => d.source_id === sourceId);
    return new Map(docs.map((d) => [d.source_path!, d]));
  }

  /** Every document of the project, page after page. */
  async allDocuments(projectId: string): Promise<DocWire[]> {
    const all: DocWire[] = [];
    let cursor = '';
    do {
      const res = await api(this.daemon as Daemon, `/api/v1/documents?project_id=${projectId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: this.token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      all.push(...(res.body.documents as DocWire[]));
      cursor = res.body.next_cursor ?? '';
    } while (cursor);
    return all;
  }

  /** Waits until every document of the source is ready (or failed) and returns them. */
  async settled(projectId: string, sourceId: string, count: number, timeoutMs = 120_000): Promise<Map<string, DocWire>> {
    return waitFor(
      async () => {
        const docs = await this.documents(projectId, sourceId);
        return docs.size === count && [...docs.values()].every((d) => d.status === 'ready' || d.status === 'failed') ? docs : undefined;
      },
      timeoutMs,
      `${count} settled documents of source ${sourceId}`,
    );
  }

  /** The filenames a keyword search in the project finds for `query`. */
  async found(projectId: string, query: string): Promise<string[]> {
    const res = await api(this.daemon as Daemon, '/api/v1/search', { token: this.token, body: { query, project_ids: [projectId], mode: 'keyword', rerank: false, limit: 20 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename);
  }
}

/** What a kind's test does at its source (files, objects, pages, messages), for the acceptance below. */
export interface KindFixture {
  /** Three items named alpha, beta, gamma whose texts hold the words `alphaword`, `betaword`, `gammaword`. */
  seed(): Promise<void>;
  /** beta's text becomes one holding `changedword` instead. */
  change(): Promise<void>;
  /** gamma goes. */
  removeOne(): Promise<void>;
  /** Everything goes. */
  removeAll(): Promise<void>;
  /** The source's add request (kind, url, options), with good credentials. */
  body(): Record<string, unknown>;
  /** The same with wrong credentials (undefined: the kind has none). */
  badBody?(): Record<string, unknown>;
  /** The word the error of a bad-credentials pass says (e.g. "credentials"). */
  badWord?: string;
  /** The document names the three items get, by item: alpha, beta, gamma. */
  names: [string, string, string];
  /** The kind lists only what changed since the last pass (git): unchanged items are not even listed. */
  delta?: boolean;
}

/** The issue's acceptance for one kind, through the API only; one project per call. */
export async function kindAcceptance(client: SourceClient, name: string, fx: KindFixture): Promise<void> {
  const [alpha, beta, gamma] = fx.names;
  const unchanged = (n: number) => (fx.delta ? 0 : n);
  const project = await client.project(`${name} source`);
  await fx.seed();
  const source = await client.add(project, { ...fx.body(), every: '1h' });
  const first = await client.passAfter(project, source.id, 0);
  expect(first.error, 'first pass').toBeUndefined();
  expect(first.last_result).toMatchObject({ added: 3, failed: 0 });
  const docs = await client.settled(project, source.id, 3);
  expect([...docs.values()].map((d) => d.filename).sort()).toEqual([alpha, beta, gamma].sort());
  expect([...docs.values()].every((d) => d.status === 'ready')).toBe(true);
  expect(await client.found(project, 'alphaword')).toEqual([alpha]);
  expect(await client.found(project, 'betaword')).toEqual([beta]);
  expect(await client.found(project, 'gammaword')).toEqual([gamma]);

  // An unchanged pass fetches nothing and changes nothing.
  const still = await client.sync(project, source.id);
  expect(still.last_result).toMatchObject({ added: 0, changed: 0, deleted: 0, unchanged: unchanged(3) });

  // One item changed: exactly its document is replaced, in place (same id), the others untouched.
  const before = await client.documents(project, source.id);
  await fx.change();
  const changed = await client.sync(project, source.id);
  expect(changed.last_result).toMatchObject({ added: 0, changed: 1, deleted: 0, unchanged: unchanged(2) });
  const after = await client.settled(project, source.id, 3);
  const byName = (m: Map<string, DocWire>, n: string) => [...m.values()].find((d) => d.filename === n)!;
  expect(byName(after, beta).id).toBe(byName(before, beta).id);
  expect(byName(after, beta).sha256).not.toBe(byName(before, beta).sha256);
  for (const n of [alpha, gamma]) expect(byName(after, n)).toEqual(byName(before, n));
  await waitFor(async () => (await client.found(project, 'changedword')).length === 1, 60_000, 'the changed text searchable');
  expect(await client.found(project, 'changedword')).toEqual([beta]);
  expect(await client.found(project, 'betaword')).toEqual([]);

  // One deleted: its document is removed.
  await fx.removeOne();
  const removed = await client.sync(project, source.id);
  expect(removed.last_result).toMatchObject({ deleted: 1, unchanged: unchanged(2) });
  expect([...(await client.documents(project, source.id)).values()].map((d) => d.filename).sort()).toEqual([alpha, beta].sort());
  expect(await client.found(project, 'gammaword')).toEqual([]);

  // All deleted: the source pauses, nothing is removed, and says why.
  await fx.removeAll();
  const paused = await client.sync(project, source.id);
  expect(paused.status).toBe('paused');
  expect(paused.paused_reason).toMatch(/no longer lists any of its 2 documents/);
  expect((await client.documents(project, source.id)).size).toBe(2);
  expect(await client.found(project, 'alphaword')).toEqual([alpha]);

  if (fx.badBody) {
    // Bad credentials: a clear error on the source, and the project untouched — it holds an upload, which stays as
    // it was. (A source whose credentials stop working once it holds documents: test/sources/source-faults.test.ts.)
    const other = await client.project(`${name} bad credentials`);
    const upload = await uploadFiles(client.daemon as Daemon, client.token, [{ name: 'kept.txt', bytes: Buffer.from('An upload beside the source.\n') }], { projectId: other, query: '?wait=true' });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    const held = await client.allDocuments(other);
    expect(held.map((x) => x.filename)).toEqual(['kept.txt']);
    await fx.seed();
    const bad = await client.add(other, { ...fx.badBody(), every: '1h' });
    const failed = await client.passAfter(other, bad.id, 0);
    expect(failed.status).toBe('error');
    expect(failed.error).toMatch(new RegExp(fx.badWord ?? 'credentials'));
    expect(await client.allDocuments(other)).toEqual(held);
  }
}
