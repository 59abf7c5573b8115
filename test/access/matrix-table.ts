/**
 * docs/permissions.md's tables, read as data: each operation's expected outcome per principal. The permission
 * matrix test runs every cell; the table is the specification, not a copy of it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/daemon.js';

export const PRINCIPALS = ['owner', 'editor', 'viewer', 'group member', 'non-member', 'admin', 'disabled', 'key for another project', 'read-only token'] as const;
export type Principal = (typeof PRINCIPALS)[number];

/** `✓` allowed, `∅` answered without the project, `401`/`403`/`404` refused so, `—` not applicable. */
export type Outcome = '✓' | '∅' | '401' | '403' | '404' | '—';
const OUTCOMES: readonly Outcome[] = ['✓', '∅', '401', '403', '404', '—'];

export type Surface = 'REST API' | 'Web pages and forms' | 'MCP';

export interface Row {
  surface: Surface;
  /** As the table names it: `GET /api/v1/projects/{id}`, `POST /projects/:id/edit`, `tool search`. */
  operation: string;
  expected: Record<Principal, Outcome>;
}

const doc = () => readFileSync(join(REPO, 'docs/permissions.md'), 'utf8');

/** The routes docs/permissions.md names under "Routes without a row", as `METHOD /path`. */
export function readUnrowed(): string[] {
  const section = doc().split('### Routes without a row')[1]?.split(/\n### /)[0];
  if (!section) throw new Error('docs/permissions.md: no "Routes without a row" section');
  return [...section.matchAll(/^\| `([A-Z]+ [^`]+)` \|/gm)].map((m) => m[1]!);
}

export function readMatrix(): Row[] {
  const text = doc();
  const rows: Row[] = [];
  let surface: Surface | null = null;
  for (const line of text.split('\n')) {
    const heading = /^### (.+)$/.exec(line);
    if (heading) surface = (['REST API', 'Web pages and forms', 'MCP'] as const).find((s) => s === heading[1]) ?? null;
    if (!surface || !line.startsWith('| `')) continue;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== PRINCIPALS.length + 1) throw new Error(`docs/permissions.md: a row of ${cells.length} cells: ${line}`);
    const operation = cells[0]!.replace(/^`|`$/g, '');
    const expected = {} as Record<Principal, Outcome>;
    PRINCIPALS.forEach((p, i) => {
      const cell = cells[i + 1] as Outcome;
      if (!OUTCOMES.includes(cell)) throw new Error(`docs/permissions.md: "${cell}" in ${operation} / ${p}`);
      expected[p] = cell;
    });
    rows.push({ surface, operation, expected });
  }
  return rows;
}
