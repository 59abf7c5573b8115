import { FACETS } from '../../../core/facet-names.js';
import { terminalSafe } from '../../../core/unsafe-text.js';
import type { WireFacetValue } from '../../../mcp/library.js';
import type { Context } from '../../context.js';
import { printTable } from '../../output/table.js';

/**
 * `--facets [names]` on `search` and `documents list`: the same flag, the same counts (docs/api.md#facets), the same
 * table after the list.
 */
export const facetsFlagHelp = (list: string, after: string): string =>
  `count ${list} by these, comma-separated (${FACETS.join(', ')}, metadata.KEY; alone, all but metadata): a table after ${after}`;

/** The facets a `--facets` flag asks for: alone, every facet but metadata (whose keys only the person knows). */
export const facetsFromFlag = (flag: string | true | undefined): string[] | undefined => (flag === true ? [...FACETS] : flag?.split(',').map((f) => f.trim()).filter(Boolean));

/** One table, a row per facet and value, most frequent first (counts of the whole list, not the page). */
export function printFacets(ctx: Context, facets: Record<string, WireFacetValue[]>): void {
  ctx.io.stdout.write('\n');
  const shownValue = (facet: string, v: WireFacetValue) => terminalSafe(facet === 'project' && v.name ? v.name : v.value === null ? '(none)' : String(v.value));
  printTable(ctx.io, {
    headers: ['FACET', 'VALUE', 'COUNT'],
    rows: Object.entries(facets).flatMap(([facet, values]) => values.map((v) => [facet, shownValue(facet, v), v.count])),
    now: ctx.now(),
  });
}
