/**
 * bench:search's shared library (issue 50): one library of `size` chunks (a million by default) spread over 5,000
 * projects of 1,000 users, in which one user — the reader — reads 50 projects: their own 5, 25 shared with them
 * and 20 through two groups. Every other project is shared with two other people and one group, so the membership
 * tables hold what a team instance holds. Written through the product's stores, like bench/search.ts's libraries,
 * and kept under bench/.cache/search/.
 *
 * Measured over HTTP against one daemon, searches alternating between the reader and a user who reads only their
 * own 5 projects (so the machine's drift falls on both alike): p50 and p95 (one client) of each, and their ratio —
 * the target is the reader's p50 ≤ 1.2× the own-library search's. In process: the recall@10/@100 of each one's
 * vector search against an exact scan of their own scope (the readable-project filter runs inside LanceDB).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiKeyService } from '../src/auth/api-keys.js';
import { ChunkIndex } from '../src/store/lancedb/chunks.js';
import type { ChunkRow } from '../src/store/lancedb/chunk-schema.js';
import { VectorStore } from '../src/store/lancedb/connection.js';
import { inList } from '../src/store/lancedb/owned-table.js';
import { ApiKeyStore } from '../src/store/sql/api-keys.js';
import { DocumentStore } from '../src/store/sql/documents.js';
import { GroupStore } from '../src/store/sql/groups.js';
import { JobStore } from '../src/store/sql/jobs.js';
import { ProjectMemberStore } from '../src/store/sql/project-members.js';
import { ProjectStore } from '../src/store/sql/projects.js';
import { openSqlite } from '../src/store/sql/sqlite.js';
import { UserStore } from '../src/store/sql/users.js';
import { api, removeDir, startDaemon, waitPreloaded } from '../test/helpers/daemon.js';
import { percentile } from './ingest-api.js';
import { linkTree } from './library-copy.js';
import { indexWrittenLibrary } from './library-index.js';
import { rng } from './scifact.js';
import { RecordedAudit } from '../test/helpers/audit.js';

const USERS = 1000;
const PROJECTS_PER_USER = 5;
const SHARED_DIRECTLY = 25;
const THROUGH_GROUPS = 20;
/** Groups on the instance; each is given the projects of its `GROUP_SPAN` members' neighbours. */
const GROUPS = 100;
const CHUNKS_PER_DOCUMENT = 10;
const LIBRARY_VERSION = 1;
const log = (m: string) => process.stderr.write(`${m}\n`);

export interface SharedSource {
  text: string;
  embedText: string;
  vector: Float32Array;
}

interface SharedMeta {
  chunks: number;
  reader: { key: string; projects: string[] };
  own: { key: string; projects: string[] };
  writeSeconds: number;
}

export interface SharedResult {
  chunks: number;
  projects: number;
  users: number;
  readerProjects: number;
  readerChunks: number;
  ownChunks: number;
  reader: { p50: number; p95: number; recall10: number; recall100: number };
  own: { p50: number; p95: number; recall10: number; recall100: number };
}

/** Writes the shared library into `dataDir` (its daemon made the schema). */
async function populate(dataDir: string, source: SharedSource[], size: number, embedderId: string, perturb: (v: Float32Array, rand: () => number) => Float32Array): Promise<SharedMeta> {
  const sqlite = await openSqlite(join(dataDir, 'docsearch.db'));
  const now = () => Date.now();
  const users = new UserStore(sqlite.db, now);
  const projects = new ProjectStore(sqlite.db, now);
  const members = new ProjectMemberStore(sqlite.db, now);
  const groups = new GroupStore(sqlite.db, now);
  const jobs = new JobStore(sqlite.db, now);
  const documents = new DocumentStore(sqlite.db, jobs, now);
  const rand = rng(50);
  const t0 = performance.now();
  const userIds: string[] = [];
  const projectIds: string[] = [];
  for (let u = 0; u < USERS; u++) {
    const user = (await users.create(`user${u}@example.com`, '!'))!;
    userIds.push(user.id);
    for (let p = 0; p < PROJECTS_PER_USER; p++) projectIds.push((await projects.create(user.id, { name: `project ${p}` }))!.id);
  }
  const groupIds: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    const group = (await groups.create(`group ${g}`))!;
    groupIds.push(group.id);
    // Ten people a group, by position.
    for (let k = 0; k < 10; k++) await groups.addMember(group.id, userIds[(g * 10 + k) % USERS]!);
  }
  // The reader (user 0): 25 projects of others shared with them directly, 10 each through the two groups they are in.
  const readerGroups = [groupIds[0]!, groupIds[50]!];
  await groups.addMember(readerGroups[1]!, userIds[0]!);
  const others = projectIds.slice(PROJECTS_PER_USER * 2); // not the reader's, nor the own-library user's (user 1)
  const pick = [...others].sort(() => rand() - 0.5);
  const direct = pick.slice(0, SHARED_DIRECTLY);
  const viaGroups = pick.slice(SHARED_DIRECTLY, SHARED_DIRECTLY + THROUGH_GROUPS);
  for (const id of direct) await members.upsert(id, { id: userIds[0]!, kind: 'user' }, 'viewer', null);
  for (const [i, id] of viaGroups.entries()) await members.upsert(id, { id: readerGroups[i % 2]!, kind: 'group' }, i % 3 === 0 ? 'editor' : 'viewer', null);
  // Everyone else's projects are shared too (two people and a group each), never with users 0 and 1 nor their groups.
  const readerSet = new Set([...direct, ...viaGroups]);
  for (const id of others) {
    if (readerSet.has(id)) continue;
    for (let k = 0; k < 2; k++) await members.upsert(id, { id: userIds[2 + Math.floor(rand() * (USERS - 2))]!, kind: 'user' }, 'viewer', null);
    await members.upsert(id, { id: groupIds[1 + Math.floor(rand() * (GROUPS - 1))]!, kind: 'group' }, 'editor', null);
  }
  log(`  ${USERS} users, ${projectIds.length} projects, ${GROUPS} groups, shares written`);

  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId }, { ann: { minRows: Number.POSITIVE_INFINITY } });
  let rows: ChunkRow[] = [];
  const flush = async () => {
    await chunks.add(rows, { id: embedderId, dimension: 384 });
    rows = [];
  };
  let documentId = '';
  let projectId = '';
  let owner = '';
  for (let i = 0; i < size; i++) {
    const s = source[i % source.length]!;
    if (i % CHUNKS_PER_DOCUMENT === 0) {
      // Documents go round the projects, so each project's rows lie all over the table, as a year of uploads leaves them.
      const doc = i / CHUNKS_PER_DOCUMENT;
      projectId = projectIds[doc % projectIds.length]!;
      owner = userIds[Math.floor((doc % projectIds.length) / PROJECTS_PER_USER)]!;
      const { document } = await documents.createQueued({ userId: owner, projectId, filename: `doc-${doc}.txt`, contentType: 'text/plain', sizeBytes: s.text.length, sha256: `shared-${doc}`, metadata: {} });
      documentId = document.id;
      const job = (await jobs.claim('bench', 60_000))!;
      await documents.markReady(job.documentId, job, { chunkCount: CHUNKS_PER_DOCUMENT, pages: null, warnings: [], embedderId });
    }
    const copy = Math.floor(i / source.length);
    rows.push({
      id: `${documentId}:${i % CHUNKS_PER_DOCUMENT}`,
      user_id: owner,
      project_id: projectId,
      document_id: documentId,
      chunk_index: i % CHUNKS_PER_DOCUMENT,
      text: copy === 0 ? s.text : `${s.text} [copy ${copy}]`,
      search_text: copy === 0 ? s.embedText : `${s.embedText} [copy ${copy}]`,
      heading: null,
      page_start: null,
      page_end: null,
      vector: copy === 0 ? s.vector : perturb(s.vector, rand),
    });
    if (rows.length >= 5000) await flush();
    if ((i + 1) % 100_000 === 0) log(`  ${i + 1} rows written`);
  }
  await flush();
  const writeSeconds = (performance.now() - t0) / 1000;
  await indexWrittenLibrary(store, chunks, embedderId, log);
  const keys = new ApiKeyService(new ApiKeyStore(sqlite.db, now), now, new RecordedAudit());
  const readerKey = (await keys.issue(userIds[0]!, 'bench reader')).key;
  const ownKey = (await keys.issue(userIds[1]!, 'bench own')).key;
  const readerProjects = [...projectIds.slice(0, PROJECTS_PER_USER), ...direct, ...viaGroups];
  await sqlite.close();
  return { chunks: size, reader: { key: readerKey, projects: readerProjects }, own: { key: ownKey, projects: projectIds.slice(PROJECTS_PER_USER, PROJECTS_PER_USER * 2) }, writeSeconds };
}

/** The recall of each scope's vector search against an exact scan of the same scope, over the queries. */
async function recall(dataDir: string, embedderId: string, scope: string[], vectors: Float32Array[]): Promise<{ recall10: number; recall100: number }> {
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const chunks = await ChunkIndex.open(store, { embedderId });
  const db = store.connection;
  const table = await db.openTable(chunks.indexInfo()!.table);
  let hits10 = 0;
  let hits100 = 0;
  for (const v of vectors) {
    const exact = ((await table.vectorSearch(v).distanceType('cosine').where(inList('project_id', scope)).bypassVectorIndex().select(['id']).limit(100).toArray()) as { id: string }[]).map((r) => r.id);
    const ann = (await chunks.vectorSearch({ projectIds: scope, vector: v, limit: 100 })).map((h) => h.id);
    const [top10, top100] = [new Set(ann.slice(0, 10)), new Set(ann)];
    hits10 += exact.slice(0, 10).filter((id) => top10.has(id)).length;
    hits100 += exact.filter((id) => top100.has(id)).length;
  }
  table.close();
  await chunks.close();
  store.close();
  return { recall10: hits10 / (10 * vectors.length), recall100: hits100 / (100 * vectors.length) };
}

/** Builds (once) and measures the shared library. */
export async function runShared(
  libraries: string,
  size: number,
  source: SharedSource[],
  embedderId: string,
  queries: { text: string; vector: Float32Array }[],
  perturb: (v: Float32Array, rand: () => number) => Float32Array,
): Promise<SharedResult> {
  const dir = join(libraries, `shared-${size}-v${LIBRARY_VERSION}`);
  if (!existsSync(join(dir, 'meta.json'))) {
    mkdirSync(libraries, { recursive: true });
    const staging = mkdtempSync(join(libraries, '.building-shared-'));
    const dataDir = join(staging, 'data');
    const d = await startDaemon({ dataDir, args: ['--log-level', 'warn'], timeoutMs: 120_000 });
    await d.stop();
    log(`building the shared ${size.toLocaleString('en')}-chunk library in ${dir}`);
    const meta = await populate(dataDir, source, size, embedderId, perturb);
    writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2));
    renameSync(staging, dir);
  }
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as SharedMeta;
  const dataDir = mkdtempSync(join(libraries, '.run-shared-'));
  try {
    linkTree(join(dir, 'data'), dataDir);
    log('shared library: recall of each scope against an exact scan');
    const vectors = queries.slice(0, 100).map((q) => q.vector);
    const readerRecall = await recall(dataDir, embedderId, meta.reader.projects, vectors);
    const ownRecall = await recall(dataDir, embedderId, meta.own.projects, vectors);
    log(JSON.stringify({ readerRecall, ownRecall }));
    const d = await startDaemon({ dataDir, args: ['--log-level', 'warn'], timeoutMs: 120_000 });
    try {
      await waitPreloaded(d);
      const scopeChunks = async (key: string) =>
        ((await api(d, '/api/v1/projects?limit=100', { token: key })).body.projects as { chunk_count: number }[]).reduce((a, p) => a + p.chunk_count, 0);
      const [readerChunks, ownChunks] = [await scopeChunks(meta.reader.key), await scopeChunks(meta.own.key)];
      // Warm-up, then each query asked by both, alternating who goes first; every query new to the daemon.
      const texts = queries.map((q) => q.text);
      for (const q of texts.slice(280, 300)) for (const key of [meta.reader.key, meta.own.key]) await api(d, '/api/v1/search', { token: key, body: { query: `${q} warm`, limit: 10 } });
      const lat = { reader: [] as number[], own: [] as number[] };
      for (const [i, q] of texts.slice(0, 280).entries()) {
        const order = i % 2 ? (['reader', 'own'] as const) : (['own', 'reader'] as const);
        for (const who of order) {
          const t = performance.now();
          const res = await api(d, '/api/v1/search', { token: meta[who].key, body: { query: `${q} (${who})`, limit: 10 } });
          if (res.status !== 200) throw new Error(`search failed: ${res.status} ${JSON.stringify(res.body)}`);
          lat[who].push(performance.now() - t);
        }
      }
      return {
        chunks: size,
        projects: USERS * PROJECTS_PER_USER,
        users: USERS,
        readerProjects: meta.reader.projects.length,
        readerChunks,
        ownChunks,
        reader: { p50: percentile(lat.reader, 50), p95: percentile(lat.reader, 95), ...readerRecall },
        own: { p50: percentile(lat.own, 50), p95: percentile(lat.own, 95), ...ownRecall },
      };
    } finally {
      await d.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}
