/**
 * The library of the upgrade fixtures (test/fixtures/upgrade/): who and what a release's daemon is given
 * (`populate`, run against the release by scripts/make-upgrade-fixture.sh), and what is asked of it afterwards
 * (`observe`: projects, documents and a fixed set of searches through the REST API), asked the same way of the
 * release and of today's daemon opening its library (test/store/upgrade-from-release.test.ts). Only REST calls
 * every release since 0.1.0 answers. No vitest import: the fixture script runs it outside vitest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { arch } from 'node:os';
import { basename, join } from 'node:path';
import { REPO } from './daemon.js';

export interface FixtureUser {
  email: string;
  password: string;
  apiKey: string;
}

/** A document a user uploads: the file (relative to the repository), and the project (null: the default one). */
interface Upload {
  file: string;
  project: string | null;
}

/** Two users, so that the searches also show that each sees only their own documents after the upgrade. */
export const LIBRARY: { email: string; projects: { name: string; description: string }[]; uploads: Upload[] }[] = [
  {
    email: 'alice@example.com',
    projects: [{ name: 'Handbook', description: 'staff rules' }],
    uploads: [
      { file: 'test/fixtures/extract/latex-1col.pdf', project: null },
      { file: 'test/fixtures/upgrade/documents/handbook.docx', project: 'Handbook' },
      { file: 'test/fixtures/ocr/scan-source.txt', project: 'Handbook' },
    ],
  },
  {
    email: 'bob@example.com',
    projects: [],
    // The same text as alice's PDF: her searches must not find his copy, nor his hers.
    uploads: [{ file: 'test/fixtures/extract/truth.txt', project: null }],
  },
];

export const PASSWORD = 'correct horse battery staple';

/** The CPU features ONNX Runtime picks the built-in model's kernels by (int8 and float matrix products, activations). */
const KERNEL_FLAGS = new Set([
  ...['sse4_1', 'sse4_2', 'avx', 'avx2', 'fma', 'f16c', 'avx512f', 'avx512bw', 'avx512dq', 'avx512vl', 'avx512_vnni', 'avx_vnni', 'avx512_bf16', 'avx512_fp16'],
  ...['amx_tile', 'amx_int8', 'amx_bf16', 'asimd', 'asimddp', 'i8mm', 'sve', 'sve2', 'bf16', 'fphp', 'asimdhp'],
]);

/**
 * What decides how this machine computes a query's vector: its architecture and the CPU features among those the
 * model's kernels are chosen by. Two machines that agree embed a query to the same bits; others may round it
 * differently (docs/operations.md, "How it is tested"). A fixture records it (`machine.json`).
 */
export function modelKernels(): string {
  const info = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = /^(?:flags|Features)\s*:(.*)$/m.exec(info)?.[1]?.trim().split(/\s+/) ?? ['unknown'];
  return [arch(), ...flags.filter((f) => KERNEL_FLAGS.has(f) || f === 'unknown').sort()].join(' ');
}

/** The CPU's name, for people reading a fixture. */
export const cpuName = (): string => /^model name\s*:(.*)$/m.exec(existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1]?.trim() ?? arch();

/** The searches asked of each user: `project` narrows to one of theirs by name. */
const SEARCHES: { user: number; body: Record<string, unknown>; project?: string }[] = [
  { user: 0, body: { query: 'freedom to share and change free software', limit: 5 } },
  { user: 0, body: { query: 'how many days of paid annual leave', limit: 5 } },
  { user: 0, body: { query: 'lighthouse keeper logbook', limit: 3, mode: 'keyword' } },
  { user: 0, body: { query: 'hotel and dinner expense limits', limit: 4, mode: 'vector' } },
  { user: 0, body: { query: 'report a lost laptop', limit: 3, rerank: false }, project: 'Handbook' },
  { user: 1, body: { query: 'freedom to share and change free software', limit: 5 } },
  { user: 1, body: { query: 'paid annual leave', limit: 5 } },
];

/** fetch with an API key; throws on an unexpected status. */
export async function call(base: string, token: string, path: string, init: { method?: string; body?: unknown; form?: FormData } = {}, expect = 200): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let body: string | FormData | undefined = init.form;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const method = init.method ?? (body ? 'POST' : 'GET');
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Uploads one file into a project and waits until it is ready. */
export async function uploadReady(base: string, token: string, name: string, bytes: Buffer, projectId: string): Promise<{ id: string }> {
  const form = new FormData();
  form.append('project_id', projectId);
  form.append('file', new Blob([bytes]), name);
  const { documents } = await call(base, token, '/api/v1/upload?wait=true', { form });
  const doc = documents[0] as { id: string; status: string };
  if (doc.status !== 'ready') throw new Error(`${name} is ${doc.status} after the upload's wait`);
  return doc;
}

async function projectIds(base: string, token: string): Promise<Map<string | null, string>> {
  const { projects } = await call(base, token, '/api/v1/projects?limit=100');
  return new Map((projects as { id: string; name: string; is_default: boolean }[]).map((p) => [p.is_default ? null : p.name, p.id]));
}

/**
 * Gives a daemon the library: `addUser(email)` makes an account with an API key through that release's own
 * operator command; projects and documents go through the REST API, each document waited for until ready.
 */
export async function populate(base: string, addUser: (email: string) => Promise<string>): Promise<FixtureUser[]> {
  const users: FixtureUser[] = [];
  for (const spec of LIBRARY) {
    const apiKey = await addUser(spec.email);
    users.push({ email: spec.email, password: PASSWORD, apiKey });
    for (const p of spec.projects) await call(base, apiKey, '/api/v1/projects', { body: p }, 201);
    const ids = await projectIds(base, apiKey);
    for (const u of spec.uploads) await uploadReady(base, apiKey, basename(u.file), readFileSync(join(REPO, u.file)), ids.get(u.project)!);
  }
  return users;
}

export interface SearchRecord {
  user: string;
  body: Record<string, unknown>;
  results: Record<string, unknown>[];
}

export interface Observed {
  projects: Record<string, Record<string, unknown>[]>;
  documents: Record<string, Record<string, unknown>[]>;
  searches: SearchRecord[];
}

/** What a user's projects and documents are, field by field, less what a later release may add or refresh. */
const PROJECT_FIELDS = ['id', 'name', 'description', 'metadata', 'document_count', 'chunk_count', 'size_bytes', 'created_at'];
const DOCUMENT_FIELDS = ['id', 'filename', 'content_type', 'size_bytes', 'sha256', 'project_id', 'status', 'chunk_count', 'pages', 'created_at'];
const pick = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

/** Asks the daemon at `base` what the fixture records: every user's projects, documents, and the searches. */
export async function observe(base: string, users: FixtureUser[]): Promise<Observed> {
  const out: Observed = { projects: {}, documents: {}, searches: [] };
  for (const user of users) {
    const { projects } = await call(base, user.apiKey, '/api/v1/projects?limit=100');
    out.projects[user.email] = (projects as Record<string, unknown>[]).map((p) => pick(p, PROJECT_FIELDS));
    const { documents } = await call(base, user.apiKey, '/api/v1/documents?limit=100');
    out.documents[user.email] = (documents as Record<string, unknown>[]).map((d) => pick(d, DOCUMENT_FIELDS)).sort((a, b) => String(a.id).localeCompare(String(b.id)));
  }
  for (const s of SEARCHES) {
    const user = users[s.user]!;
    const body = { ...s.body, ...(s.project ? { project_ids: [(await projectIds(base, user.apiKey)).get(s.project)!] } : {}) };
    const { results } = await call(base, user.apiKey, '/api/v1/search', { body });
    out.searches.push({ user: user.email, body, results });
  }
  return out;
}
