/**
 * A library for the filter tests: documents of several formats, uploaded at two moments by three people into
 * projects shared in different ways, with labels, paths and metadata — and an exact evaluation of any filter
 * (core/filters.ts) over the documents a given person may read, which every surface's answer is compared with.
 *
 * Every document holds the word "harbour", so a keyword search for it matches the whole library: a filtered
 * search must then answer exactly the readable documents the filter keeps.
 */
import { expect } from 'vitest';
import { TYPE_FILTER_NAMES } from '../../src/core/document-types.js';
import { makeDocx, makePdf, para } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { addUser, api, type Daemon, type TestUser } from './daemon.js';
import { rng } from './rng.js';

export type Person = 'alice' | 'bob' | 'carol' | 'eve';
type ProjectKey = 'shared' | 'private' | 'carols' | 'eves';

export interface DocSpec {
  name: string;
  type: string;
  bytes: Buffer;
  by: Person;
  project: ProjectKey;
  labels: string[];
  metadata: Record<string, unknown>;
  path: string | null;
  /** Uploaded in the first or second batch (uploaded_since / uploaded_before split them). */
  batch: 1 | 2;
  /** The language its text is written in: what the daemon must detect, and what the `language` filter is checked against. */
  language: string;
}

export interface LibraryDoc extends DocSpec {
  id: string;
  projectId: string;
  createdAt: number;
}

const text = (title: string, extra: string) =>
  `${title}\n\nThe harbour master keeps the ledger of ships. ${extra} Every vessel reports to the harbour office on arrival.`;

function file(name: string, type: string, title: string, extra: string): { name: string; type: string; bytes: Buffer } {
  const body = text(title, extra);
  switch (type) {
    case 'pdf':
      return { name, type, bytes: makePdf([[{ lines: body.split('\n').filter(Boolean) }]], { title }) };
    case 'docx':
      return { name, type, bytes: makeDocx(body.split('\n').filter(Boolean).map((p) => para(p)).join('')) };
    case 'markdown':
      return { name, type, bytes: Buffer.from(`# ${title}\n\n${body}\n`) };
    case 'html':
      return { name, type, bytes: Buffer.from(`<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`) };
    case 'csv':
      return { name, type, bytes: Buffer.from(`topic,note\n${title},"${body.replaceAll('\n', ' ')}"\n`) };
    case 'eml':
      return {
        name,
        type,
        bytes: Buffer.from(
          `From: Harbour Office <office@example.com>\r\nTo: crew@example.com\r\nSubject: ${title}\r\nDate: Tue, 4 Mar 2025 10:00:00 +0000\r\nMessage-ID: <${name}@example.com>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`,
        ),
      };
    default:
      return { name, type: 'txt', bytes: Buffer.from(body) };
  }
}

/** The documents: every field varies, and several documents share each value a filter can take. */
export function librarySpecs(): DocSpec[] {
  const d = (name: string, type: string, by: Person, project: ProjectKey, batch: 1 | 2, labels: string[], metadata: Record<string, unknown>, path: string | null): DocSpec => ({
    ...file(name, type, `${name} notes`, `Entry ${name} for the ${project} records.`),
    by,
    project,
    labels,
    metadata,
    path,
    batch,
    language: 'en',
  });
  return [
    d('tide-table.pdf', 'pdf', 'alice', 'shared', 1, ['unpaid'], { team: 'ops', year: 2019, date: '2024-06-01' }, 'contracts/2024/tide-table.pdf'),
    d('berth-plan.docx', 'docx', 'alice', 'shared', 1, ['unpaid', 'urgent'], { team: 'dev', year: 2020, tags: ['x', 'y'] }, 'contracts/2025/berth-plan.docx'),
    d('crane-manual.md', 'markdown', 'bob', 'shared', 1, [], { team: 'ops', year: 2021, nested: { level: 'deep' } }, 'manuals/crane-manual.md'),
    d('fees.csv', 'csv', 'bob', 'shared', 2, ['urgent'], { year: '2021', date: '2025-02-10T08:00:00Z' }, null),
    d('notice.html', 'html', 'alice', 'private', 2, ['unpaid'], { team: 'ops', tags: 'x' }, 'contracts/2025/notice.html'),
    d('log.txt', 'txt', 'alice', 'private', 1, [], { year: 2022 }, null),
    d('pilot-mail.eml', 'eml', 'bob', 'shared', 2, ['Paid'], { team: 'legal', year: 2023 }, 'mail/pilot-mail.eml'),
    d('carol-report.pdf', 'pdf', 'carol', 'carols', 1, ['unpaid'], { team: 'ops', year: 2020 }, 'contracts/2024/carol-report.pdf'),
    d('carol-list.txt', 'txt', 'carol', 'carols', 2, ['urgent', 'paid'], { team: 'dev', date: '2023-12-31' }, null),
    d('eve-secret.pdf', 'pdf', 'eve', 'eves', 1, ['unpaid', 'urgent'], { team: 'ops', year: 2020 }, 'contracts/2025/eve-secret.pdf'),
    d('eve-memo.txt', 'txt', 'eve', 'eves', 2, ['paid'], { team: 'dev', year: 2021 }, 'contracts/2024/eve-memo.txt'),
    // Two in other languages, which name the harbour office as the others do (the searches ask for "harbour").
    {
      ...d('hafenordnung.txt', 'txt', 'bob', 'shared', 2, ['urgent'], { team: 'ops', year: 2024 }, 'manuals/hafenordnung.txt'),
      bytes: Buffer.from(
        'Hafenordnung\n\nDer Hafenmeister führt das Verzeichnis aller Schiffe, die im Hafen anlegen. Jedes Schiff meldet sich bei der Ankunft ' +
          'im Hafenbüro, dem Harbour Office, und zahlt dort die Liegegebühren. Die Liegeplätze werden am Morgen vergeben, und die Lotsen ' +
          'begleiten große Schiffe durch die enge Einfahrt.\n',
      ),
      language: 'de',
    },
    {
      ...d('capitainerie.md', 'markdown', 'alice', 'private', 1, [], { team: 'legal' }, null),
      bytes: Buffer.from(
        '# Règlement de la capitainerie\n\nLe maître de port tient le registre des navires qui accostent dans le port. Chaque navire se ' +
          "présente à son arrivée au bureau du port, le Harbour Office, et y paie les droits de quai. Les places sont attribuées le matin, et " +
          'les pilotes accompagnent les grands navires dans le chenal étroit.\n',
      ),
      language: 'fr',
    },
  ];
}

export interface Library {
  users: Record<Person, TestUser>;
  projects: Record<ProjectKey, string>;
  docs: LibraryDoc[];
  /** A moment between the two batches. */
  between: string;
}

/** Projects each person reads: alice owns shared (bob edits, carol views) and private; carol and eve own theirs. */
const READS: Record<Person, ProjectKey[]> = { alice: ['shared', 'private'], bob: ['shared'], carol: ['shared', 'carols'], eve: ['eves'] };

export async function buildLibrary(d: Daemon, specs: DocSpec[] = librarySpecs()): Promise<Library> {
  const users = { alice: await addUser(d), bob: await addUser(d), carol: await addUser(d), eve: await addUser(d) };
  const project = async (who: Person, name: string) => (await api(d, '/api/v1/projects', { token: users[who].apiKey, body: { name } })).body.id as string;
  const projects = { shared: await project('alice', 'shared'), private: await project('alice', 'private'), carols: await project('carol', 'carols'), eves: await project('eve', 'eves') };
  for (const [who, role] of [
    ['bob', 'editor'],
    ['carol', 'viewer'],
  ] as const) {
    const res = await api(d, `/api/v1/projects/${projects.shared}/members`, { token: users.alice.apiKey, body: { email: users[who].email, role } });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  }
  const docs: LibraryDoc[] = [];
  let between = '';
  for (const batch of [1, 2] as const) {
    if (batch === 2) {
      // A moment strictly between the batches, to the millisecond.
      await new Promise((r) => setTimeout(r, 5));
      between = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const spec of specs.filter((s) => s.batch === batch)) {
      const res = await uploadFiles(d, users[spec.by].apiKey, [{ name: spec.name, bytes: spec.bytes }], {
        projectId: projects[spec.project],
        metadata: JSON.stringify(spec.metadata),
        query: '?wait=true',
        fields: { ...(spec.labels.length ? { labels: spec.labels.join(',') } : {}), ...(spec.path ? { paths: JSON.stringify([spec.path]) } : {}) },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const doc = res.body.documents[0];
      expect(doc.status, JSON.stringify(doc)).toBe('ready');
      // The language filter and facet are checked against the language the text is written in, not the daemon's word.
      expect(doc.language, spec.name).toBe(spec.language);
      docs.push({ ...spec, id: doc.id, projectId: doc.project_id, createdAt: Date.parse(doc.created_at) });
    }
  }
  return { users, projects, docs, between };
}

type Scalar = string | number | boolean | null;

/** The values a document's metadata holds at a dotted key (arrays: each of their values), or undefined when absent. */
function valuesAt(metadata: Record<string, unknown>, key: string): Scalar[] | undefined {
  let v: unknown = metadata;
  for (const part of key.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    if (!(part in (v as object))) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return (Array.isArray(v) ? v : [v]) as Scalar[];
}

const asList = <T>(v: T | T[] | undefined): T[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

const DATE = /^\d{4}-\d{2}-\d{2}/;
const momentOf = (s: string) => Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s);

/** Whether a metadata condition holds of a document, evaluated directly on its metadata object. */
function metadataHolds(metadata: Record<string, unknown>, key: string, c: unknown): boolean {
  const values = valuesAt(metadata, key);
  if (c === null || typeof c !== 'object') return (values ?? []).some((v) => v === c);
  const ops = c as Record<string, unknown>;
  if (ops.$exists !== undefined && (values !== undefined) !== ops.$exists) return false;
  if (ops.$eq !== undefined && !(values ?? []).some((v) => v === ops.$eq)) return false;
  if (ops.$in !== undefined && !(values ?? []).some((v) => (ops.$in as Scalar[]).includes(v))) return false;
  const bounds = (['$gt', '$gte', '$lt', '$lte'] as const).filter((op) => ops[op] !== undefined);
  if (bounds.length > 0) {
    const byNumber = typeof ops[bounds[0]!] === 'number';
    const comparable = (values ?? []).flatMap((v) => (byNumber ? (typeof v === 'number' ? [v] : []) : typeof v === 'string' && DATE.test(v) ? [momentOf(v)] : []));
    const at = (b: unknown) => (byNumber ? (b as number) : momentOf(b as string));
    // A day as an upper bound of "at or before" / lower of "after" is the whole day (docs/api.md#filters).
    const end = (b: unknown) => (byNumber || (b as string).length > 10 ? at(b) : at(b) + 86_399_999);
    const inRange = (x: number) =>
      (ops.$gt === undefined || x > end(ops.$gt)) && (ops.$gte === undefined || x >= at(ops.$gte)) && (ops.$lt === undefined || x < at(ops.$lt)) && (ops.$lte === undefined || x <= end(ops.$lte));
    if (!comparable.some(inRange)) return false;
  }
  return true;
}

/** The exact answer: the documents `who` may read that match every field of `filters`. */
export function expected(lib: Library, who: Person, filters: Record<string, unknown>): LibraryDoc[] {
  const readable = new Set(READS[who].map((p) => lib.projects[p]));
  const emails: Record<string, Person> = Object.fromEntries(Object.entries(lib.users).map(([p, u]) => [u.email.toLowerCase(), p as Person]));
  return lib.docs.filter((doc) => {
    if (!readable.has(doc.projectId)) return false;
    const types = asList(filters.type as string | string[] | undefined);
    if (types && !types.some((t) => TYPE_FILTER_NAMES[t.toLowerCase()] === TYPE_FILTER_NAMES[doc.type])) return false;
    if (filters.uploaded_since !== undefined && doc.createdAt < momentOf(filters.uploaded_since as string)) return false;
    if (filters.uploaded_before !== undefined && doc.createdAt >= momentOf(filters.uploaded_before as string)) return false;
    if (filters.path_prefix !== undefined && !(doc.path ?? '').startsWith(filters.path_prefix as string)) return false;
    if (doc.path === null && filters.path_prefix !== undefined) return false;
    const by = asList(filters.uploaded_by as string | string[] | undefined);
    if (by && !by.some((e) => emails[e.toLowerCase()] === doc.by)) return false;
    const labels = asList(filters.labels as string | string[] | undefined);
    if (labels && !labels.every((l) => doc.labels.some((x) => x.toLowerCase() === l.toLowerCase()))) return false;
    const languages = asList(filters.language as string | string[] | undefined);
    if (languages && !languages.some((l) => l.toLowerCase() === doc.language)) return false;
    for (const [key, c] of Object.entries((filters.metadata as Record<string, unknown>) ?? {})) if (!metadataHolds(doc.metadata, key, c)) return false;
    return true;
  });
}

/** Single filters over every field and operator; `emails` names the people. */
export function singleFilters(lib: Library): Record<string, unknown>[] {
  const e = (p: Person) => lib.users[p].email;
  return [
    { type: 'pdf' },
    { type: ['markdown', 'html'] },
    { type: 'EML' },
    { type: 'md' },
    { uploaded_since: lib.between },
    { uploaded_before: lib.between },
    { path_prefix: 'contracts/' },
    { path_prefix: 'contracts/2025/' },
    { uploaded_by: e('bob') },
    { uploaded_by: [e('alice').toUpperCase(), e('carol')] },
    { labels: 'unpaid' },
    { labels: ['unpaid', 'urgent'] },
    { labels: 'PAID' },
    { labels: 'nonexistent' },
    { metadata: { team: 'ops' } },
    { metadata: { team: { $in: ['ops', 'legal'] } } },
    { metadata: { year: { $gte: 2020 } } },
    { metadata: { year: { $gte: 2020, $lte: 2021 } } },
    { metadata: { year: { $gt: 2020 } } },
    { metadata: { year: { $lt: 2021 } } },
    { metadata: { year: '2021' } },
    { metadata: { year: 2021 } },
    { metadata: { date: { $gte: '2025-01-01' } } },
    { metadata: { date: { $lt: '2024-12-31T23:59:59Z' } } },
    { metadata: { tags: 'x' } },
    { metadata: { tags: { $eq: 'y' } } },
    { metadata: { team: { $exists: true } } },
    { metadata: { team: { $exists: false } } },
    { metadata: { 'nested.level': 'deep' } },
    { metadata: { nested: { $exists: true } } },
    { language: 'en' },
    { language: 'de' },
    { language: ['DE', 'fr'] },
  ];
}

/** Combinations of two or three single filters (different fields), chosen by a seeded generator. */
export function combinedFilters(lib: Library, n: number, seed = 60): Record<string, unknown>[] {
  const singles = singleFilters(lib);
  const random = rng(seed);
  const out: Record<string, unknown>[] = [];
  while (out.length < n) {
    const k = 2 + Math.floor(random() * 2);
    const combo: Record<string, unknown> = {};
    for (let i = 0; i < k; i++) {
      const f = singles[Math.floor(random() * singles.length)]!;
      for (const [field, value] of Object.entries(f)) {
        if (field === 'metadata') combo.metadata = { ...(combo.metadata as object), ...(value as object) };
        else combo[field] ??= value;
      }
    }
    out.push(combo);
  }
  return out;
}

/** Exact facet counts over documents (grouped search): per facet, value → documents. */
export function expectedFacets(lib: Library, docs: LibraryDoc[]): Record<string, Record<string, number>> {
  const count = (values: (d: LibraryDoc) => string[]) => {
    const out: Record<string, number> = {};
    for (const doc of docs) for (const v of new Set(values(doc))) out[v] = (out[v] ?? 0) + 1;
    return out;
  };
  return {
    type: count((d) => [d.type]),
    project: count((d) => [d.projectId]),
    uploaded_by: count((d) => [lib.users[d.by].email]),
    year: count((d) => [String(new Date(d.createdAt).getUTCFullYear())]),
    label: count((d) => [...new Set(d.labels.map((l) => l.toLowerCase()))]),
    language: count((d) => [d.language]),
    'metadata.team': count((d) => (valuesAt(d.metadata, 'team') ?? []).map((v) => JSON.stringify(v))),
  };
}
