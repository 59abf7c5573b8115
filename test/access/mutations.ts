/**
 * The mutation check's mutations (issue 57): four ways to break access that the permission matrix must catch, each
 * a patch to one file of the built daemon (dist/), applied to a copy of it. A patch whose text no longer occurs
 * fails the check: update it with the code it breaks.
 */
import { copyFileSync, cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../helpers/daemon.js';
import type { Principal } from './matrix-table.js';

export interface Mutation {
  name: string;
  /** A file under dist/. */
  file: string;
  find: string;
  replace: string;
  /** The matrix row that must fail, and the cells of it that must. */
  row: string;
  cells: Principal[];
}

export const MUTATIONS: Mutation[] = [
  {
    name: 'a refused change applied before its refusal: PATCH /documents/{id} renames with read access, then refuses',
    file: 'server/api/documents/update.js',
    find: "let { document: doc } = await s.access.document(principal, params.id, 'edit');",
    replace:
      "if (body.filename !== undefined) { const { document: seen } = await s.access.document(principal, params.id, 'read'); await s.ingest.rename(seen, body.filename); }\n" +
      "        let { document: doc } = await s.access.document(principal, params.id, 'edit');",
    row: 'PATCH /api/v1/documents/{id}',
    // The read-only token is refused by the route's scope before the handler runs.
    cells: ['viewer'],
  },
  {
    name: 'a 404 that names the missing project: a project the caller may not read is "not found" by its name',
    file: 'access/access-control.js',
    find: "throw notFound(opts.what ?? 'project');",
    replace: "{ const hidden = await this.deps.projects.get(projectId); throw hidden ? new AppError('not_found', `project \"${hidden.name}\" not found`) : notFound(opts.what ?? 'project'); }",
    row: 'GET /api/v1/projects/{id}',
    cells: ['non-member', 'admin', 'key for another project'],
  },
  {
    name: "a project filter dropped from one list: /documents/status.json answers for every document named",
    file: 'server/web/library-list.js',
    find: "const docs = await s.access.documents(user.actor, ids, 'read');",
    replace: 'const docs = (await s.documents.getMany(ids)).filter(Boolean);',
    row: 'GET /documents/status.json',
    cells: ['non-member', 'admin'],
  },
  {
    name: "a credential's project limit ignored on one route: GET /documents/{id} reads as if the key had no limit",
    file: 'server/api/documents/get.js',
    find: "await s.access.document(principal, params.id, 'read');",
    replace: "await s.access.document({ ...principal, projectLimit: null }, params.id, 'read');",
    row: 'GET /api/v1/documents/{id}',
    cells: ['key for another project'],
  },
];

/**
 * A copy of the built daemon with the mutation applied: bin/ and dist/ beside the package's node_modules (a link).
 * Returns the copy's launcher.
 */
export function mutantBuild(m: Mutation): { bin: string; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'docsearch-mutant-'));
  cpSync(join(REPO, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(REPO, 'bin'), join(root, 'bin'), { recursive: true });
  copyFileSync(join(REPO, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  const file = join(root, 'dist', m.file);
  const text = readFileSync(file, 'utf8');
  const found = text.split(m.find).length - 1;
  if (found !== 1) throw new Error(`the mutation "${m.name}" finds its text ${found} times in dist/${m.file}: update test/access/mutations.ts`);
  writeFileSync(file, text.replace(m.find, () => m.replace));
  return { bin: join(root, 'bin', 'docsearch'), root };
}
