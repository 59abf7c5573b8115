/**
 * docs/configuration.md's "Data directory layout": the names it lists at the top of a data directory, for the tests
 * that hold it to what daemons, backups and replicas leave there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './daemon.js';

export function documentedDataDir(): { name: string; what: string }[] {
  const text = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8');
  const table = text.slice(text.indexOf('## Data directory layout'));
  const out: { name: string; what: string }[] = [];
  for (const [, path, what] of table.matchAll(/^\| (`[^|]+) \| ([^|]+) \|$/gm)) {
    const names = [...path!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const base = names[0]!.replace(/\/$/, '');
    // `docsearch.db` (+ `-wal`, `-shm`): suffixes of the first name.
    for (const n of names) out.push({ name: n.startsWith('-') ? `${base}${n}` : n.replace(/\/$/, ''), what: what!.trim() });
  }
  return out;
}
