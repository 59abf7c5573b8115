/**
 * docs/postgresql.md ("What is stored") and docs/migrate.md ("What moves") name every table of a library (issue 61,
 * Low 32: the team tables — groups, members, invitations, second factors, the audit log — were missing, and they do
 * move). The list is the one `migrate` and backup copy (LIBRARY_TABLES), so a new table fails here until both say it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIBRARY_TABLES } from '../../src/store/sql/library-copy.js';
import { REPO } from '../helpers/daemon.js';

/** The text of a markdown file's section, from its heading to the next heading of the same level. */
function section(file: string, heading: string): string {
  const text = readFileSync(join(REPO, file), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${file} has no "## ${heading}" section`);
  const end = text.indexOf('\n## ', start + 4);
  return text.slice(start, end < 0 ? undefined : end);
}

describe('the docs name every table of a library', () => {
  for (const [file, heading] of [
    ['docs/postgresql.md', 'What is stored'],
    ['docs/migrate.md', 'What moves'],
  ] as const) {
    it(`${file}, "${heading}"`, () => {
      const said = section(file, heading);
      expect(LIBRARY_TABLES.map((t) => t.name).filter((name) => !said.includes(`\`${name}\``))).toEqual([]);
    });
  }
});
