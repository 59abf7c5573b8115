import type { TrashEntry } from '../../api-types.js';
import { CliError } from '../../../terminal/errors.js';

/**
 * The trash entries that ids, paths or file names mean: each must name exactly one (a name two entries share is
 * refused, listing them), and every miss is named together before anything is done.
 */
export function pickEntries(entries: TrashEntry[], refs: string[]): TrashEntry[] {
  const missing: string[] = [];
  const out: TrashEntry[] = [];
  for (const ref of new Set(refs)) {
    const byId = entries.find((e) => e.id === ref);
    // Either Unicode spelling (core/name-spellings.ts): paths are kept as sent, decomposed from a Mac.
    const spelled = ref.normalize('NFC');
    const named = byId ? [byId] : entries.filter((e) => e.path?.normalize('NFC') === spelled || e.filename.normalize('NFC') === spelled);
    if (named.length === 0) missing.push(ref);
    else if (named.length > 1) {
      const list = named.map((e) => `  ${e.id}  ${e.path ?? e.filename}  deleted ${e.trashed_at}`).join('\n');
      throw new CliError(`${named.length} documents in the trash are named "${ref}":\n${list}`, undefined, 'name one by its id');
    } else out.push(named[0]!);
  }
  if (missing.length > 0) {
    throw new CliError(`not in the trash: ${missing.map((r) => `"${r}"`).join(', ')}`, undefined, 'see what the trash holds with `docsearch trash list`');
  }
  return out;
}
