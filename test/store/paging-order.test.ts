/**
 * Sorted and paged lists read the same on both engines, page after page: names by their code points with only ASCII
 * case folded (SQLite's lower() and BINARY collation; PostgreSQL's own lower() folds accents and other scripts, and
 * its collation is the database's locale), ids by their bytes (upload order and every tie-break), rows with equal
 * sort keys once each across page boundaries (all made at one clock reading, so their times and ids' time parts are
 * equal), and rows deleted between pages shift nothing. Run on SQLite and on the test cluster's PostgreSQL (C.UTF-8,
 * which orders ids like SQLite); names also on a PostgreSQL database in an ICU en-US collation, as an operator's
 * `createdb` might make one.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { AuditEventStore } from '../../src/store/sql/audit-events.js';
import type { DatabaseHandle } from '../../src/store/sql/database.js';
import { DOCUMENT_SORTS, type DocumentPosition, type DocumentSort, DocumentStore, type TrashPosition } from '../../src/store/sql/documents.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { LabelStore } from '../../src/store/sql/labels.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { SavedSearchStore } from '../../src/store/sql/saved-searches.js';
import { UserStore } from '../../src/store/sql/users.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { describeEachEngine, testCluster } from '../helpers/store-dialects.js';

/** The documented order of names: ASCII case folded, then code points (UTF-8 bytes), then id. */
const byName = <T extends { name: string; id: string }>(rows: T[]): T[] =>
  [...rows].sort((a, b) => Buffer.compare(Buffer.from(a.name.replace(/[A-Z]/g, (c) => c.toLowerCase())), Buffer.from(b.name.replace(/[A-Z]/g, (c) => c.toLowerCase()))) || (a.id < b.id ? -1 : 1));

/** Names whose order tells the engines apart: accented capitals, other scripts, punctuation, capitals. */
const NAMES = ['Éb', 'éa', 'Zeta', 'alpha', 'a_b', 'a-b', 'ab', 'Ωmega', 'ω', 'İ', 'i', 'B'];

/** Every page of a document list, `limit` at a time; `between` runs before each next page. */
async function pages(documents: DocumentStore, project: string, sort: DocumentSort, limit: number, between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let after: DocumentPosition | undefined;
  for (let page = 0; ; page++) {
    const res = await documents.list([project], {}, limit, after, sort);
    seen.push(...res.documents.map((d) => d.id));
    if (!res.next) return seen;
    after = res.next;
    await between?.(page);
  }
}

/** Stores on `handle` with a clock that stands still: every row made at one reading, equal times, ids equal up to their random part. */
async function library(handle: () => DatabaseHandle, email: string) {
  const t = Date.UTC(2031, 0, 1);
  const now = () => t;
  const db = handle().db;
  const documents = new DocumentStore(db, new JobStore(db, now), now);
  const user = (await new UserStore(db, now).create(email, 'h'))!.id;
  const project = (await new ProjectStore(db, now).create(user, { name: 'P' }))!.id;
  const made: { id: string; name: string; size: number }[] = [];
  const add = async (name: string, size: number) => {
    const { document } = await documents.createQueued({ userId: user, projectId: project, filename: name, contentType: 'text/plain', sizeBytes: size, sha256: made.length.toString(16).padStart(64, '0'), metadata: {} });
    made.push({ id: document.id, name, size });
  };
  return { db, now, documents, user, project, made, add };
}

/** What sorts by name reads the same in any database collation (names distinct, so ids never decide). */
function nameChecks(handle: () => DatabaseHandle): void {
  let lib: Awaited<ReturnType<typeof library>>;
  beforeAll(async () => {
    lib = await library(handle, 'names@example.com');
    for (const name of NAMES) await lib.add(`${name}.txt`, 1);
  });

  it('lists documents by name in code point order with ASCII case folded, every page size alike', async () => {
    for (const limit of [1, 2, 100]) {
      expect(await pages(lib.documents, lib.project, 'name', limit), `${limit} a page`).toEqual(byName(lib.made).map((m) => m.id));
      expect(await pages(lib.documents, lib.project, '-name', limit), `${limit} a page`).toEqual(byName(lib.made).map((m) => m.id).reverse());
    }
  });

  it('lists labels, saved searches and groups by name in the same order', async () => {
    const labels = new LabelStore(lib.db, lib.now);
    const searches = new SavedSearchStore(lib.db, lib.now);
    const groups = new GroupStore(lib.db, lib.now);
    const made = { labels: [] as { id: string; name: string }[], searches: [] as { id: string; name: string }[], groups: [] as { id: string; name: string }[] };
    for (const name of NAMES) {
      made.labels.push({ id: (await labels.create(lib.project, name))!.id, name });
      made.searches.push({ id: (await searches.create(lib.user, name, { query: name }, null))!.id, name });
      made.groups.push({ id: (await groups.create(name))!.id, name });
    }
    expect((await labels.list([lib.project])).map((l) => l.id)).toEqual(byName(made.labels).map((l) => l.id));
    // Page by page (the Labels tab, GET /projects/{id}/labels?limit), each after the last label of the one before.
    for (const limit of [1, 5, 100]) {
      const paged: string[] = [];
      for (let page = await labels.page(lib.project, limit); page; page = page.more ? await labels.page(lib.project, limit, paged.at(-1)) : null) paged.push(...page.labels.map((l) => l.id));
      expect(paged, `${limit} a page`).toEqual(byName(made.labels).map((l) => l.id));
    }
    // A document's labels in the same order as its project's, whatever the host's locale.
    await labels.add([lib.made[0]!.id], made.labels.map((l) => l.id));
    expect((await labels.ofDocuments([lib.made[0]!.id])).get(lib.made[0]!.id)!.map((l) => l.id)).toEqual(byName(made.labels).map((l) => l.id));
    expect((await searches.visible(lib.user, [])).map((s) => s.id)).toEqual(byName(made.searches).map((s) => s.id));
    // Group names are not folded: code point order, capitals first.
    expect((await groups.list()).map((g) => g.id)).toEqual([...made.groups].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))).map((g) => g.id));
  });
}

/** Equal sort keys across page boundaries, and rows deleted between pages. */
function pagingChecks(handle: () => DatabaseHandle): void {
  let lib: Awaited<ReturnType<typeof library>>;
  beforeAll(async () => {
    lib = await library(handle, 'pages@example.com');
    // Equal names in other ASCII case, and sizes that repeat.
    for (const [i, name] of ['same.txt', 'SAME.txt', 'Same.txt', 'sAme.txt', 'Éb.txt', 'éa.txt', 'b.txt', 'B.txt', 'a.txt', 'A.txt', 'c.txt'].entries()) await lib.add(name, i % 3);
  });

  const expected: Record<DocumentSort, () => string[]> = {
    uploaded: () => lib.made.map((m) => m.id).sort(),
    '-uploaded': () => lib.made.map((m) => m.id).sort().reverse(),
    name: () => byName(lib.made).map((m) => m.id),
    '-name': () => byName(lib.made).map((m) => m.id).reverse(),
    size: () => [...lib.made].sort((a, b) => a.size - b.size || (a.id < b.id ? -1 : 1)).map((m) => m.id),
    '-size': () => [...lib.made].sort((a, b) => b.size - a.size || (a.id < b.id ? 1 : -1)).map((m) => m.id),
  };

  it('gives every document once, in order, when sort keys are equal across page boundaries', async () => {
    for (const sort of DOCUMENT_SORTS) {
      for (const limit of [1, 2, 3]) expect(await pages(lib.documents, lib.project, sort, limit), `${sort}, ${limit} a page`).toEqual(expected[sort]());
    }
  });

  it('neither skips nor repeats a document when one already listed or one still to come is deleted between pages', async () => {
    for (const sort of ['name', '-uploaded', 'size'] as const) {
      const order = expected[sort]();
      const gone = new Set([order[1]!, order[order.length - 2]!]);
      const seen = await pages(lib.documents, lib.project, sort, 2, async (page) => {
        if (page === 0) for (const id of gone) await lib.documents.trash(id, null);
      });
      expect(seen, sort).toEqual(order.filter((id, i) => i < 2 || !gone.has(id)));
      for (const id of gone) expect((await lib.documents.restore(id)).outcome, sort).toBe('restored');
    }
  });

  it('pages projects in creation order and the audit log newest first, made at one moment, by id', async () => {
    const projects = new ProjectStore(lib.db, lib.now);
    const made = [lib.project];
    for (let i = 0; i < 7; i++) made.push((await projects.create(lib.user, { name: `p${i}` }))!.id);
    const audit = new AuditEventStore(lib.db);
    const events: string[] = [];
    for (let i = 0; i < 8; i++) {
      const id = newId('aud', lib.now());
      await audit.append({ id, at: lib.now(), type: 'project.created', actor_id: null, actor_email: null, via: 'system', credential_id: null, target_type: null, target_id: null, target_label: null, client_ip: null, user_agent: null, request_id: null, details: '{}' });
      events.push(id);
    }
    for (const limit of [1, 3]) {
      const seen: string[] = [];
      for (let page = await projects.listAmong(made, limit); ; page = await projects.listAmong(made, limit, seen.at(-1))) {
        seen.push(...page.projects.map((p) => p.id));
        if (!page.hasMore) break;
      }
      expect(seen, `projects, ${limit} a page`).toEqual([...made].sort());
      const newest: string[] = [];
      for (let page = await audit.list({}, limit); page.length > 0; page = await audit.list({ before: newest.at(-1)! }, limit)) newest.push(...page.map((e) => e.id));
      expect(newest, `audit, ${limit} a page`).toEqual([...events].sort().reverse());
    }
  });

  it('pages the trash newest first, deleted at one moment, by id after that, once each', async () => {
    const ids = lib.made.map((m) => m.id);
    for (const id of ids) await lib.documents.trash(id, null);
    try {
      for (const limit of [1, 4]) {
        const seen: string[] = [];
        let after: TrashPosition | undefined;
        for (;;) {
          const res = await lib.documents.listTrash([lib.project], limit, after);
          seen.push(...res.documents.map((d) => d.id));
          if (!res.next) break;
          after = res.next;
        }
        expect(seen, `${limit} a page`).toEqual([...ids].sort().reverse());
      }
    } finally {
      for (const id of ids) await lib.documents.restore(id);
    }
  });
}

describeEachEngine('paged and sorted lists', ({ handle }) => {
  nameChecks(handle);
  pagingChecks(handle);
});

describe('paged and sorted lists on a PostgreSQL database in an ICU en-US collation', () => {
  const skip = postgresUnavailable();
  if (skip) {
    it.skip(`needs PostgreSQL: ${skip}`, () => undefined);
    return;
  }
  let handle: DatabaseHandle | undefined;
  beforeAll(async () => {
    const cluster = await testCluster();
    const name = `ds_icu_${process.pid}`;
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    try {
      // Where names sort case-blind and punctuation apart, as en_US.UTF-8 databases do.
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    } finally {
      await admin.end();
    }
    const url = new URL(cluster.adminUrl);
    url.pathname = `/${name}`;
    handle = await openPostgres(url.toString());
  });
  afterAll(async () => {
    await handle?.close();
  });
  // Names only: ids keep the database's collation (docs/postgresql.md), so rows made in one millisecond follow it there.
  nameChecks(() => handle!);
});
