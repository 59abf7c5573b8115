import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { describe, expect, it } from 'vitest';

/**
 * docs/DEVELOPING.md's room map is the rule: .dependency-cruiser.mjs encodes it (which room may import which, no
 * circles, no orphans, the packages each store owns), this file runs it on src/ through dependency-cruiser's API
 * (its command refuses Node 20) and checks the map, the config and the folders of src/ name the same rooms.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.mjs');

const roomTable = async (): Promise<Record<string, string[]>> => ((await import(pathToFileURL(CONFIG).href)) as { ROOMS: Record<string, string[]> }).ROOMS;

/** Each violation on one line: the rule, the importing file, the imported one (or the circle's path). */
function violations(result: ICruiseResult): string[] {
  return result.summary.violations.map((v) => {
    const via = v.cycle?.length ? ` (circle: ${v.cycle.map((c) => c.name).join(' → ')})` : '';
    return `${v.rule.name}: ${v.from}${v.from === v.to ? '' : ` → ${v.to}`}${via}`;
  });
}

/** The rows of DEVELOPING.md's room table: `| `src/room/` | purpose | may import |`. */
function roomMap(): Array<{ room: string; purpose: string; imports: string[] }> {
  const doc = readFileSync(join(ROOT, 'docs', 'DEVELOPING.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Rooms'), doc.indexOf('\n## ', doc.indexOf('## Rooms') + 1));
  const rows: Array<{ room: string; purpose: string; imports: string[] }> = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*`src\/([a-z-]+)\/`\s*\|(.*)\|(.*)\|\s*$/.exec(line);
    if (!m) continue;
    const imports = m[3]!.trim();
    rows.push({ room: m[1]!, purpose: m[2]!.trim(), imports: imports === '—' ? [] : imports.split(',').map((s) => s.trim().replace(/`/g, '')) });
  }
  return rows;
}

describe('architecture', () => {
  it('src/ keeps DEVELOPING.md\'s rooms: no import circle, no orphan, no room importing one it may not', async () => {
    const options = { ...(await extractDepcruiseOptions(CONFIG)), baseDir: ROOT };
    const { output } = await cruise(['src'], options, {}, { tsConfig: extractTSConfig(join(ROOT, 'tsconfig.json')) });
    const result = output as ICruiseResult;
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(violations(result)).toEqual([]);
  });

  it('the room map in DEVELOPING.md lists exactly the folders of src/, each with a purpose and the config\'s imports', async () => {
    const ROOMS = await roomTable();
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    const map = roomMap();
    expect(map.map((r) => r.room).sort()).toEqual(folders);
    expect(Object.keys(ROOMS).sort()).toEqual(folders);
    for (const row of map) {
      expect(row.purpose, row.room).not.toBe('');
      expect([...row.imports].sort(), `what src/${row.room}/ may import`).toEqual([...ROOMS[row.room]!].sort());
    }
  });
});
